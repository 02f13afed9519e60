/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Hand-made intervals for the control law's unit tests (test-ctl-law.c,
 * test-ctl-relax.c, test-ctl-disturb.c and others): R1+W256 on flash,
 * and a controller that has just engaged. Include after cmocka.h.
 */
#pragma once

#include <string.h>

#include "ctl-internal.h"

#define SEC 1000000000ULL
#define MSEC 1000000ULL
#define USEC 1000ULL

/* An interval of R1+W256 on flash: every read at read_ns, the writes at
 * write_iops with Kyber's write depth `depth` and their P99 at 13 ms. */
static inline void flat_sample(struct ctl_sample *s, hist_t h, uint64_t read_ns, double write_iops,
			       uint32_t depth)
{
	memset(s, 0, sizeof(*s));
	memset(h, 0, sizeof(hist_t));
	h[kt_hist_index(read_ns)] = 1000;
	s->duration_ns = SEC;
	s->read_hist = h;
	s->read.completed = 1000;
	s->read.iops = 1000;
	s->read.device_p90_ns = s->read.device_p99_ns = s->read.total_p99_ns = read_ns;
	s->read.outstanding = 1;
	s->write.completed = (uint64_t)write_iops;
	s->write.iops = write_iops;
	s->write.outstanding = 200;
	s->write.total_mean_ns = s->write.outstanding / write_iops * SEC;	/* Little's law */
	s->write.device_p90_ns = 800 * USEC;
	s->write.device_p99_ns = 1 * MSEC;
	s->write.total_p99_ns = 13 * MSEC;
	s->write.kyber_depth = depth;
}

static inline void decide(struct controller *c, const struct ctl_sample *s, struct kyber_targets *cur,
			  struct ctl_decision *d)
{
	controller_decide(c, s, cur, d);
	*cur = d->targets;
}

/* One interval of reads at read_ns beside write_iops writes a second at
 * Kyber's write depth `depth`, their P99 at write_p99_ns. */
static inline void writes_at(struct controller *c, struct kyber_targets *cur, uint64_t read_ns, double write_iops,
			     uint32_t depth, uint64_t write_p99_ns, struct ctl_decision *d)
{
	struct ctl_sample s;
	hist_t h;

	flat_sample(&s, h, read_ns, write_iops, depth);
	s.write.total_p99_ns = write_p99_ns;
	decide(c, &s, cur, d);
}

/* A new controller for read-p99=2ms in `mode`, and the first interval it
 * will see: reads at 8 ms beside 16000 write IOPS at Kyber's write depth
 * `depth`. Tests that need an odd first interval edit s before deciding. */
static inline void new_at_8ms(struct controller *c, enum goal_mode mode, struct ctl_sample *s, hist_t h,
			      uint32_t depth)
{
	struct goal g;

	assert_int_equal(goal_parse("read-p99=2ms", &g, NULL), 0);
	g.mode = mode;
	controller_init(c, &g);
	flat_sample(s, h, 8 * MSEC, 16000, depth);
}

/* new_at_8ms(), and the controller's decision on that interval from the
 * targets in cur. */
static inline void first_at_8ms(struct controller *c, enum goal_mode mode, struct kyber_targets *cur,
				uint32_t depth, struct ctl_decision *d)
{
	struct ctl_sample s;
	hist_t h;

	new_at_8ms(c, mode, &s, h, depth);
	decide(c, &s, cur, d);
}

/* A controller for read-p99=2ms that has just engaged: reads at 8 ms beside
 * free-running writes. */
static inline void engaged_at_2ms(struct controller *c, struct kyber_targets *cur)
{
	struct ctl_decision d;

	first_at_8ms(c, GOAL_MODE_LATENCY, cur, 128, &d);
	assert_true(c->protecting);
}

/* One interval of reads at read_ns beside writes at Kyber's depth `depth`:
 * 2000 IOPS at depth 1, 15000 deeper. */
static inline void at_depth(struct controller *c, struct kyber_targets *cur, uint64_t read_ns, uint32_t depth,
			    struct ctl_decision *d)
{
	struct ctl_sample s;
	hist_t h;

	flat_sample(&s, h, read_ns, depth == 1 ? 2000 : 15000, depth);
	decide(c, &s, cur, d);
}

/* One interval of reads at read_ns beside writes held at 15000 IOPS,
 * Kyber's write depth 13. */
static inline void held_writes(struct controller *c, struct kyber_targets *cur, uint64_t read_ns,
			       struct ctl_decision *d)
{
	at_depth(c, cur, read_ns, 13, d);
}

/* engaged_at_2ms(), then n intervals with reads at 1.7 ms (within the
 * goal, not slack) beside the writes held. */
static inline void steady_at_2ms(struct controller *c, struct kyber_targets *cur, unsigned n)
{
	struct ctl_decision d;

	engaged_at_2ms(c, cur);
	for (unsigned i = 0; i < n; i++)
		held_writes(c, cur, 1700 * USEC, &d);
}

/* steady_at_2ms() for 30 intervals, and a copy of the controller and its
 * targets there: one steady run, two futures to compare. */
static inline void steady_fork(struct controller *c, struct controller *copy, struct kyber_targets *cur,
			       struct kyber_targets *held)
{
	steady_at_2ms(c, cur, 30);
	*held = *cur;
	*copy = *c;
}
