/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The Device objects: /org/kybertune/KyberTune1/device/<name>, one per
 * tuned device, served by one fallback vtable (docs/dbus.md). Properties
 * come from device_get_status(), which holds what the last interval left
 * (no sysfs read per property); PropertiesChanged goes out once
 * per interval from the manager's interval callback, naming what changed
 * since the previous one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bus-auth.h"
#include "bus-internal.h"
#include "hist.h"
#include "log.h"
#include "macro.h"

/* The Device properties (shared/bus-api.h): name, type, and whether
 * PropertiesChanged announces them. */
static const struct {
	const char *name;
	char type;
	bool constant;
} props[_BUS_DEVICE_PROPERTY_MAX] = {
#define PROPERTY_CONSTANT_CONST true
#define PROPERTY_CONSTANT_CHANGE false
#define PROP_ENTRY(id, member, sig, kind, field) \
	[BUS_DEVICE_##id] = { member, sig[0], PROPERTY_CONSTANT_##kind },
	BUS_DEVICE_PROPERTIES(PROP_ENTRY)
#undef PROP_ENTRY
};

struct prop_value {
	const char *s;
	uint64_t t;
	double d;
};

static void prop_value(const struct device_status *s, int p, struct prop_value *v)
{
	memset(v, 0, sizeof(*v));
	switch (p) {
	case BUS_DEVICE_NAME: v->s = s->name; break;
	case BUS_DEVICE_ID: v->s = s->id; break;
	case BUS_DEVICE_SCHEDULER: v->s = s->scheduler; break;
	case BUS_DEVICE_SCHEDULER_REASON: v->s = s->scheduler_reason; break;
	case BUS_DEVICE_SCHEDULER_SWITCHES: v->t = s->scheduler_switches; break;
	case BUS_DEVICE_ORIGINAL_CPU_PER_IO: v->t = s->original_cost_ns; break;
	case BUS_DEVICE_KYBER_CPU_PER_IO: v->t = s->kyber_cost_ns; break;
	case BUS_DEVICE_GOAL: v->s = s->goal; break;
	case BUS_DEVICE_GOAL_SOURCE: v->s = goal_source_to_string(s->source); break;
	case BUS_DEVICE_STATE: v->s = ctl_state_to_string(s->state); break;
	case BUS_DEVICE_REASON: v->s = s->reason; break;
	case BUS_DEVICE_READ_TARGET: v->t = s->current.read_ns; break;
	case BUS_DEVICE_WRITE_TARGET: v->t = s->current.write_ns; break;
	case BUS_DEVICE_ORIGINAL_SCHEDULER: v->s = s->original.scheduler; break;
	case BUS_DEVICE_ORIGINAL_READ_TARGET: v->t = s->original.was_kyber ? s->original.targets.read_ns : 0; break;
	case BUS_DEVICE_ORIGINAL_WRITE_TARGET: v->t = s->original.was_kyber ? s->original.targets.write_ns : 0; break;
	case BUS_DEVICE_READ_P50: v->t = s->read.p50_ns; break;
	case BUS_DEVICE_READ_P99: v->t = s->read.p99_ns; break;
	case BUS_DEVICE_WRITE_P50: v->t = s->write.p50_ns; break;
	case BUS_DEVICE_WRITE_P99: v->t = s->write.p99_ns; break;
	case BUS_DEVICE_READ_IOPS: v->d = s->read.iops; break;
	case BUS_DEVICE_WRITE_IOPS: v->d = s->write.iops; break;
	case BUS_DEVICE_READ_DEPTH: v->t = s->read.depth; break;
	case BUS_DEVICE_WRITE_DEPTH: v->t = s->write.depth; break;
	case BUS_DEVICE_GOAL_METRIC: v->t = s->metric_ns; break;
	case BUS_DEVICE_GOAL_MET: v->t = s->goal_met > 0; break;
	case BUS_DEVICE_CHANGES: v->t = s->changes; break;
	case BUS_DEVICE_INTERVAL: v->t = s->interval_ns; break;
	}
	if (props[p].type == 's' && !v->s)
		v->s = "";
}

static bool prop_equal(const struct device_status *a, const struct device_status *b, int p)
{
	struct prop_value x, y;

	prop_value(a, p, &x);
	prop_value(b, p, &y);
	switch (props[p].type) {
	case 's': return strcmp(x.s, y.s) == 0;
	case 'd': return x.d == y.d;
	default: return x.t == y.t;
	}
}

static int property_get(sd_bus *bus, const char *path, const char *interface, const char *property,
			sd_bus_message *reply, void *userdata, sd_bus_error *error)
{
	struct bus_device *bd = userdata;
	struct device_status s;
	struct prop_value v;
	int p;

	for (p = 0; p < _BUS_DEVICE_PROPERTY_MAX; p++)
		if (strcmp(props[p].name, property) == 0)
			break;
	if (p == _BUS_DEVICE_PROPERTY_MAX)
		return -ENOENT;
	device_get_status(bd->d, &s);
	prop_value(&s, p, &v);
	switch (props[p].type) {
	case 's': return sd_bus_message_append_basic(reply, 's', v.s);
	case 'd': return sd_bus_message_append_basic(reply, 'd', &v.d);
	case 'u': {
		uint32_t u = (uint32_t)v.t;

		return sd_bus_message_append_basic(reply, 'u', &u);
	}
	case 'b': {
		int b = !!v.t;

		return sd_bus_message_append_basic(reply, 'b', &b);
	}
	default: return sd_bus_message_append_basic(reply, 't', &v.t);
	}
}

static int method_get_histogram(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	struct bus_device *bd = userdata;
	const char *op;
	const __u64 *h;
	int r, o;

	r = sd_bus_message_read(msg, "s", &op);
	if (r < 0)
		return r;
	if (strcmp(op, "read") == 0)
		o = KT_OP_READ;
	else if (strcmp(op, "write") == 0)
		o = KT_OP_WRITE;
	else
		return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
					 "Invalid op '%.32s': expected read or write", op);
	r = sd_bus_message_new_method_return(msg, &reply);
	if (r < 0)
		return r;
	r = sd_bus_message_open_container(reply, 'a', "(tt)");
	if (r < 0)
		return r;
	/* NULL before the first interval: an empty histogram. */
	h = device_last_hist(bd->d, o);
	for (uint32_t i = 0; h && i < KT_HIST_BUCKETS; i++) {
		if (!h[i])
			continue;
		r = sd_bus_message_append(reply, "(tt)", (uint64_t)kt_hist_lower(i), (uint64_t)h[i]);
		if (r < 0)
			return r;
	}
	r = sd_bus_message_close_container(reply);
	if (r < 0)
		return r;
	return sd_bus_send(NULL, reply, NULL);
}

/* (cgroup, weight) of every weight set on the disk. */
static int property_get_weights(sd_bus *bus, const char *path, const char *interface, const char *property,
				sd_bus_message *reply, void *userdata, sd_bus_error *error)
{
	struct bus_device *bd = userdata;
	int r;

	r = sd_bus_message_open_container(reply, 'a', "(su)");
	for (size_t i = 0; r >= 0 && i < device_n_weights(bd->d); i++) {
		const struct device_weight *w = device_weight(bd->d, i);

		r = sd_bus_message_append(reply, "(su)", w->cgroup, w->weight);
	}
	return r < 0 ? r : sd_bus_message_close_container(reply);
}

/* Per cgroup sharing the disk: the last period's figures and the limits
 * in force (docs/dbus.md, GetShares). */
static int method_get_shares(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	_cleanup_free_ struct device_share_row *rows = NULL;
	struct bus_device *bd = userdata;
	size_t n;
	int r;

	r = device_get_shares(bd->d, &rows, &n);
	if (r < 0)
		return r;
	r = sd_bus_message_new_method_return(msg, &reply);
	if (r < 0)
		return r;
	r = sd_bus_message_open_container(reply, 'a', BUS_SHARE_ROW);
	for (size_t i = 0; r >= 0 && i < n; i++) {
		const struct device_share_row *s = &rows[i];

		r = sd_bus_message_append(reply, BUS_SHARE_ROW, s->cgroup, s->weight, (int)s->weighted, s->share,
					  s->read_iops, s->write_iops, s->read_bps, s->write_bps,
					  s->read_p99_ns, s->write_p99_ns, s->limit.read_iops, s->limit.write_iops,
					  s->limit.read_bps, s->limit.write_bps);
	}
	if (r >= 0)
		r = sd_bus_message_close_container(reply);
	return r < 0 ? r : sd_bus_send(NULL, reply, NULL);
}

#define PROPERTY_FLAGS_CONST SD_BUS_VTABLE_PROPERTY_CONST
#define PROPERTY_FLAGS_CHANGE SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE

const sd_bus_vtable bus_device_vtable[] = {
	SD_BUS_VTABLE_START(0),
#define PROP_VTABLE(id, member, sig, kind, field) \
	SD_BUS_PROPERTY(member, sig, property_get, 0, PROPERTY_FLAGS_##kind),
	BUS_DEVICE_PROPERTIES(PROP_VTABLE)
#undef PROP_VTABLE
	SD_BUS_PROPERTY("Weights", "a(su)", property_get_weights, 0, 0),
	SD_BUS_METHOD_WITH_ARGS("GetHistogram", SD_BUS_ARGS("s", op), SD_BUS_RESULT("a(tt)", buckets),
				method_get_histogram, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("GetShares", SD_BUS_NO_ARGS, SD_BUS_RESULT("a" BUS_SHARE_ROW, shares),
				method_get_shares, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_SIGNAL_WITH_ARGS("TargetsChanged",
				SD_BUS_ARGS("t", old_read_ns, "t", old_write_ns, "t", new_read_ns,
					    "t", new_write_ns, "s", reason), 0),
	SD_BUS_SIGNAL_WITH_ARGS("GoalViolated", SD_BUS_ARGS("t", metric_ns, "t", goal_ns), 0),
	SD_BUS_VTABLE_END
};

struct bus_device *bus_device_get(const struct bus *b, const struct device *d)
{
	for (size_t i = 0; i < b->n_devs; i++)
		if (b->devs[i]->d == d)
			return b->devs[i];
	return NULL;
}

int bus_device_find(sd_bus *bus, const char *path, const char *interface, void *userdata,
		    void **ret_found, sd_bus_error *error)
{
	struct bus *b = userdata;

	for (size_t i = 0; i < b->n_devs; i++)
		if (strcmp(b->devs[i]->path, path) == 0) {
			*ret_found = b->devs[i];
			return 1;
		}
	return 0;
}

int bus_device_enumerate(sd_bus *bus, const char *prefix, void *userdata, char ***ret_nodes,
			 sd_bus_error *error)
{
	struct bus *b = userdata;
	char **nodes = calloc(b->n_devs + 1, sizeof(char *));

	if (!nodes)
		return -ENOMEM;
	for (size_t i = 0; i < b->n_devs; i++) {
		nodes[i] = strdup(b->devs[i]->path);
		if (!nodes[i]) {
			for (size_t j = 0; j < i; j++)
				free(nodes[j]);
			free(nodes);
			return -ENOMEM;
		}
	}
	*ret_nodes = nodes;
	return 0;
}

int bus_device_add(struct bus *b, struct device *d, bool announce)
{
	struct bus_device *bd, **devs;
	int r;

	if (bus_device_get(b, d))
		return 0;
	devs = realloc(b->devs, (b->n_devs + 1) * sizeof(*devs));
	if (!devs)
		return -ENOMEM;
	b->devs = devs;
	bd = calloc(1, sizeof(*bd));
	if (!bd)
		return -ENOMEM;
	bd->bus = b;
	bd->d = d;
	r = sd_bus_path_encode(BUS_DEVICE_PATH_PREFIX, device_name(d), &bd->path);
	if (r < 0) {
		free(bd);
		return r;
	}
	b->devs[b->n_devs++] = bd;
	if (!announce)
		return 0;
	r = sd_bus_emit_object_added(b->bus, bd->path);
	if (r < 0)
		log_warning_errno(r, "Failed to announce %s on the bus: %m", bd->path);
	r = sd_bus_emit_signal(b->bus, BUS_PATH, BUS_MANAGER_INTERFACE, "DeviceAdded", "so",
			       device_name(d), bd->path);
	if (r < 0)
		log_warning_errno(r, "Failed to emit DeviceAdded for %s: %m", device_name(d));
	return 0;
}

void bus_device_remove(struct bus *b, struct device *d)
{
	struct bus_device *bd = bus_device_get(b, d);
	size_t i;
	int r;

	if (!bd)
		return;
	/* InterfacesRemoved looks the object up: while it still exists. */
	r = sd_bus_emit_object_removed(b->bus, bd->path);
	if (r < 0)
		log_warning_errno(r, "Failed to announce the removal of %s: %m", bd->path);
	r = sd_bus_emit_signal(b->bus, BUS_PATH, BUS_MANAGER_INTERFACE, "DeviceRemoved", "so",
			       device_name(d), bd->path);
	if (r < 0)
		log_warning_errno(r, "Failed to emit DeviceRemoved for %s: %m", device_name(d));
	for (i = 0; b->devs[i] != bd; i++)
		;
	memmove(&b->devs[i], &b->devs[i + 1], (b->n_devs - i - 1) * sizeof(*b->devs));
	b->n_devs--;
	free(bd->path);
	free(bd);
}

void bus_device_free_all(struct bus *b)
{
	for (size_t i = 0; i < b->n_devs; i++) {
		free(b->devs[i]->path);
		free(b->devs[i]);
	}
	free(b->devs);
	b->devs = NULL;
	b->n_devs = 0;
}

void bus_device_interval(struct bus *b, struct device *d)
{
	struct bus_device *bd = bus_device_get(b, d);
	const char *changed[_BUS_DEVICE_PROPERTY_MAX + 1];
	struct device_status s;
	size_t n = 0;
	int r;

	if (!bd)
		return;
	device_get_status(d, &s);
	for (int p = 0; p < _BUS_DEVICE_PROPERTY_MAX; p++)
		if (!props[p].constant && (!bd->announced || !prop_equal(&bd->last, &s, p)))
			changed[n++] = props[p].name;
	changed[n] = NULL;
	bd->last = s;
	snprintf(bd->last_reason, sizeof(bd->last_reason), "%s", s.reason ? s.reason : "");
	bd->last.reason = bd->last_reason;
	bd->announced = true;
	if (!n)
		return;
	/* One signal per interval with everything that changed in it. */
	r = sd_bus_emit_properties_changed_strv(b->bus, bd->path, BUS_DEVICE_INTERFACE, (char **)changed);
	if (r < 0)
		log_debug_errno(r, "Failed to emit PropertiesChanged for %s: %m", device_name(d));
}

void bus_device_targets_changed(struct bus *b, struct device *d, const struct kyber_targets *old,
				const struct kyber_targets *new, const char *reason)
{
	struct bus_device *bd = bus_device_get(b, d);
	int r;

	if (!bd)
		return;
	r = sd_bus_emit_signal(b->bus, bd->path, BUS_DEVICE_INTERFACE, "TargetsChanged", "tttts",
			       old->read_ns, old->write_ns, new->read_ns, new->write_ns, reason ?: "");
	if (r < 0)
		log_debug_errno(r, "Failed to emit TargetsChanged for %s: %m", device_name(d));
}

void bus_device_goal_violated(struct bus *b, struct device *d, uint64_t metric_ns, uint64_t goal_ns)
{
	struct bus_device *bd = bus_device_get(b, d);
	int r;

	if (!bd)
		return;
	r = sd_bus_emit_signal(b->bus, bd->path, BUS_DEVICE_INTERFACE, "GoalViolated", "tt", metric_ns, goal_ns);
	if (r < 0)
		log_debug_errno(r, "Failed to emit GoalViolated for %s: %m", device_name(d));
}
