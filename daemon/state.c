/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "kyber_tuned.pb-c.h"
#include "macro.h"
#include "state.h"

/* A state file is a few KiB; anything much bigger is not ours. */
#define STATE_FILE_MAX (4 * 1024 * 1024)
#define STATE_DEVICES_MAX 4096

/*
 * Both tables (learned state, originals) are arrays of entries that start
 * with three owned strings, the first the device's stable id: one
 * implementation of find / put / remove for both. The strings are reached
 * as char * objects at the entry's start, never through another struct
 * type.
 */
#define ENTRY_STRINGS 3
static_assert(offsetof(struct state_device, id) == 0 && offsetof(struct state_device, name) == sizeof(char *) &&
	      offsetof(struct state_device, goal) == 2 * sizeof(char *), "state_device starts with 3 strings");
static_assert(offsetof(struct original, id) == 0 && offsetof(struct original, name) == sizeof(char *) &&
	      offsetof(struct original, scheduler) == 2 * sizeof(char *), "original starts with 3 strings");

static char **entry_strings(void *e)
{
	return (char **)e;
}

static void entry_done(void *e, size_t size)
{
	for (int i = 0; i < ENTRY_STRINGS; i++)
		free(entry_strings(e)[i]);
	memset(e, 0, size);
}

static void *table_find(void *v, size_t n, size_t size, const char *id)
{
	for (size_t i = 0; i < n; i++) {
		void *e = (char *)v + i * size;

		if (strcmp(entry_strings(e)[0], id) == 0)
			return e;
	}
	return NULL;
}

/* Insert or replace by id, copying the entry and its strings ("" stored as
 * NULL). *v may move. */
static int table_put(void **v, size_t *n, size_t size, const void *e)
{
	_cleanup_free_ void *copy = malloc(size);
	void *slot;

	if (!copy)
		return -ENOMEM;
	memcpy(copy, e, size);
	for (int i = 0; i < ENTRY_STRINGS; i++) {
		const char *str = entry_strings((void *)e)[i];

		entry_strings(copy)[i] = str && *str ? strdup(str) : NULL;
		if (str && *str && !entry_strings(copy)[i]) {
			entry_done(copy, size);
			return -ENOMEM;
		}
	}
	slot = table_find(*v, *n, size, entry_strings(copy)[0]);
	if (!slot) {
		void *grown = realloc(*v, (*n + 1) * size);

		if (!grown) {
			entry_done(copy, size);
			return -ENOMEM;
		}
		*v = grown;
		slot = (char *)grown + (*n)++ * size;
	} else
		entry_done(slot, size);
	memcpy(slot, copy, size);
	return 0;
}

static void table_remove(void *v, size_t *n, size_t size, const char *id)
{
	void *e = table_find(v, *n, size, id);

	if (!e)
		return;
	entry_done(e, size);
	(*n)--;
	if (e != (char *)v + *n * size)
		memcpy(e, (char *)v + *n * size, size);
}

static void table_done(void **v, size_t *n, size_t size)
{
	for (size_t i = 0; i < *n; i++)
		entry_done((char *)*v + i * size, size);
	free(*v);
	*v = NULL;
	*n = 0;
}

/* ---------------------------------------------------------------- state */

void state_done(struct state *s)
{
	table_done((void **)&s->devs, &s->n, sizeof(*s->devs));
}

struct state_device *state_find(struct state *s, const char *id)
{
	return table_find(s->devs, s->n, sizeof(*s->devs), id);
}

int state_put(struct state *s, const struct state_device *d)
{
	if (!d->id || !*d->id)
		return -EINVAL;
	return table_put((void **)&s->devs, &s->n, sizeof(*s->devs), d);
}

void state_remove(struct state *s, const char *id)
{
	table_remove(s->devs, &s->n, sizeof(*s->devs), id);
}

/* A goal saved when Kyber always was the default says so once decoded
 * (*ret NULL: it needs nothing added). */
static int goal_with_kyber_default(const char *goal, char **ret)
{
	*ret = NULL;
	if (!goal || !*goal || strstr(goal, "scheduler="))
		return 0;
	if (asprintf(ret, "%s scheduler=kyber", goal) < 0) {
		*ret = NULL;
		return -ENOMEM;
	}
	return 0;
}

int state_decode(const uint8_t *buf, size_t len, struct state *out)
{
	Kybertune__State *m;
	int r = 0;

	memset(out, 0, sizeof(*out));
	if (len > STATE_FILE_MAX)
		return -EBADMSG;
	m = kybertune__state__unpack(NULL, len, buf);
	if (!m)
		return -EBADMSG;
	if ((m->version != STATE_VERSION && m->version != STATE_VERSION_KYBER_DEFAULT) ||
	    m->n_devices > STATE_DEVICES_MAX) {
		r = -EBADMSG;
		goto out;
	}
	for (size_t i = 0; i < m->n_devices; i++) {
		const Kybertune__DeviceState *p = m->devices[i];
		_cleanup_free_ char *kyber_goal = NULL;
		struct state_device d = {
			.id = p->device_id, .name = p->name, .goal = p->goal,
			.read_target_ns = p->read_target_ns, .write_target_ns = p->write_target_ns,
			.write_ref_p99_ns = p->write_ref_p99_ns, .write_ref_iops = p->write_ref_iops,
			.read_floor_ns = p->read_floor_ns, .updated_ns = p->updated_ns,
		};

		if (!p->device_id || !*p->device_id) {
			r = -EBADMSG;
			goto out;
		}
		if (m->version == STATE_VERSION_KYBER_DEFAULT) {
			r = goal_with_kyber_default(d.goal, &kyber_goal);
			if (r < 0)
				goto out;
			if (kyber_goal)
				d.goal = kyber_goal;
		}
		r = state_put(out, &d);
		if (r < 0)
			goto out;
	}
out:
	kybertune__state__free_unpacked(m, NULL);
	if (r < 0)
		state_done(out);
	return r;
}

int state_encode(const struct state *s, uint8_t **ret, size_t *ret_len)
{
	Kybertune__State m = KYBERTUNE__STATE__INIT;
	_cleanup_free_ Kybertune__DeviceState *devs = NULL;
	_cleanup_free_ Kybertune__DeviceState **ptrs = NULL;
	uint8_t *buf;
	size_t n;

	devs = calloc(s->n + 1, sizeof(*devs));
	ptrs = calloc(s->n + 1, sizeof(*ptrs));
	if (!devs || !ptrs)
		return -ENOMEM;
	for (size_t i = 0; i < s->n; i++) {
		const struct state_device *d = &s->devs[i];

		kybertune__device_state__init(&devs[i]);
		/* protobuf-c wants "" for empty strings, never NULL */
		devs[i].device_id = d->id;
		devs[i].name = d->name ? d->name : (char *)"";
		devs[i].goal = d->goal ? d->goal : (char *)"";
		devs[i].read_target_ns = d->read_target_ns;
		devs[i].write_target_ns = d->write_target_ns;
		devs[i].write_ref_p99_ns = d->write_ref_p99_ns;
		devs[i].write_ref_iops = d->write_ref_iops;
		devs[i].read_floor_ns = d->read_floor_ns;
		devs[i].updated_ns = d->updated_ns;
		ptrs[i] = &devs[i];
	}
	m.version = STATE_VERSION;
	m.n_devices = s->n;
	m.devices = ptrs;
	n = kybertune__state__get_packed_size(&m);
	buf = malloc(n ? n : 1);
	if (!buf)
		return -ENOMEM;
	kybertune__state__pack(&m, buf);
	*ret = buf;
	*ret_len = n;
	return 0;
}

/* ---------------------------------------------------------------- originals */

void originals_done(struct originals *o)
{
	table_done((void **)&o->v, &o->n, sizeof(*o->v));
}

struct original *originals_find(struct originals *o, const char *id)
{
	return table_find(o->v, o->n, sizeof(*o->v), id);
}

int originals_put(struct originals *o, const struct original *e)
{
	if (!e->id || !*e->id || !e->scheduler || !*e->scheduler)
		return -EINVAL;
	return table_put((void **)&o->v, &o->n, sizeof(*o->v), e);
}

void originals_remove(struct originals *o, const char *id)
{
	table_remove(o->v, &o->n, sizeof(*o->v), id);
}

int originals_decode(const uint8_t *buf, size_t len, struct originals *out)
{
	Kybertune__Originals *m;
	int r = 0;

	memset(out, 0, sizeof(*out));
	if (len > STATE_FILE_MAX)
		return -EBADMSG;
	m = kybertune__originals__unpack(NULL, len, buf);
	if (!m)
		return -EBADMSG;
	if (m->version != ORIGINALS_VERSION || m->n_devices > STATE_DEVICES_MAX) {
		r = -EBADMSG;
		goto out;
	}
	for (size_t i = 0; i < m->n_devices; i++) {
		const Kybertune__Original *p = m->devices[i];
		struct original e = {
			.id = p->device_id, .name = p->name, .scheduler = p->scheduler,
			.was_kyber = p->was_kyber, .read_target_ns = p->read_target_ns,
			.write_target_ns = p->write_target_ns,
			.left_read_target_ns = p->left_read_target_ns,
			.left_write_target_ns = p->left_write_target_ns,
		};

		if (p->left_scheduler && strlen(p->left_scheduler) >= sizeof(e.left_scheduler)) {
			r = -EBADMSG;
			goto out;
		}
		snprintf(e.left_scheduler, sizeof(e.left_scheduler), "%s",
			 p->left_scheduler ? p->left_scheduler : "");
		r = originals_put(out, &e);
		if (r < 0) {
			r = r == -EINVAL ? -EBADMSG : r;
			goto out;
		}
	}
out:
	kybertune__originals__free_unpacked(m, NULL);
	if (r < 0)
		originals_done(out);
	return r;
}

int originals_encode(const struct originals *o, uint8_t **ret, size_t *ret_len)
{
	Kybertune__Originals m = KYBERTUNE__ORIGINALS__INIT;
	_cleanup_free_ Kybertune__Original *v = NULL;
	_cleanup_free_ Kybertune__Original **ptrs = NULL;
	uint8_t *buf;
	size_t n;

	v = calloc(o->n + 1, sizeof(*v));
	ptrs = calloc(o->n + 1, sizeof(*ptrs));
	if (!v || !ptrs)
		return -ENOMEM;
	for (size_t i = 0; i < o->n; i++) {
		kybertune__original__init(&v[i]);
		v[i].device_id = o->v[i].id;
		v[i].name = o->v[i].name ? o->v[i].name : (char *)"";
		v[i].scheduler = o->v[i].scheduler;
		v[i].was_kyber = o->v[i].was_kyber;
		v[i].read_target_ns = o->v[i].read_target_ns;
		v[i].write_target_ns = o->v[i].write_target_ns;
		v[i].left_scheduler = (char *)o->v[i].left_scheduler;
		v[i].left_read_target_ns = o->v[i].left_read_target_ns;
		v[i].left_write_target_ns = o->v[i].left_write_target_ns;
		ptrs[i] = &v[i];
	}
	m.version = ORIGINALS_VERSION;
	m.n_devices = o->n;
	m.devices = ptrs;
	n = kybertune__originals__get_packed_size(&m);
	buf = malloc(n ? n : 1);
	if (!buf)
		return -ENOMEM;
	kybertune__originals__pack(&m, buf);
	*ret = buf;
	*ret_len = n;
	return 0;
}

/* ---------------------------------------------------------------- files */

/* The whole file; what is not a small regular file is not ours. */
static int read_state_file(const char *path, uint8_t **ret, size_t *ret_len)
{
	int r = read_full_file(path, O_NOFOLLOW, STATE_FILE_MAX, (char **)ret, ret_len);

	return r == -EINVAL || r == -EFBIG ? -EBADMSG : r;
}

int state_load(const char *path, struct state *out)
{
	_cleanup_free_ uint8_t *buf = NULL;
	size_t n;
	int r;

	memset(out, 0, sizeof(*out));
	r = read_state_file(path, &buf, &n);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	return state_decode(buf, n, out);
}

int state_save(const char *path, const struct state *s)
{
	_cleanup_free_ uint8_t *buf = NULL;
	size_t n;
	int r;

	r = state_encode(s, &buf, &n);
	if (r < 0)
		return r;
	return write_file_atomic(path, buf, n);
}

int originals_load(const char *path, struct originals *out)
{
	_cleanup_free_ uint8_t *buf = NULL;
	size_t n;
	int r;

	memset(out, 0, sizeof(*out));
	r = read_state_file(path, &buf, &n);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	return originals_decode(buf, n, out);
}

int originals_save(const char *path, const struct originals *o)
{
	_cleanup_free_ uint8_t *buf = NULL;
	size_t n;
	int r;

	r = originals_encode(o, &buf, &n);
	if (r < 0)
		return r;
	return write_file_atomic(path, buf, n);
}
