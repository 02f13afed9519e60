/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>

#include "log.h"
#include "manager-internal.h"
#include "parse-util.h"

void manager_options_default(struct manager_options *o)
{
	*o = (struct manager_options) {
		.interval_ns = NSEC_PER_SEC,
		.settle_ns = 300 * NSEC_PER_MSEC,
		.rollback = true,
		.switch_scheduler = true,
		.attach = OBSERVER_ATTACH_AUTO,
		.max_devices = KT_MAX_DEVICES_DEFAULT,
		.sysroot = "/sys",
		.debugfs = "/sys/kernel/debug",
	};
}

static int on_tick(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct manager *m = userdata;

	for (size_t i = 0; i < m->n_devs; i++)
		device_step(m->devs[i]);
	/* Scheduled from the previous deadline, not from now: no drift. */
	if (sd_event_source_set_time(s, usec + m->o.interval_ns / 1000) < 0)
		return 0;
	return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

/* The timer runs only while there is a device to tune. */
static void update_tick(struct manager *m)
{
	uint64_t now;
	int enabled = 0;

	(void)sd_event_source_get_enabled(m->tick, &enabled);
	if (m->n_devs && !enabled) {
		sd_event_now(m->event, CLOCK_MONOTONIC, &now);
		(void)sd_event_source_set_time(m->tick, now + m->o.interval_ns / 1000);
		(void)sd_event_source_set_enabled(m->tick, SD_EVENT_ONESHOT);
	} else if (!m->n_devs && enabled)
		(void)sd_event_source_set_enabled(m->tick, SD_EVENT_OFF);
}

static char *dup_or_null(const char *s, bool *oom)
{
	char *c;

	if (!s)
		return NULL;
	c = strdup(s);
	if (!c)
		*oom = true;
	return c;
}

int manager_new(struct manager **ret, sd_event *event, const struct manager_options *o,
		char *err, size_t errlen)
{
	struct manager *m;
	bool oom = false;
	int r;

	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->o = *o;
	m->event = sd_event_ref(event);
	m->sysroot = dup_or_null(o->sysroot, &oom);
	m->debugfs = dup_or_null(o->debugfs, &oom);
	m->state_dir = dup_or_null(o->state_dir, &oom);
	m->runtime_dir = dup_or_null(o->runtime_dir, &oom);
	m->record_path = dup_or_null(o->record_path, &oom);
	if (oom) {
		r = -ENOMEM;
		goto fail;
	}
	m->o.sysroot = m->sysroot;
	m->o.debugfs = m->debugfs;
	m->o.state_dir = m->state_dir;
	m->o.runtime_dir = m->runtime_dir;
	m->o.record_path = m->record_path;

	r = observer_new(&m->observer, o->attach, o->max_devices, err, errlen);
	if (r < 0)
		goto fail;
	log_debug("BPF observer attached via %s", observer_attach_to_string(observer_attach_mode(m->observer)));
	r = sd_event_add_time(event, &m->tick, CLOCK_MONOTONIC, 0, 1000, on_tick, m);
	if (r < 0) {
		snprintf(err, errlen, "Failed to add the interval timer: %s", strerror(-r));
		goto fail;
	}
	(void)sd_event_source_set_enabled(m->tick, SD_EVENT_OFF);
	*ret = m;
	return 0;
fail:
	manager_free(m);
	return r;
}

struct manager *manager_free(struct manager *m)
{
	if (!m)
		return NULL;
	for (size_t i = 0; i < m->n_devs; i++)
		device_free(m->devs[i]);
	free(m->devs);
	sd_event_source_disable_unref(m->tick);
	observer_free(m->observer);
	sd_event_unref(m->event);
	free(m->sysroot);
	free(m->debugfs);
	free(m->state_dir);
	free(m->runtime_dir);
	free(m->record_path);
	free(m);
	return NULL;
}

void manager_set_callbacks(struct manager *m, const struct manager_callbacks *cb)
{
	m->cb = *cb;
}

size_t manager_n_devices(const struct manager *m)
{
	return m->n_devs;
}

struct device *manager_device(const struct manager *m, size_t i)
{
	return i < m->n_devs ? m->devs[i] : NULL;
}

struct device *manager_find(const struct manager *m, const char *device)
{
	struct blockdev bd;
	char err[256];

	if (!device)
		return NULL;
	for (size_t i = 0; i < m->n_devs; i++)
		if (strcmp(m->devs[i]->dev.name, device) == 0)
			return m->devs[i];
	/* A /dev path or another name for the same disk. */
	if (blockdev_resolve(m->o.sysroot, device, &bd, err, sizeof(err)) < 0)
		return NULL;
	for (size_t i = 0; i < m->n_devs; i++)
		if (m->devs[i]->dev.kdev == bd.kdev)
			return m->devs[i];
	return NULL;
}

static struct device *find_or_fail(const struct manager *m, const char *device, char *err, size_t errlen)
{
	struct device *d = manager_find(m, device);

	if (!d)
		snprintf(err, errlen, "%.64s has no goal (see ListDevices)", device ? device : "(null)");
	return d;
}

int manager_set_goal(struct manager *m, const char *device, const char *goal_text,
		     char *err, size_t errlen)
{
	struct device *d, **devs;
	struct blockdev bd;
	struct goal g;
	int r;

	r = goal_parse(goal_text, &g, err, errlen);
	if (r < 0)
		return r;
	d = manager_find(m, device);
	if (d) {
		device_set_goal(d, &g);
		return 0;
	}
	r = blockdev_resolve(m->o.sysroot, device, &bd, err, errlen);
	if (r < 0)
		return r;
	if (m->n_devs >= m->o.max_devices) {
		snprintf(err, errlen, "Already tuning %zu devices, the most the observer was sized for "
			 "(MaxDevices)", m->n_devs);
		return -ENOSPC;
	}
	devs = realloc(m->devs, (m->n_devs + 1) * sizeof(*devs));
	if (!devs)
		return -ENOMEM;
	m->devs = devs;
	r = device_new(m, &bd, &g, &d, err, errlen);
	if (r < 0)
		return r;
	m->devs[m->n_devs++] = d;
	update_tick(m);
	if (m->cb.device_added)
		m->cb.device_added(d, m->cb.userdata);
	return 0;
}

int manager_clear_goal(struct manager *m, const char *device, char *err, size_t errlen)
{
	struct device *d = find_or_fail(m, device, err, errlen);
	size_t i;

	if (!d)
		return -ENODEV;
	for (i = 0; m->devs[i] != d; i++)
		;
	if (m->cb.device_removed)
		m->cb.device_removed(d, m->cb.userdata);
	memmove(&m->devs[i], &m->devs[i + 1], (m->n_devs - i - 1) * sizeof(*m->devs));
	m->n_devs--;
	log_info("%s: goal cleared", d->dev.name);
	device_free(d);
	update_tick(m);
	return 0;
}

int manager_pause(struct manager *m, const char *device, char *err, size_t errlen)
{
	struct device *d = find_or_fail(m, device, err, errlen);

	if (!d)
		return -ENODEV;
	device_pause(d);
	return 0;
}

int manager_resume(struct manager *m, const char *device, char *err, size_t errlen)
{
	struct device *d = find_or_fail(m, device, err, errlen);
	int r;

	if (!d)
		return -ENODEV;
	r = device_resume(d);
	if (r < 0)
		snprintf(err, errlen, "Failed to resume %s: %s", d->dev.name, strerror(-r));
	return r;
}

int manager_reset(struct manager *m, const char *device, char *err, size_t errlen)
{
	struct device *d = find_or_fail(m, device, err, errlen);
	int r;

	if (!d)
		return -ENODEV;
	r = device_reset(d);
	if (r < 0)
		snprintf(err, errlen, "Failed to restore %s: %s", d->dev.name, strerror(-r));
	return r;
}

void manager_resume_all(struct manager *m)
{
	for (size_t i = 0; i < m->n_devs; i++)
		if (m->devs[i]->overridden || m->devs[i]->paused)
			(void)device_resume(m->devs[i]);
}

const char *device_name(const struct device *d)
{
	return d->dev.name;
}

const __u64 *device_last_hist(const struct device *d, int op)
{
	if (!d->have_interval || (op != KT_OP_READ && op != KT_OP_WRITE))
		return NULL;
	return d->iv->op[op].hist[KT_LAT_TOTAL];
}

static void op_status(const struct device *d, int op, struct device_op_status *out)
{
	const struct kt_op_interval *o = &d->iv->op[op];

	memset(out, 0, sizeof(*out));
	out->depth = d->iv->kyber_depth[op];
	if (!d->have_interval)
		return;
	out->iops = o->iops;
	if (o->lat[KT_LAT_TOTAL].count) {
		out->p50_ns = o->lat[KT_LAT_TOTAL].pct[KT_P50];
		out->p99_ns = o->lat[KT_LAT_TOTAL].pct[KT_P99];
	}
}

void device_get_status(const struct device *d, struct device_status *out)
{
	struct sched_info si;

	memset(out, 0, sizeof(*out));
	out->name = d->dev.name;
	out->id = d->id;
	if (kyber_sysfs_read_scheduler(d->m->o.sysroot, d->dev.name, &si) == 0)
		memcpy(out->scheduler, si.current, sizeof(out->scheduler));
	goal_format(&d->goal, out->goal, sizeof(out->goal));
	out->state = d->state;
	out->reason = d->reason;
	out->current = d->written;
	out->original = d->original;
	out->interval_ns = d->have_interval ? d->iv->duration_ns : 0;
	out->metric_ns = d->last.goal_known ? d->last.metric_ns : 0;
	out->goal_met = d->last.goal_known ? d->last.goal_met : -1;
	op_status(d, KT_OP_READ, &out->read);
	op_status(d, KT_OP_WRITE, &out->write);
	out->changes = d->changes;
}
