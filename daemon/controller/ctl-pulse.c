/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "ctl-internal.h"
#include "ctl-pulse.h"

uint64_t ctl_pulse_start(struct pulse *p, const struct ctl_decision *d, uint32_t depth, uint64_t now_ns)
{
	memset(p, 0, sizeof(*p));
	p->phase = PULSE_GROW;
	p->phase_start_ns = now_ns;
	p->depth_before = depth;
	p->drain_write_ns = d->pulse_drain_write_ns;
	p->drain_ns = d->pulse_drain_ns;
	p->final_write_ns = d->targets.write_ns;
	return d->pulse_write_ns;
}

static void next_phase(struct pulse *p, enum pulse_phase phase, uint64_t now_ns)
{
	p->phase = phase;
	p->phase_start_ns = now_ns;
}

enum pulse_action ctl_pulse_poll(struct pulse *p, uint32_t depth, uint64_t now_ns, uint64_t measured_p99_ns,
			     uint64_t *write_ns)
{
	uint64_t in_phase = now_ns - p->phase_start_ns;

	switch (p->phase) {
	case PULSE_GROW:
		if (depth != p->depth_before) {
			next_phase(p, PULSE_DRAIN, now_ns);
			*write_ns = p->drain_write_ns;
			return PULSE_WRITE;
		}
		if (in_phase < PULSE_GROW_MAX_NS)
			return PULSE_WAIT;
		break;	/* Kyber did not grow them: the decision's targets */
	case PULSE_DRAIN:
		if (in_phase < p->drain_ns)
			return PULSE_WAIT;
		next_phase(p, PULSE_MEASURING, now_ns);
		return PULSE_MEASURE;
	case PULSE_MEASURING:
		if (in_phase < p->drain_ns)
			return PULSE_WAIT;
		if (measured_p99_ns)
			p->final_write_ns = ctl_clamp_target((double)measured_p99_ns / PULSE_HOLD_AT);
		break;
	case PULSE_IDLE:
	default:
		return PULSE_WAIT;
	}
	p->phase = PULSE_IDLE;
	*write_ns = p->final_write_ns;
	return PULSE_DONE;
}
