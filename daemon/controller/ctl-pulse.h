/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A pulse, the sequence of write targets that takes Kyber's write depth
 * one step deeper, from 1 to 2 or from deeper (ctl-grow.c has why and
 * when). Pure: the
 * caller (tests/unit/tuner-loop.c in the simulator, daemon/device-pulse.c
 * on the device) polls it with Kyber's write depth and the clock, and
 * writes what it says. The simulator polls every PULSE_POLL_NS; the daemon
 * on each of Kyber's depth changes and at each phase's end.
 *
 *   grow     the decision's pulse target, until Kyber changes the depth
 *            (or PULSE_GROW_MAX_NS: then the decision's own targets);
 *   drain    the drain target, while the queue built at the old depth drains
 *            (one P99 of it);
 *   measure  the same target for as long again, the writes' P99 at the
 *            new depth measured meanwhile; then that P99 / PULSE_HOLD_AT,
 *            the writes' P99 in Kyber's bucket 3, where it holds them.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "controller.h"

/* How often the caller polls: the samples bucketed against the grow
 * target after the decision that grew the depth must be under 1% of
 * Kyber's next decision (500 samples: 3 ms of 1,600 writes/s). On the
 * real kernel a pulse followed every 10 ms grew the writes to depth 3,
 * every 1 ms to 2 (docs/tuner.md). */
#define PULSE_POLL_NS 1000000ULL
/* Kyber decides on 500 samples or after a second, whichever first: a
 * pulse that has not grown the writes by then will not. */
#define PULSE_GROW_MAX_NS 1000000000ULL
/* The hold puts the measured P99 at this x the target, in bucket 3 (3/4
 * to 1): neither cut on a congested window nor grown on a noisy one. */
#define PULSE_HOLD_AT 0.85

enum pulse_phase { PULSE_IDLE, PULSE_GROW, PULSE_DRAIN, PULSE_MEASURING };

enum pulse_action {
	PULSE_WAIT,		/* nothing to write; poll again */
	PULSE_WRITE,		/* write *write_ns, poll again */
	PULSE_MEASURE,		/* nothing to write; the measurement starts now */
	PULSE_DONE,		/* write *write_ns; the pulse is over */
};

struct pulse {
	enum pulse_phase phase;
	uint64_t phase_start_ns;
	uint32_t depth_before;
	uint64_t drain_write_ns, drain_ns;
	uint64_t final_write_ns;	/* the decision's write target */
};

/* A decision with a pulse (d->pulse_write_ns): starts it at now_ns with
 * Kyber's write depth, and returns the write target to write first. */
uint64_t ctl_pulse_start(struct pulse *p, const struct ctl_decision *d, uint32_t depth, uint64_t now_ns);

/* One poll while not idle. measured_p99_ns: the writes' total P99 since
 * the measurement started (0: none known). */
enum pulse_action ctl_pulse_poll(struct pulse *p, uint32_t depth, uint64_t now_ns, uint64_t measured_p99_ns,
			     uint64_t *write_ns);

static inline bool ctl_pulse_active(const struct pulse *p)
{
	return p->phase != PULSE_IDLE;
}
