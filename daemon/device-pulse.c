/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A decision's grow pulse on the device (ctl-pulse.h has the sequence):
 * its first targets written at once, the next when Kyber changes the
 * writes' depth (the observer's ring buffer, through the manager) or when
 * a phase's time is up (a timer). The writes' P99 for the hold is measured
 * between two snapshots of the device's counters. Before each write, the
 * targets must still be the ones it wrote: an operator's change ends the
 * pulse and the device is overridden. No interval is judged
 * while a pulse is under way (tune_step() waits), and the one after it
 * starts after the settle time, as after any change.
 */
#include <stdlib.h>

#include "ctl-pulse.h"
#include "device-internal.h"
#include "interval.h"
#include "log.h"

static uint64_t now_ns(const struct device *d)
{
	uint64_t usec = 0;

	(void)sd_event_now(d->env.event, CLOCK_MONOTONIC, &usec);
	return usec * 1000;
}

static uint64_t phase_end_ns(const struct device *d)
{
	const struct pulse *p = &d->pulse;

	return p->phase_start_ns + (p->phase == PULSE_GROW ? PULSE_GROW_MAX_NS : p->drain_ns);
}

/* The writes' total P99 since the measurement began; 0: not known. */
static uint64_t measured_p99(struct device *d)
{
	struct kt_snapshot *now = calloc(1, sizeof(*now));
	struct kt_interval *iv = calloc(1, sizeof(*iv));
	uint64_t p99 = 0;

	if (now && iv && d->pulse_mark && observer_snapshot(d->env.observer, d->ms.slot, now) >= 0 &&
	    interval_compute(d->pulse_mark, now, iv) >= 0 && iv->op[KT_OP_WRITE].lat[KT_LAT_TOTAL].count)
		p99 = iv->op[KT_OP_WRITE].lat[KT_LAT_TOTAL].pct[KT_P99];
	free(now);
	free(iv);
	return p99;
}

static int on_pulse_timer(sd_event_source *s, uint64_t usec, void *userdata);

static void finish(struct device *d)
{
	device_pulse_stop(d);
	device_arm_settle(d);
}

/* Without its timer a pulse would never end, and tune_step() would wait
 * on it for good: it ends here, and the next decision sets the targets. */
static void arm(struct device *d)
{
	d->pulse_timer = sd_event_source_disable_unref(d->pulse_timer);
	if (sd_event_add_time(d->env.event, &d->pulse_timer, CLOCK_MONOTONIC, phase_end_ns(d) / 1000, 100,
			      on_pulse_timer, d) < 0) {
		log_dev_warning(d->dev.name, "failed to arm the pulse's timer: pulse ended");
		finish(d);
	}
}

/* false: the operator changed the device since the last write, and the
 * pulse ends without writing over it (the device is overridden). */
static bool write_pulse_target(struct device *d, uint64_t write_ns)
{
	struct kyber_targets t = { d->written.read_ns, write_ns };

	if (device_check_override(d)) {
		device_pulse_stop(d);
		return false;
	}
	if (device_write_targets(d, &t) < 0)
		log_dev_warning(d->dev.name, "failed to write the pulse's write target");
	else
		d->changes++;
	return true;
}

/* The sequence's next step, now. */
static void step(struct device *d)
{
	bool ending = d->pulse.phase == PULSE_MEASURING && now_ns(d) >= phase_end_ns(d);
	uint64_t w = 0;
	enum pulse_action a = ctl_pulse_poll(&d->pulse, d->pulse_depth, now_ns(d), ending ? measured_p99(d) : 0, &w);

	switch (a) {
	case PULSE_WAIT:
		return;
	case PULSE_MEASURE:
		d->pulse_mark = calloc(1, sizeof(*d->pulse_mark));
		if (d->pulse_mark && observer_snapshot(d->env.observer, d->ms.slot, d->pulse_mark) < 0) {
			free(d->pulse_mark);
			d->pulse_mark = NULL;
		}
		break;
	case PULSE_WRITE:
		if (!write_pulse_target(d, w))
			return;
		break;
	case PULSE_DONE:
		if (!write_pulse_target(d, w))
			return;
		log_dev_info(d->dev.name, "pulse done: write depth %u, write target %llu", d->pulse_depth,
			     (unsigned long long)w);
		finish(d);
		return;
	}
	arm(d);
}

static int on_pulse_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct device *d = userdata;

	if (ctl_pulse_active(&d->pulse))
		step(d);
	return 0;
}

void device_pulse_on_adjust(struct device *d, unsigned slot, int op, uint32_t depth)
{
	if (!ctl_pulse_active(&d->pulse) || !d->ms.watching || d->ms.slot != slot || op != KT_OP_WRITE)
		return;
	d->pulse_depth = depth;
	step(d);
}

int device_pulse_start(struct device *d, const struct ctl_decision *dec)
{
	struct kyber_targets first = dec->targets;
	uint32_t depth = d->ms.iv ? d->ms.iv->kyber_depth[KT_OP_WRITE] : 0;
	int r;

	first.write_ns = ctl_pulse_start(&d->pulse, dec, depth, now_ns(d));
	d->pulse_depth = depth;
	r = device_write_targets(d, &first);
	if (r < 0) {
		d->pulse.phase = PULSE_IDLE;
		return r;
	}
	arm(d);
	return 0;
}

bool device_pulse_active(const struct device *d)
{
	return ctl_pulse_active(&d->pulse);
}

void device_pulse_stop(struct device *d)
{
	d->pulse.phase = PULSE_IDLE;
	d->pulse_timer = sd_event_source_disable_unref(d->pulse_timer);
	free(d->pulse_mark);
	d->pulse_mark = NULL;
}
