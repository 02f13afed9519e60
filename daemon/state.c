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
/* Weights and limited cgroups kept: as many as the observer accounts per
 * device, for every device. */
#define STATE_CGROUPS_MAX (4096 * 4)

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

/* ---------------------------------------------------------------- weights */

static void weight_done(struct state_weight *w)
{
	free(w->id);
	free(w->name);
	free(w->cgroup);
	memset(w, 0, sizeof(*w));
}

struct state_weight *state_weight_find(struct state *s, const char *id, const char *cgroup)
{
	for (size_t i = 0; i < s->n_weights; i++)
		if (strcmp(s->weights[i].id, id) == 0 && strcmp(s->weights[i].cgroup, cgroup) == 0)
			return &s->weights[i];
	return NULL;
}

int state_weight_put(struct state *s, const struct state_weight *w)
{
	struct state_weight copy = { .weight = w->weight }, *slot;

	if (!w->id || !*w->id || !w->cgroup || !*w->cgroup)
		return -EINVAL;
	copy.id = strdup(w->id);
	copy.name = strdup(w->name ? w->name : "");
	copy.cgroup = strdup(w->cgroup);
	if (!copy.id || !copy.name || !copy.cgroup) {
		weight_done(&copy);
		return -ENOMEM;
	}
	slot = state_weight_find(s, w->id, w->cgroup);
	if (slot)
		weight_done(slot);
	else {
		struct state_weight *grown = realloc(s->weights, (s->n_weights + 1) * sizeof(*grown));

		if (!grown) {
			weight_done(&copy);
			return -ENOMEM;
		}
		s->weights = grown;
		slot = &grown[s->n_weights++];
	}
	*slot = copy;
	return 0;
}

void state_weight_remove(struct state *s, const char *id, const char *cgroup)
{
	struct state_weight *w = state_weight_find(s, id, cgroup);

	if (!w)
		return;
	weight_done(w);
	*w = s->weights[--s->n_weights];
}

/* ---------------------------------------------------------------- state */

void state_done(struct state *s)
{
	table_done((void **)&s->devs, &s->n, sizeof(*s->devs));
	for (size_t i = 0; i < s->n_weights; i++)
		weight_done(&s->weights[i]);
	free(s->weights);
	s->weights = NULL;
	s->n_weights = 0;
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
	if (m->n_weights > STATE_CGROUPS_MAX) {
		r = -EBADMSG;
		goto out;
	}
	for (size_t i = 0; i < m->n_weights; i++) {
		const Kybertune__WeightState *p = m->weights[i];
		struct state_weight w = { .id = p->device_id, .name = p->name, .cgroup = p->cgroup,
					  .weight = p->weight };

		r = state_weight_put(out, &w);
		if (r < 0) {
			r = r == -EINVAL ? -EBADMSG : r;
			goto out;
		}
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
	_cleanup_free_ Kybertune__WeightState *ws = NULL;
	_cleanup_free_ Kybertune__WeightState **wptrs = NULL;
	uint8_t *buf;
	size_t n;

	devs = calloc(s->n + 1, sizeof(*devs));
	ptrs = calloc(s->n + 1, sizeof(*ptrs));
	ws = calloc(s->n_weights + 1, sizeof(*ws));
	wptrs = calloc(s->n_weights + 1, sizeof(*wptrs));
	if (!devs || !ptrs || !ws || !wptrs)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_weights; i++) {
		kybertune__weight_state__init(&ws[i]);
		ws[i].device_id = s->weights[i].id;
		ws[i].name = s->weights[i].name;
		ws[i].cgroup = s->weights[i].cgroup;
		ws[i].weight = s->weights[i].weight;
		wptrs[i] = &ws[i];
	}
	m.n_weights = s->n_weights;
	m.weights = wptrs;
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

static void cg_done(struct cgroup_original *c)
{
	free(c->cgroup);
	free(c->root);
	memset(c, 0, sizeof(*c));
}

void originals_done(struct originals *o)
{
	table_done((void **)&o->v, &o->n, sizeof(*o->v));
	for (size_t i = 0; i < o->n_cg; i++)
		cg_done(&o->cg[i]);
	free(o->cg);
	o->cg = NULL;
	o->n_cg = 0;
}

struct cgroup_original *originals_cg_find(struct originals *o, const char *root, const char *cgroup,
					  uint32_t major, uint32_t minor)
{
	for (size_t i = 0; i < o->n_cg; i++) {
		struct cgroup_original *c = &o->cg[i];

		if (c->major == major && c->minor == minor && strcmp(c->root, root) == 0 &&
		    strcmp(c->cgroup, cgroup) == 0)
			return c;
	}
	return NULL;
}

int originals_cg_put(struct originals *o, const struct cgroup_original *c)
{
	struct cgroup_original copy = *c, *slot;

	if (!c->cgroup || !*c->cgroup || !c->root || !*c->root || (c->version != 1 && c->version != 2))
		return -EINVAL;
	copy.cgroup = strdup(c->cgroup);
	copy.root = strdup(c->root);
	if (!copy.cgroup || !copy.root) {
		cg_done(&copy);
		return -ENOMEM;
	}
	slot = originals_cg_find(o, c->root, c->cgroup, c->major, c->minor);
	if (slot)
		cg_done(slot);
	else {
		struct cgroup_original *grown = realloc(o->cg, (o->n_cg + 1) * sizeof(*grown));

		if (!grown) {
			cg_done(&copy);
			return -ENOMEM;
		}
		o->cg = grown;
		slot = &grown[o->n_cg++];
	}
	*slot = copy;
	return 0;
}

void originals_cg_remove(struct originals *o, const char *root, const char *cgroup, uint32_t major, uint32_t minor)
{
	struct cgroup_original *c = originals_cg_find(o, root, cgroup, major, minor);

	if (!c)
		return;
	cg_done(c);
	*c = o->cg[--o->n_cg];
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
	if (m->n_cgroups > STATE_CGROUPS_MAX) {
		r = -EBADMSG;
		goto out;
	}
	for (size_t i = 0; i < m->n_cgroups; i++) {
		const Kybertune__CgroupOriginal *p = m->cgroups[i];
		struct cgroup_original c = {
			.cgroup = p->cgroup, .root = p->root, .version = (int)p->hierarchy,
			.major = p->major, .minor = p->minor, .read_iops = p->read_iops,
			.write_iops = p->write_iops, .read_bps = p->read_bps, .write_bps = p->write_bps,
		};

		r = originals_cg_put(out, &c);
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
	_cleanup_free_ Kybertune__CgroupOriginal *cg = NULL;
	_cleanup_free_ Kybertune__CgroupOriginal **cptrs = NULL;
	uint8_t *buf;
	size_t n;

	v = calloc(o->n + 1, sizeof(*v));
	ptrs = calloc(o->n + 1, sizeof(*ptrs));
	cg = calloc(o->n_cg + 1, sizeof(*cg));
	cptrs = calloc(o->n_cg + 1, sizeof(*cptrs));
	if (!v || !ptrs || !cg || !cptrs)
		return -ENOMEM;
	for (size_t i = 0; i < o->n_cg; i++) {
		const struct cgroup_original *c = &o->cg[i];

		kybertune__cgroup_original__init(&cg[i]);
		cg[i].cgroup = c->cgroup;
		cg[i].root = c->root;
		cg[i].hierarchy = (uint32_t)c->version;
		cg[i].major = c->major;
		cg[i].minor = c->minor;
		cg[i].read_iops = c->read_iops;
		cg[i].write_iops = c->write_iops;
		cg[i].read_bps = c->read_bps;
		cg[i].write_bps = c->write_bps;
		cptrs[i] = &cg[i];
	}
	m.n_cgroups = o->n_cg;
	m.cgroups = cptrs;
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
