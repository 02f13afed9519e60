/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Weights of cgroups on tuned disks (device-share.c does the sharing):
 * set and cleared by request or configuration, those set at run time kept
 * in the state file, a disk without a goal tuned for its weights alone,
 * and the cgroup limits a previous instance left put back at start.
 */
#include <errno.h>
#include <string.h>

#include "device.h"
#include "error.h"
#include "log.h"
#include "manager-internal.h"

#define MOUNTINFO "/proc/self/mountinfo"
/* The goal of a disk tuned for its cgroups' weights alone: no latency
 * goal, nothing throttled, its own scheduler (Kyber buys nothing here). */
#define WEIGHTS_ONLY_GOAL "mode=throughput"

void manager_find_cgroups(struct manager *m)
{
	char why[PATH_MAX + 96];

	m->have_cgroups = cgroup_hierarchy_find(&m->cgroups, MOUNTINFO, why, sizeof(why)) == 0;
	if (!m->have_cgroups)
		log_info("Weights cannot be applied: %s", why);
	else
		log_debug("Cgroup weights on cgroup v%d, %s", m->cgroups.version, m->cgroups.root);
}

void manager_weights_only(struct manager *m, struct device *d)
{
	struct goal g;

	if (goal_parse(WEIGHTS_ONLY_GOAL, &g, NULL) < 0)
		return;
	device_set_goal(d, &g, device_source(d));
	device_set_weights_only(d, true);
}

static void remember_weight(struct manager *m, struct device *d, const char *cgroup, uint32_t weight)
{
	struct state_weight w = { .id = (char *)device_id(d), .name = (char *)device_name(d),
				  .cgroup = (char *)cgroup, .weight = weight };

	if (weight)
		(void)state_weight_put(&m->state, &w);
	else
		state_weight_remove(&m->state, device_id(d), cgroup);
	manager_save_state(m);
}

/* The tuned device, or one started for its weights alone (*created). */
static int device_for_weights(struct manager *m, const char *device, enum goal_source source,
			      struct device **ret, bool *created, sd_bus_error *error)
{
	struct blockdev bd;
	struct goal g;
	char note[320];
	int r;

	*created = false;
	*ret = manager_find(m, device);
	if (*ret)
		return 0;
	r = blockdev_resolve_user(m->o.sysroot, device, &bd, note, sizeof(note), error);
	if (r < 0)
		return r;
	if (note[0])
		log_info("%s", note);
	*ret = manager_find(m, bd.name);
	if (*ret)
		return 0;
	r = goal_parse(WEIGHTS_ONLY_GOAL, &g, error);
	if (r < 0)
		return r;
	r = manager_start_device(m, &bd, &g, source, true, ret, error);
	*created = r >= 0;
	return r;
}

static void stop_device(struct manager *m, struct device *d)
{
	for (size_t i = 0; i < m->n_devs; i++)
		if (m->devs[i] == d) {
			manager_remove_device(m, i);
			return;
		}
}

int manager_set_weight(struct manager *m, const char *device, const char *cgroup, uint32_t weight,
		       enum goal_source source, sd_bus_error *error)
{
	char path[CGROUP_PATH_MAX];
	const char *why;
	struct device *d;
	bool created;
	int r;

	if (!m->have_cgroups)
		return error_setf(error, -EOPNOTSUPP, "No cgroup hierarchy has the io (blkio) controller here: "
				  "weights cannot be applied");
	if (cgroup_path_normalize(cgroup, path, sizeof(path), &why) < 0)
		return error_setf(error, -EINVAL, "Invalid cgroup \"%.64s\": %s", cgroup, why);
	r = device_for_weights(m, device, source, &d, &created, error);
	if (r < 0)
		return r;
	r = device_set_weight(d, path, weight, source, error);
	if (r < 0) {
		if (created)
			stop_device(m, d);
		return r;
	}
	if (source == GOAL_SOURCE_RUNTIME)
		remember_weight(m, d, path, weight);
	return 0;
}

int manager_clear_weight(struct manager *m, const char *device, const char *cgroup, sd_bus_error *error)
{
	char path[CGROUP_PATH_MAX];
	const char *why;
	struct device *d;
	int r;

	if (cgroup_path_normalize(cgroup, path, sizeof(path), &why) < 0)
		return error_setf(error, -EINVAL, "Invalid cgroup \"%.64s\": %s", cgroup, why);
	d = manager_find(m, device);
	if (!d)
		return error_setf(error, -ENODEV, "%.64s is not tuned: no cgroup has a weight on it", device);
	r = device_clear_weight(d, path, error);
	if (r < 0)
		return r;
	remember_weight(m, d, path, 0);
	if (device_weights_only(d) && !device_n_weights(d)) {
		log_dev_info(device_name(d), "no weight left: tuning stops");
		stop_device(m, d);
	}
	return 0;
}

void manager_resume_weights(struct manager *m)
{
	for (size_t i = 0; i < m->state.n_weights; i++) {
		const struct state_weight *w = &m->state.weights[i];
		_cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
		struct device *d = NULL;
		int r;

		for (size_t j = 0; j < m->n_devs && !d; j++)
			if (strcmp(device_id(m->devs[j]), w->id) == 0)
				d = m->devs[j];
		r = manager_set_weight(m, d ? device_name(d) : w->name, w->cgroup, w->weight, GOAL_SOURCE_RUNTIME,
				       &error);
		if (r < 0)
			log_warning("Cannot resume the weight %u of cgroup %s on %s: %s", w->weight, w->cgroup,
				    w->name, error_message(&error, r));
	}
}

void manager_drop_config_weights_except(struct manager *m, const char *const *devices,
					const char *const *cgroups, size_t n)
{
	struct drop {
		char device[64], cgroup[CGROUP_PATH_MAX];
	} *drop = NULL;
	size_t n_drop = 0;

	/* Collected first: clearing a device's last weight may stop it. */
	for (size_t i = 0; i < m->n_devs; i++) {
		struct device *d = m->devs[i];

		for (size_t k = 0; k < device_n_weights(d); k++) {
			const struct device_weight *w = device_weight(d, k);
			struct drop *grown;
			bool listed = false;

			for (size_t j = 0; j < n && !listed; j++)
				listed = manager_find(m, devices[j]) == d && strcmp(cgroups[j], w->cgroup) == 0;
			if (listed || w->source != GOAL_SOURCE_CONFIG)
				continue;
			grown = realloc(drop, (n_drop + 1) * sizeof(*drop));
			if (!grown)
				break;
			drop = grown;
			snprintf(drop[n_drop].device, sizeof(drop[n_drop].device), "%s", device_name(d));
			snprintf(drop[n_drop].cgroup, sizeof(drop[n_drop].cgroup), "%s", w->cgroup);
			n_drop++;
		}
	}
	for (size_t i = 0; i < n_drop; i++) {
		log_dev_info(drop[i].device, "the weight of cgroup %s is no longer in the configuration",
			     drop[i].cgroup);
		(void)manager_clear_weight(m, drop[i].device, drop[i].cgroup, NULL);
	}
	free(drop);
}

void manager_restore_cgroup_leftovers(struct manager *m)
{
	while (m->originals.n_cg) {
		struct cgroup_original *c = &m->originals.cg[m->originals.n_cg - 1];
		struct cgroup_limits l = { c->read_iops, c->write_iops, c->read_bps, c->write_bps };
		struct cgroup_hierarchy h;
		int r;

		cgroup_hierarchy_at(&h, (enum cgroup_version)c->version, c->root);
		r = cgroup_limits_write(&h, c->cgroup, c->major, c->minor, NULL, &l);
		if (r == -ENOENT || !cgroup_exists(&h, c->cgroup))
			log_info("Cgroup %s limited by a previous instance is gone: nothing to put back", c->cgroup);
		else if (r < 0)
			log_warning_errno(r, "Failed to put back the I/O limits of cgroup %s on %u:%u left by a "
					  "previous instance: %m", c->cgroup, c->major, c->minor);
		else
			log_info("Put back the I/O limits of cgroup %s on %u:%u left by a previous instance",
				 c->cgroup, c->major, c->minor);
		originals_cg_remove(&m->originals, c->root, c->cgroup, c->major, c->minor);
	}
	manager_save_originals(m);
}
