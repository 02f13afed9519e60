/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The targets the law writes: the open point, the protecting read target,
 * the guard against the harmful pair, and which changes are worth a write.
 */
#include "ctl-internal.h"

uint64_t ctl_clamp_target(double ns)
{
	if (!(ns >= KYBER_TARGET_MIN_NS))
		return KYBER_TARGET_MIN_NS;
	return ns > KYBER_TARGET_MAX_NS ? KYBER_TARGET_MAX_NS : (uint64_t)ns;
}

struct kyber_targets ctl_open_point(enum goal_mode mode, const struct ctl_sample *s,
				    const struct kyber_targets *cur)
{
	struct kyber_targets t = *cur;

	if (s->read.completed)
		t.read_ns = ctl_clamp_target(MAX(CTL_OPEN_READ * (double)s->read.device_p99_ns,
						 (double)KYBER_DEFAULT_READ_NS));
	if (s->write.completed) {
		/* Under the writes' P99 (queued in Kyber: throttled) so they
		 * grow back, never under their device latency. */
		double w = MIN(CTL_OPEN_WRITE * (double)s->write.device_p99_ns,
			       (double)s->write.total_p99_ns / CTL_OPEN_GROW);

		t.write_ns = ctl_clamp_target(MAX(w, CTL_WRITE_FLOOR * (double)s->write.device_p90_ns));
	}
	if (mode == GOAL_MODE_BALANCED)	/* G-5: the same target for both */
		t.read_ns = t.write_ns = MAX(t.read_ns, t.write_ns);
	return t;
}

bool ctl_is_open(enum goal_mode mode, const struct ctl_sample *s, const struct kyber_targets *cur)
{
	bool read_ok = !s->read.completed ||
		(double)cur->read_ns >= CTL_OPEN_READ_KEEP * (double)s->read.device_p99_ns;
	bool write_ok = !s->write.completed ||
		((double)cur->write_ns >= CTL_OPEN_WRITE_KEEP * (double)s->write.device_p99_ns &&
		 /* throttled writes must be able to grow back */
		 (writes_free(s) ||
		  (double)s->write.total_p99_ns >= (double)cur->write_ns));

	if (mode == GOAL_MODE_BALANCED && cur->read_ns != cur->write_ns)
		return false;
	return read_ok && write_ok;
}

uint64_t ctl_read_target(const struct goal *g, double shape, double scale)
{
	return ctl_clamp_target(shape * (double)g->read_ns * scale);
}

void ctl_never_harmful(const struct ctl_sample *s, struct kyber_targets *t)
{
	if (!s->write.completed || t->write_ns >= s->write.device_p90_ns)
		return;
	if (s->read.completed && t->read_ns <= s->read.device_p90_ns)
		return;	/* reads count as hurt anyway: writes get cut, not reads */
	t->write_ns = ctl_clamp_target(CTL_WRITE_FLOOR * (double)s->write.device_p90_ns);
}

/* Both targets under CTL_READ_HURT_MARGIN x the reads' device P90 count
 * the reads as hurt at every decision Kyber makes: the same to it. */
static void keep_hurt_read(const struct ctl_sample *s, const struct kyber_targets *cur, struct kyber_targets *t)
{
	double hurt = CTL_READ_HURT_MARGIN * (double)s->read.device_p90_ns;

	if (s->read.completed && (double)cur->read_ns <= hurt && (double)t->read_ns <= hurt)
		t->read_ns = cur->read_ns;
}

bool ctl_keep_in_force(const struct ctl_sample *s, const struct kyber_targets *cur, struct kyber_targets *t)
{
	double rr, wr;

	keep_hurt_read(s, cur, t);
	rr = (double)t->read_ns / (double)MAX(cur->read_ns, 1ULL);
	wr = (double)t->write_ns / (double)MAX(cur->write_ns, 1ULL);

	if (rr > 1 / CTL_REWRITE_READ && rr < CTL_REWRITE_READ)
		t->read_ns = cur->read_ns;
	if (wr > 1 / CTL_REWRITE_WRITE && wr < CTL_REWRITE_WRITE)
		t->write_ns = cur->write_ns;
	return t->read_ns != cur->read_ns || t->write_ns != cur->write_ns;
}
