/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The workload regime: a signature (writes running or not, requests
 * outstanding per op) whose change means what was learned no longer
 * holds, and the writes' latency and rate while they run free, which the
 * write-target levels are set against.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ctl-internal.h"

void ctl_regime_forget(struct ctl_regime *r)
{
	memset(r, 0, sizeof(*r));
}

static bool changed_by_factor(double now, double before)
{
	return fabs(now - before) >= 1 &&
	       (now >= CTL_SHIFT_FACTOR * before || before >= CTL_SHIFT_FACTOR * now);
}

enum ctl_shift ctl_regime_shifted(struct ctl_regime *r, const struct ctl_sample *s, char *what, size_t n)
{
	bool writes = s->write.iops >= (r->writes ? CTL_WRITES_STOP_IOPS : CTL_WRITES_START_IOPS);
	enum ctl_shift shift = CTL_SHIFT_NONE;

	if (!r->known) {
		r->known = true;
	} else if (writes != r->writes) {
		snprintf(what, n, "writes %s", writes ? "started" : "stopped");
		shift = CTL_SHIFT_WRITES;
	} else if (s->read.completed && changed_by_factor(s->read.outstanding, r->read_outstanding)) {
		snprintf(what, n, "reads outstanding %.1f -> %.1f", r->read_outstanding, s->read.outstanding);
		shift = s->read.outstanding > r->read_outstanding ? CTL_SHIFT_MORE_READS : CTL_SHIFT_FEWER_READS;
	} else if (writes && s->write.completed && r->write_outstanding > 0 &&
		   (s->write.outstanding >= CTL_WRITE_SHIFT_FACTOR * r->write_outstanding ||
		    r->write_outstanding >= CTL_WRITE_SHIFT_FACTOR * s->write.outstanding)) {
		snprintf(what, n, "writes outstanding %.1f -> %.1f", r->write_outstanding,
			 s->write.outstanding);
		shift = CTL_SHIFT_WRITES;
	}
	/* The writes' free-running figures belong to the old writer. */
	if (shift == CTL_SHIFT_WRITES) {
		r->w_free_ns = r->w_free_iops = r->w_free_ns_usual = 0;
		r->w_free_partial = false;
	}
	r->writes_new = writes && !r->writes;
	r->writes = writes;
	if (s->read.completed)
		r->read_outstanding = s->read.outstanding;
	if (s->write.completed)
		r->write_outstanding = s->write.outstanding;
	return shift;
}

/* Smoothed: one noisy second does not move every level. */
static void learn_p99(double *ns, double p99)
{
	*ns = *ns > 0 ? 0.5 * *ns + 0.5 * p99 : p99;
}

void ctl_regime_learn_writes(struct ctl_regime *r, const struct ctl_sample *s, bool free_running)
{
	double p99 = (double)s->write.total_p99_ns;
	bool after_partial = r->w_free_partial;

	if (!writes_active(s) || !s->write.total_p99_ns)
		return;
	r->w_free_partial = false;
	if (s->write.iops > r->w_free_iops)
		r->w_free_iops = s->write.iops;
	if (!free_running) {
		/* Throttled writes wait in Kyber on top of the device: running
		 * free, the same writers are never slower. A free-running P99
		 * learned while the device was slow (a GC storm) comes down
		 * here once it is fast again. */
		if (r->w_free_ns > 0 && p99 < r->w_free_ns)
			r->w_free_ns = p99;
		if (r->w_free_ns_usual > 0 && p99 < r->w_free_ns_usual)
			r->w_free_ns_usual = p99;
		return;
	}
	/* Writers that started within the interval had their queue filling
	 * for part of it: a P99 under the one they run free at (flashsim
	 * R1+W256: 8.3 ms in fio's first second, 12.4 ms in the next), and
	 * levels set against it let Kyber grow the writes until reads miss.
	 * The next interval replaces it if they run free in it too; if the
	 * law throttled them by then, it is all there is. */
	if (after_partial)
		r->w_free_ns = r->w_free_ns_usual = 0;
	r->w_free_partial = r->writes_new;
	learn_p99(&r->w_free_ns, p99);
	if (s->write.iops >= CTL_USUAL_FREE_RATE * r->w_free_iops)
		learn_p99(&r->w_free_ns_usual, p99);
}

void ctl_regime_device_fast_again(struct ctl_regime *r)
{
	if (r->w_free_ns_usual > 0 && r->w_free_ns_usual < r->w_free_ns)
		r->w_free_ns = r->w_free_ns_usual;
}
