/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a tuned device shows outside, all from what its last interval and
 * decision left in it, never from sysfs: the status the D-Bus properties
 * read, the --json line and the flight record of each interval.
 */
#include <string.h>
#include <time.h>

#include "log.h"
#include "device-internal.h"
#include "metrics.h"
#include "record.h"
#include "report.h"
#include "time-util.h"

const char *device_name(const struct device *d)
{
	return d->dev.name;
}

const __u64 *device_last_hist(const struct device *d, int op)
{
	if (!d->have_interval || (op != KT_OP_READ && op != KT_OP_WRITE))
		return NULL;
	return d->ms.iv->op[op].hist[KT_LAT_TOTAL];
}

static void op_status(const struct device *d, int op, struct device_op_status *out)
{
	const struct kt_op_interval *o = &d->ms.iv->op[op];

	memset(out, 0, sizeof(*out));
	out->depth = d->ms.iv->kyber_depth[op];
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
	memset(out, 0, sizeof(*out));
	out->name = d->dev.name;
	out->id = d->id;
	memcpy(out->scheduler, d->scheduler, sizeof(out->scheduler));
	out->scheduler_reason = d->sched.reason;
	out->scheduler_switches = d->sched.switches;
	(void)sched_cost_get(&d->cost, SCHED_RUN_ORIGINAL, &out->original_cost_ns);
	(void)sched_cost_get(&d->cost, SCHED_RUN_KYBER, &out->kyber_cost_ns);
	/* A disk tuned for its cgroups' weights alone has no goal of its own. */
	if (d->weights_only)
		out->goal[0] = 0;
	else
		goal_format(&d->goal, out->goal, sizeof(out->goal));
	out->state = d->state;
	out->reason = d->reason;
	out->current = d->written;
	out->original = d->original;
	out->interval_ns = d->have_interval ? d->ms.iv->duration_ns : 0;
	out->metric_ns = d->last.goal_known ? d->last.metric_ns : 0;
	out->goal_met = d->last.goal_known ? d->last.goal_met : -1;
	op_status(d, KT_OP_READ, &out->read);
	op_status(d, KT_OP_WRITE, &out->write);
	out->changes = d->changes;
	out->source = d->source;
}

void device_get_metrics(const struct device *d, struct metrics_device *out)
{
	*out = (struct metrics_device) {
		.name = d->dev.name,
		.totals = d->ms.totals,
		.has_targets = d->sched.run == SCHED_RUN_KYBER,
		.target_ns = { [KT_OP_READ] = d->written.read_ns, [KT_OP_WRITE] = d->written.write_ns },
		.state = d->state,
		.has_goal = d->goal.has_read,
		.goal_pct = d->goal.read_pct,
		.goal_ns = d->goal.read_ns,
		.goal_met = d->last.goal_known ? d->last.goal_met : -1,
		.target_changes = d->changes,
		.scheduler_switches = d->sched.switches,
	};
	if (d->have_interval)
		memcpy(out->depth, d->ms.iv->kyber_depth, sizeof(out->depth));
}

void device_report_json(const struct device *d, bool changed)
{
	char goal[GOAL_TEXT_MAX];
	const struct ctl_decision *dec = &d->last;
	struct report_tuner rt = {
		.goal = goal_format(&d->goal, goal, sizeof(goal)),
		.state = ctl_state_to_string(d->state),
		.reason = d->reason,
		.metric_ns = dec->goal_known ? dec->metric_ns : 0,
		.goal_met = dec->goal_known ? dec->goal_met : -1,
		.changed = changed,
	};
	struct report_device rd = {
		.name = d->dev.name,
		.scheduler = d->scheduler,
		.has_targets = d->sched.run == SCHED_RUN_KYBER,
		.targets = d->written,
		.iv = d->ms.iv,
		.tuner = &rt,
	};

	(void)sched_cost_get(&d->cost, SCHED_RUN_ORIGINAL, &rt.original_cpu_per_io_ns);
	(void)sched_cost_get(&d->cost, SCHED_RUN_KYBER, &rt.kyber_cpu_per_io_ns);
	rd.realtime_ns = now_ns(CLOCK_REALTIME);
	report_json(stdout, &rd);
	fflush(stdout);
}

static void op_summary(const struct kt_op_interval *o, uint32_t depth, Kybertune__OpSummary *out)
{
	const struct kt_lat_summary *t = &o->lat[KT_LAT_TOTAL], *dv = &o->lat[KT_LAT_DEVICE];

	kybertune__op_summary__init(out);
	out->iops = o->iops;
	out->completed = o->completed;
	out->depth = depth;
	if (t->count) {
		out->p50_ns = t->pct[KT_P50];
		out->p90_ns = t->pct[KT_P90];
		out->p99_ns = t->pct[KT_P99];
		out->p999_ns = t->pct[KT_P999];
		out->mean_ns = t->mean_ns;
	}
	if (dv->count) {
		out->device_p90_ns = dv->pct[KT_P90];
		out->device_p99_ns = dv->pct[KT_P99];
	}
}

/* One flight-recorder record for this interval. */
void device_record_interval(struct device *d, bool changed)
{
	Kybertune__IntervalRecord rec = KYBERTUNE__INTERVAL_RECORD__INIT;
	Kybertune__OpSummary rd, wr;
	char goal[GOAL_TEXT_MAX];
	int r;

	op_summary(&d->ms.iv->op[KT_OP_READ], d->ms.iv->kyber_depth[KT_OP_READ], &rd);
	op_summary(&d->ms.iv->op[KT_OP_WRITE], d->ms.iv->kyber_depth[KT_OP_WRITE], &wr);
	rec.time_ns = now_ns(CLOCK_REALTIME);
	rec.device = d->dev.name;
	rec.interval_ns = d->ms.iv->duration_ns;
	rec.goal = goal_format(&d->goal, goal, sizeof(goal));
	rec.state = (char *)ctl_state_to_string(d->state);
	rec.reason = d->reason;
	rec.read_target_ns = d->written.read_ns;
	rec.write_target_ns = d->written.write_ns;
	rec.changed = changed;
	rec.metric_ns = d->last.goal_known ? d->last.metric_ns : 0;
	rec.read = &rd;
	rec.write = &wr;
	r = recorder_append(d->env.recorder, &rec);
	if (r < 0)
		log_dev_warning_errno(d->dev.name, r, "failed to append to the flight recorder: %m");
}
