/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The originals (state.h): each tuned device's scheduler and targets, and
 * each limited cgroup's limits, from before kyber-tuned changed them, for
 * rollback after a crash. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "kyber_tuned.pb-c.h"
#include "macro.h"
#include "state-table.h"

static_assert(offsetof(struct original, id) == 0 && offsetof(struct original, name) == sizeof(char *) &&
	      offsetof(struct original, scheduler) == 2 * sizeof(char *), "original starts with 3 strings");

static void cg_done(struct cgroup_original *c)
{
	free(c->cgroup);
	free(c->root);
	memset(c, 0, sizeof(*c));
}

void originals_done(struct originals *o)
{
	state_table_done((void **)&o->v, &o->n, sizeof(*o->v));
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
	return state_table_find(o->v, o->n, sizeof(*o->v), id);
}

int originals_put(struct originals *o, const struct original *e)
{
	if (!e->id || !*e->id || !e->scheduler || !*e->scheduler)
		return -EINVAL;
	return state_table_put((void **)&o->v, &o->n, sizeof(*o->v), e);
}

void originals_remove(struct originals *o, const char *id)
{
	state_table_remove(o->v, &o->n, sizeof(*o->v), id);
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
	return state_pack(&m.base, ret, ret_len);
}

/* ---------------------------------------------------------------- files */

int originals_load(const char *path, struct originals *out)
{
	_cleanup_free_ uint8_t *buf = NULL;
	size_t n = 0;
	int r;

	memset(out, 0, sizeof(*out));
	r = state_read_file(path, &buf, &n);
	return r < 0 || !buf ? r : originals_decode(buf, n, out);
}

int originals_save(const char *path, const struct originals *o)
{
	_cleanup_free_ uint8_t *buf = NULL;
	size_t n;
	int r = originals_encode(o, &buf, &n);

	return r < 0 ? r : write_file_atomic(path, buf, n);
}
