/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The law's pulses (ctl-pulse.h runs the sequence): where no single write
 * target gives the writes one more depth, a decision with a grow target,
 * a drain target and a hold measured at the new depth. When each comes,
 * and with which targets; both are probes (ctl-probe.c), and a miss
 * fails them as it fails a step down (ctl-protect.c, on_miss()).
 */
#include "ctl-internal.h"

/*
 * How far over its target a domain's P99 must be for Kyber to grow it by
 * at least one request: it grows a domain with a P99 in bucket b >= 4 of
 * its target to depth x (b + 1)/4, truncated (from 1 only in bucket 7,
 * from 2 and 3 in bucket 5, from 4 up in bucket 4). The middle of that
 * bucket, clear of the P99's noise on both sides; bucket 7 has no top,
 * and CTL_PULSE_GROW stands in for its middle.
 */
static double step_grow_over(uint32_t depth)
{
	unsigned b = 4;

	while (b < 7 && depth * (b + 1) / 4 < depth + 1)
		b++;
	return b == 7 ? CTL_PULSE_GROW : (b + 0.5) / 4;
}

/* A pulse one of Kyber's steps deeper from `depth`, the writes' P99 there
 * at p99 (ctl-pulse.h runs it); a probe, whose hold the next decision
 * adopts as its level. */
static void start_pulse(struct controller *c, struct ctl_decision *d, uint32_t depth, uint64_t p99)
{
	d->pulse_write_ns = ctl_clamp_target((double)p99 / step_grow_over(depth));
	d->pulse_drain_write_ns = ctl_clamp_target((double)p99 / (depth == 1 ? CTL_PULSE_DRAIN : CTL_STEP_DRAIN));
	d->pulse_drain_ns = p99;
	ctl_probe_started(&c->probe, p99);
	ctl_spike_stepped(&c->spike);
	c->probe.adopt = true;
}

/*
 * Out of reach, with the writes at depth 1 and reads within the aim
 * (ctl-aim.c): one more write in flight may cost the reads nothing, and
 * no single target gives it. Kyber grows a depth of 1 only on a P99 over
 * 7/4 of the target, and then the queue built at depth 1 drains at that
 * P99 for a while, so a target low enough to grow the writes grows them
 * again, past 2 (qdlat R256+W256: to 4, reads 12% slower). A pulse does
 * it (ctl-pulse.h): a grow target until Kyber changes the depth, a drain
 * target the draining queue stays under 5/4 of, and a hold measured at
 * the new depth, which the next decision adopts as its level. After a
 * steady run within the aim; as a probe, a miss of the aim fails it and
 * the law goes back up. One that held may come again, as the writes are
 * back at depth 1 after a disturbance; one that failed does not, in this
 * regime. Never in a regime where the goal itself was met: out of reach
 * then is a disturbance's doing.
 */
bool ctl_grow_pulse(struct controller *c, const struct ctl_sample *s, bool settled, struct ctl_decision *d,
		    const char *m, const char *g)
{
	uint64_t p99 = s->write.total_p99_ns;
	double keep_ns;
	int keep;

	if (!c->infeasible || !settled || s->write.kyber_depth != 1 || !p99 || p99 > CTL_PULSE_P99_MAX_NS ||
	    !ctl_probe_aim_due(&c->probe))
		return false;
	keep_ns = (double)p99 / 2 / CTL_PULSE_KEEP_AT;
	keep = ctl_level_at_least(keep_ns);
	if ((double)ctl_level_ns(keep) > keep_ns)
		keep--;
	if (keep >= c->level)
		return false;
	ctl_set_level(c, keep, -1, d);
	start_pulse(c, d, 1, p99);
	ctl_say(d, "read P%g %s steady within goal %s at write depth 1: one more write in flight (write target "
		"%.3gms until Kyber grows them, %.3gms while their queue drains, then one that holds them)",
		c->goal.read_pct, m, g, (double)d->pulse_write_ns / 1e6, (double)d->pulse_drain_write_ns / 1e6);
	return true;
}

/*
 * Reads well under the goal, and the one level that would give the writes
 * more is the open point, which missed it (the law's first miss, before
 * the cut): a target low enough for Kyber to grow the writes from their
 * depth lets them run free, as any under their free-running P99 does, and
 * one above it holds them where they are (tlc model R16+W16 at a fifth of
 * none's P99: depth 3, reads at 0.72x the goal, writes at 84% of a static
 * setting's that holds depth 4). A pulse takes them one of Kyber's steps
 * deeper (ctl-pulse.h): a grow target until Kyber changes the depth, a
 * drain target that keeps the writes queued at the old depth in bucket 3,
 * and a hold measured at the new depth, which the next decision adopts as
 * its level. A probe: a miss fails it, and the law goes back up to where
 * Kyber cuts the writes back (ctl-protect.c, on_miss()); the next waits
 * twice as long.
 */
bool ctl_step_pulse(struct controller *c, const struct ctl_sample *s, bool settled, struct ctl_decision *d,
		    const char *m, const char *g)
{
	uint32_t depth = s->write.kyber_depth;
	uint64_t p99 = s->write.total_p99_ns;

	if (c->infeasible || !settled || !depth || depth >= KYBER_WRITE_DEPTH_CAP || !p99 ||
	    p99 > CTL_PULSE_P99_MAX_NS || c->level > ctl_open_level(c, s) + 1 ||
	    s->write.iops >= CTL_STEP_WORTH * c->regime.w_free_iops ||
	    !ctl_probe_due(&c->probe, c->spike.steady))
		return false;
	start_pulse(c, d, depth, p99);
	ctl_say(d, "read P%g %s well under goal %s, and less throttling lets the writes run free: one step "
		"deeper (write target %.3gms until Kyber grows them from depth %u, %.3gms while their queue drains, "
		"then one that holds them)", c->goal.read_pct, m, g, (double)d->pulse_write_ns / 1e6, depth,
		(double)d->pulse_drain_write_ns / 1e6);
	return true;
}
