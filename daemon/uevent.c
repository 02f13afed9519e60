/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>

#include "parse-util.h"
#include "uevent.h"

static enum device_event_action action_of(const char *s, size_t n)
{
	static const struct {
		const char *name;
		enum device_event_action action;
	} table[] = {
		{ "add", DEVICE_EVENT_ADD },
		{ "change", DEVICE_EVENT_CHANGE },
		{ "remove", DEVICE_EVENT_REMOVE },
	};

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (strlen(table[i].name) == n && memcmp(table[i].name, s, n) == 0)
			return table[i].action;
	return DEVICE_EVENT_OTHER;
}

/* The value of KEY= in field, or NULL. */
static const char *value_of(const char *field, const char *key)
{
	size_t k = strlen(key);

	return strncmp(field, key, k) == 0 && field[k] == '=' ? field + k + 1 : NULL;
}

int uevent_parse(const char *buf, size_t len, struct uevent *out)
{
	const char *at, *end = buf + len, *devpath, *base, *v;
	bool is_block = false, is_disk = false;
	size_t header_len;

	*out = (struct uevent) { .action = DEVICE_EVENT_OTHER };
	if (!buf || len == 0 || buf[len - 1] != '\0')
		return -EBADMSG;
	header_len = strlen(buf);
	at = memchr(buf, '@', header_len);
	if (!at || at == buf || at[1] != '/')
		return -EBADMSG;
	out->action = action_of(buf, (size_t)(at - buf));
	devpath = at + 1;
	for (const char *f = buf + header_len + 1; f < end; f += strlen(f) + 1) {
		if ((v = value_of(f, "ACTION")) && action_of(v, strlen(v)) != out->action)
			return -EBADMSG;
		if ((v = value_of(f, "DEVPATH")) && strcmp(v, devpath) != 0)
			return -EBADMSG;
		if ((v = value_of(f, "SUBSYSTEM")))
			is_block = strcmp(v, "block") == 0;
		if ((v = value_of(f, "DEVTYPE")))
			is_disk = strcmp(v, "disk") == 0;
		if ((v = value_of(f, "DISKSEQ")) && parse_u64_strict(v, false, &out->diskseq) < 0)
			return -EBADMSG;
	}
	base = strrchr(devpath, '/') + 1;
	if (!*base || strlen(base) >= sizeof(out->name) || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
		return -EBADMSG;
	memcpy(out->name, base, strlen(base) + 1);
	out->disk = is_block && is_disk;
	return 0;
}
