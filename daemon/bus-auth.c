/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "bus-auth.h"
#include "log.h"
#include "macro.h"

#define POLKIT_NAME "org.freedesktop.PolicyKit1"
#define POLKIT_PATH "/org/freedesktop/PolicyKit1/Authority"
#define POLKIT_INTERFACE "org.freedesktop.PolicyKit1.Authority"
/* CheckAuthorizationFlags.AllowUserInteraction */
#define POLKIT_ALLOW_USER_INTERACTION 1u
/* Requests waiting for polkit at once, in all and per caller: each holds
 * its message (up to a few KiB) for up to polkit's 25 s, so a caller
 * flooding the daemon with unauthorized calls must not grow it without
 * bound, nor crowd out the others. A person at an agent asks one at a
 * time; a script asking many is refused with LimitsExceeded, to retry. */
#define AUTH_PENDING_MAX 64
#define AUTH_PENDING_PER_SENDER_MAX 8

/* A request waiting for polkit, then its answer until the handler ran. */
struct auth_query {
	struct bus_auth *a;
	sd_bus_message *msg;
	char *action;
	sd_bus_message_handler_t handler;
	void *userdata;
	sd_bus_slot *slot;
	bool done;
	bool allowed;
	sd_bus_error denied;
	struct auth_query *next;
};

struct bus_auth {
	sd_bus *bus;
	struct auth_query *queries;
	unsigned n_pending;		/* queries still waiting for polkit */
};

int bus_auth_new(struct bus_auth **ret, sd_bus *bus)
{
	struct bus_auth *a = calloc(1, sizeof(*a));

	if (!a)
		return -ENOMEM;
	a->bus = sd_bus_ref(bus);
	*ret = a;
	return 0;
}

static void query_free(struct auth_query *q)
{
	struct auth_query **p;

	for (p = &q->a->queries; *p && *p != q; p = &(*p)->next)
		;
	if (*p)
		*p = q->next;
	if (!q->done)
		q->a->n_pending--;
	sd_bus_slot_unref(q->slot);
	sd_bus_message_unref(q->msg);
	sd_bus_error_free(&q->denied);
	free(q->action);
	free(q);
}

struct bus_auth *bus_auth_free(struct bus_auth *a)
{
	if (!a)
		return NULL;
	while (a->queries)
		query_free(a->queries);
	sd_bus_unref(a->bus);
	free(a);
	return NULL;
}

static int deny(sd_bus_error *error, const char *action, const char *why)
{
	return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
				 "Changing kyber-tuned's settings needs root or polkit authorization for %s%s%s",
				 action, why ? ": " : "", why ? why : "");
}

static bool polkit_missing(const sd_bus_error *e)
{
	return sd_bus_error_has_names(e, SD_BUS_ERROR_SERVICE_UNKNOWN, SD_BUS_ERROR_NAME_HAS_NO_OWNER) ||
	       (e->name && strncmp(e->name, "org.freedesktop.DBus.Error.Spawn.", 33) == 0);
}

/* polkit's answer: (bba{ss}) is_authorized, is_challenge, details. */
static void query_conclude(struct auth_query *q, sd_bus_message *reply)
{
	const sd_bus_error *e = sd_bus_message_get_error(reply);
	int authorized = 0, challenge = 0, r;

	if (e) {
		if (polkit_missing(e))
			deny(&q->denied, q->action, "polkit is not running");
		else {
			log_warning("Failed to check %s with polkit: %s", q->action, e->message ?: e->name);
			sd_bus_error_setf(&q->denied, SD_BUS_ERROR_ACCESS_DENIED,
					  "Changing kyber-tuned's settings needs root or polkit authorization "
					  "for %s; asking polkit failed: %s", q->action, e->message ?: e->name);
		}
		return;
	}
	r = sd_bus_message_enter_container(reply, 'r', "bba{ss}");
	if (r >= 0)
		r = sd_bus_message_read(reply, "bb", &authorized, &challenge);
	if (r < 0) {
		log_warning_errno(r, "Failed to parse polkit's answer for %s: %m", q->action);
		deny(&q->denied, q->action, "polkit's answer was unreadable");
		return;
	}
	if (authorized)
		q->allowed = true;
	else if (challenge)
		sd_bus_error_setf(&q->denied, SD_BUS_ERROR_INTERACTIVE_AUTHORIZATION_REQUIRED,
				  "Changing kyber-tuned's settings needs root or polkit authorization for %s: "
				  "interactive authentication required", q->action);
	else
		deny(&q->denied, q->action, "polkit denied it");
}

static int on_polkit_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
	sd_bus_error error = SD_BUS_ERROR_NULL;
	struct auth_query *q = userdata;
	int r;

	q->slot = sd_bus_slot_unref(q->slot);
	query_conclude(q, reply);
	q->done = true;
	q->a->n_pending--;

	/* Run the method again: it finds the answer and acts or fails. */
	r = sd_bus_message_rewind(q->msg, true);
	if (r >= 0)
		r = q->handler(q->msg, q->userdata, &error);
	if (sd_bus_error_is_set(&error))
		(void)sd_bus_reply_method_error(q->msg, &error);
	else if (r < 0)
		(void)sd_bus_reply_method_errno(q->msg, r, NULL);
	sd_bus_error_free(&error);
	query_free(q);
	return 0;
}

static unsigned pending_from(const struct bus_auth *a, const char *sender)
{
	unsigned n = 0;

	for (const struct auth_query *q = a->queries; q; q = q->next) {
		const char *s = sd_bus_message_get_sender(q->msg);

		n += !q->done && s && strcmp(s, sender) == 0;
	}
	return n;
}

static int ask_polkit(struct bus_auth *a, sd_bus_message *msg, const char *action,
		      sd_bus_message_handler_t handler, void *userdata, sd_bus_error *error)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL;
	const char *sender = sd_bus_message_get_sender(msg);
	struct auth_query *q;
	uint32_t flags = 0;
	int r;

	if (!sender)
		return deny(error, action, "the caller has no bus name");
	if (a->n_pending >= AUTH_PENDING_MAX || pending_from(a, sender) >= AUTH_PENDING_PER_SENDER_MAX)
		return sd_bus_error_setf(error, SD_BUS_ERROR_LIMITS_EXCEEDED,
					 "Too many requests waiting for polkit%s; try again later",
					 a->n_pending >= AUTH_PENDING_MAX ? "" : " from this caller");
	if (sd_bus_message_get_allow_interactive_authorization(msg) > 0)
		flags |= POLKIT_ALLOW_USER_INTERACTION;
	r = sd_bus_message_new_method_call(a->bus, &call, POLKIT_NAME, POLKIT_PATH, POLKIT_INTERFACE,
					   "CheckAuthorization");
	if (r >= 0)
		r = sd_bus_message_append(call, "(sa{sv})s", "system-bus-name", 1, "name", "s", sender, action);
	if (r >= 0)
		r = sd_bus_message_append(call, "a{ss}us", 0, flags, "");
	if (r < 0)
		return r;

	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->a = a;
	q->action = strdup(action);
	if (!q->action) {
		free(q);
		return -ENOMEM;
	}
	q->msg = sd_bus_message_ref(msg);
	q->handler = handler;
	q->userdata = userdata;
	q->next = a->queries;
	a->queries = q;
	a->n_pending++;
	/* The default timeout (25 s); an agent prompting a person may take
	 * that long, and nothing waits meanwhile. */
	r = sd_bus_call_async(a->bus, &q->slot, call, on_polkit_reply, q, 0);
	if (r < 0) {
		query_free(q);
		return r;
	}
	return 0;
}

int bus_auth_check(struct bus_auth *a, sd_bus_message *msg, const char *action,
		   sd_bus_message_handler_t handler, void *userdata, sd_bus_error *error)
{
	_cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
	uid_t euid;
	int r;

	/* Called again after polkit answered? */
	for (struct auth_query *q = a->queries; q; q = q->next)
		if (q->msg == msg && q->done && strcmp(q->action, action) == 0) {
			if (q->allowed)
				return 1;
			return sd_bus_error_copy(error, &q->denied) ?: -EACCES;
		}

	/*
	 * The effective uid comes from /proc (AUGMENT). Where /proc hides the
	 * caller (the unit's ProtectProc=invisible hides other users), the
	 * uid the bus took from the socket (SO_PEERCRED: the effective uid at
	 * connect time) decides instead.
	 */
	r = sd_bus_query_sender_creds(msg, SD_BUS_CREDS_EUID | SD_BUS_CREDS_UID | SD_BUS_CREDS_AUGMENT, &creds);
	if (r >= 0) {
		r = sd_bus_creds_get_euid(creds, &euid);
		if (r < 0)
			r = sd_bus_creds_get_uid(creds, &euid);
	}
	if (r >= 0 && euid == 0)
		return 1;
	if (r < 0)
		log_debug_errno(r, "Failed to get the effective uid of %s: %m",
				sd_bus_message_get_sender(msg) ?: "?");

	/* Not root: polkit decides. If it is not running, the call fails
	 * with ServiceUnknown (or activates it where it is activatable). */
	r = ask_polkit(a, msg, action, handler, userdata, error);
	if (r < 0 && !sd_bus_error_is_set(error))
		return sd_bus_error_set_errnof(error, r, "Failed to ask polkit about %s: %m", action);
	return r;
}
