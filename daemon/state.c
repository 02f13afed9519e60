/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The learned state (state.h): goals and weights set at run time, kept
 * across restarts. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "kyber_tuned.pb-c.h"
#include "macro.h"
#include "state-table.h"

static_assert(offsetof(struct state_device, id) == 0 && offsetof(struct state_device, name) == sizeof(char *) &&
	      offsetof(struct state_device, goal) == 2 * sizeof(char *), "state_device starts with 3 strings");

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
	state_table_done((void **)&s->devs, &s->n, sizeof(*s->devs));
	for (size_t i = 0; i < s->n_weights; i++)
		weight_done(&s->weights[i]);
	free(s->weights);
	s->weights = NULL;
	s->n_weights = 0;
}

struct state_device *state_find(struct state *s, const char *id)
{
	return state_table_find(s->devs, s->n, sizeof(*s->devs), id);
}

int state_put(struct state *s, const struct state_device *d)
{
	if (!d->id || !*d->id)
		return -EINVAL;
	return state_table_put((void **)&s->devs, &s->n, sizeof(*s->devs), d);
}

void state_remove(struct state *s, const char *id)
{
	state_table_remove(s->devs, &s->n, sizeof(*s->devs), id);
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
	return state_pack(&m.base, ret, ret_len);
}

/* ---------------------------------------------------------------- files */

int state_load(const char *path, struct state *out)
{
	_cleanup_free_ uint8_t *buf = NULL;
	size_t n = 0;
	int r;

	memset(out, 0, sizeof(*out));
	r = state_read_file(path, &buf, &n);
	return r < 0 || !buf ? r : state_decode(buf, n, out);
}

int state_save(const char *path, const struct state *s)
{
	_cleanup_free_ uint8_t *buf = NULL;
	size_t n;
	int r = state_encode(s, &buf, &n);

	return r < 0 ? r : write_file_atomic(path, buf, n);
}
