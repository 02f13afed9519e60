/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests: the proportional-share policy (daemon/share.c) against a
 * fluid model of a saturated device: groups offer what their demand and
 * limit allow; a device asked for more than its capacity serves the groups
 * it holds back equally (a FIFO with the same queue depth each), and
 * those keep their requests waiting in the block layer.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "macro.h"
#include "share.h"

#define BACKLOGGED INFINITY
#define QUEUE_DEPTH 32.0	/* what a held-back group keeps waiting (fio iodepth 32) */
#define THROTTLED_OUTSTANDING 0.5	/* a group let through at its limit: few in the block layer */

struct plant {
	size_t n;
	double capacity;		/* tokens/s */
	double demand[8];		/* tokens/s a group would do; BACKLOGGED: any amount */
	double write_share[8];		/* share of its I/Os that are writes */
	double write_cost;		/* the device's true write/read latency */
	struct share_input in[8];
	struct share_group g[8];
	struct share_limits lim[8];
	double done[8];			/* tokens/s done last period */
};

/* A group's limit in tokens/s (0: none). */
static double limit_tokens(const struct plant *p, size_t i)
{
	const struct share_limits *l = &p->lim[i];
	double w = p->write_share[i];

	if (!l->read_iops && !l->write_iops)
		return INFINITY;
	/* Held by whichever op's limit binds first at its mix. */
	return MIN(w < 1 ? l->read_iops / (1 - w) : INFINITY, w > 0 ? l->write_iops / w : INFINITY) *
	       ((1 - w) + p->write_cost * w);
}

static void period(struct plant *p, struct share *s)
{
	double offered[8], total = 0, left, waiting = 0;
	bool held[8] = {};
	struct share_period sp = { .read_service_ns = 100e3, .write_service_ns = 100e3 * p->write_cost };

	for (size_t i = 0; i < p->n; i++) {
		offered[i] = MIN(p->demand[i], limit_tokens(p, i));
		total += offered[i];
	}
	/* Over capacity: equal service to every group, water-filled. */
	left = p->capacity;
	for (size_t i = 0; i < p->n; i++)
		p->done[i] = 0;
	if (total > p->capacity) {
		size_t k = 0;
		bool changed = true;

		for (size_t i = 0; i < p->n; i++) {
			held[i] = offered[i] > 0;
			k += held[i];
		}
		while (changed && k) {
			changed = false;
			for (size_t i = 0; i < p->n; i++)
				if (held[i] && offered[i] <= left / k) {
					p->done[i] = offered[i];
					left -= offered[i];
					held[i] = false;
					k--;
					changed = true;
				}
		}
		for (size_t i = 0; i < p->n; i++)
			if (held[i])
				p->done[i] = left / k;
	} else
		for (size_t i = 0; i < p->n; i++)
			p->done[i] = offered[i];
	for (size_t i = 0; i < p->n; i++) {
		double ios = p->done[i] / ((1 - p->write_share[i]) + p->write_cost * p->write_share[i]);

		p->in[i].reads = ios * (1 - p->write_share[i]);
		p->in[i].writes = ios * p->write_share[i];
		p->in[i].read_bytes = p->in[i].reads * 4096;
		p->in[i].write_bytes = p->in[i].writes * 4096;
		p->in[i].outstanding = held[i] || (isinf(p->demand[i]) && !isfinite(limit_tokens(p, i))) ?
				       QUEUE_DEPTH : (p->done[i] > 0 ? THROTTLED_OUTSTANDING : 0);
		waiting += p->in[i].outstanding;
	}
	(void)waiting;
	share_step(s, &sp, p->n, p->in, p->g, p->lim);
}

static void plant_init(struct plant *p, size_t n, const uint32_t *w)
{
	memset(p, 0, sizeof(*p));
	p->n = n;
	p->capacity = 10000;
	p->write_cost = 1;
	for (size_t i = 0; i < n; i++) {
		p->in[i].weight = w[i];
		p->in[i].limitable = true;
		p->demand[i] = BACKLOGGED;
	}
}

static double jain_of(const struct plant *p)
{
	double x[8];
	uint32_t w[8];
	size_t k = 0;

	for (size_t i = 0; i < p->n; i++)
		if (p->done[i] > 0) {
			x[k] = p->done[i];
			w[k++] = p->in[i].weight;
		}
	return share_jain(k, x, w);
}

static double total_done(const struct plant *p)
{
	double t = 0;

	for (size_t i = 0; i < p->n; i++)
		t += p->done[i];
	return t;
}

static void test_jain(void **state)
{
	double x[] = { 100, 50, 25, 10 }, y[] = { 1, 1, 1, 1 };
	uint32_t w[] = { 1000, 500, 250, 100 };

	assert_true(fabs(share_jain(4, x, w) - 1) < 1e-12);
	assert_true(share_jain(4, y, w) < 0.7);
	assert_true(share_jain(0, x, w) == 0);
}

/* Four backlogged groups, weights 1000:500:250:100: throughput follows the
 * weights, and the device stays nearly as busy as without limits. */
static void test_backlogged_by_weight(void **state)
{
	static const uint32_t w[] = { 1000, 500, 250, 100 };
	struct plant p;
	struct share s;
	double worst_jain = 1, worst_total = INFINITY;

	plant_init(&p, 4, w);
	share_init(&s);
	for (unsigned t = 0; t < 60; t++) {
		period(&p, &s);
		if (t >= 3) {
			worst_jain = MIN(worst_jain, jain_of(&p));
			worst_total = MIN(worst_total, total_done(&p));
		}
	}
	print_message("weighted Jain >= %.3f, throughput >= %.0f%% of capacity\n", worst_jain,
		      100 * worst_total / p.capacity);
	assert_true(s.limiting);
	assert_true(worst_jain >= 0.95);
	assert_true(worst_total >= 0.9 * p.capacity);
}

/* Two of four stop: the two left take the device within 3 periods; they
 * come back: the shares are back within 3 periods. */
static void test_work_conservation(void **state)
{
	static const uint32_t w[] = { 1000, 500, 250, 100 };
	struct plant p;
	struct share s;

	plant_init(&p, 4, w);
	share_init(&s);
	for (unsigned t = 0; t < 20; t++)
		period(&p, &s);
	p.demand[0] = p.demand[2] = 0;
	for (unsigned t = 0; t < 3; t++)
		period(&p, &s);
	assert_true(total_done(&p) >= 0.9 * p.capacity);
	assert_true(fabs(p.done[1] / p.done[3] - 5.0) < 0.5);
	p.demand[0] = p.demand[2] = BACKLOGGED;
	for (unsigned t = 0; t < 3; t++)
		period(&p, &s);
	assert_true(jain_of(&p) >= 0.95);
	assert_true(total_done(&p) >= 0.9 * p.capacity);
}

/* A group using less than its share keeps what it uses; the rest goes to
 * the others by weight. */
static void test_light_group_keeps_its_use(void **state)
{
	static const uint32_t w[] = { 1000, 100, 100 };
	struct plant p;
	struct share s;

	plant_init(&p, 3, w);
	p.demand[0] = 1000;	/* a tenth of the device, under its 83% */
	share_init(&s);
	for (unsigned t = 0; t < 30; t++)
		period(&p, &s);
	assert_true(p.done[0] >= 0.98 * 1000);
	assert_true(fabs(p.done[1] / p.done[2] - 1) < 0.05);
	assert_true(total_done(&p) >= 0.9 * p.capacity);
}

/* Demand under capacity: nobody wants more, the limits go after three
 * calm periods; one group alone is never limited. */
static void test_not_saturated_lifts_limits(void **state)
{
	static const uint32_t w[] = { 1000, 100 };
	struct plant p;
	struct share s;

	plant_init(&p, 2, w);
	share_init(&s);
	for (unsigned t = 0; t < 10; t++)
		period(&p, &s);
	assert_true(s.limiting);
	p.demand[0] = p.demand[1] = 2000;
	for (unsigned t = 0; t < 6; t++)
		period(&p, &s);
	assert_false(s.limiting);
	for (size_t i = 0; i < 2; i++)
		assert_true(p.lim[i].read_iops == 0 && p.lim[i].write_iops == 0);
	p.demand[0] = BACKLOGGED;
	p.demand[1] = 0;
	for (unsigned t = 0; t < 3; t++)
		period(&p, &s);
	assert_false(s.limiting);
	assert_true(p.done[0] >= 0.99 * p.capacity);
}

/* Writes cost their service time in reads: a writer with a tenth of a
 * reader's weight is allotted a tenth of its tokens, so an eighth as many
 * writes as that would be reads. What they do follows, but for the
 * periods in which a capacity probe overshot and the device shared
 * (equally, in this plant). */
static void test_write_cost(void **state)
{
	static const uint32_t w[] = { 1000, 100 };
	struct plant p;
	struct share s;
	double reads = 0, writes = 0, allotted = 0;

	plant_init(&p, 2, w);
	p.write_cost = 8;
	p.write_share[1] = 1;
	share_init(&s);
	for (unsigned t = 0; t < 60; t++) {
		period(&p, &s);
		if (t >= 20) {
			reads += p.in[0].reads;
			writes += p.in[1].writes;
			allotted += p.g[0].allocation / p.g[1].allocation / 40;
		}
	}
	assert_true(fabs(s.write_cost - 8) < 0.1);
	print_message("reader's tokens / writer's: %.2f allotted, %.2f done\n", allotted,
		      reads / (writes * s.write_cost));
	assert_true(fabs(allotted - 10) < 0.5);
	assert_true(reads / (writes * s.write_cost) >= 8);
	assert_true(p.lim[1].write_iops > 0 && p.lim[1].write_iops < p.lim[0].read_iops / 50);
}

/* The root cannot be limited: its use comes off the capacity first. */
static void test_root_not_limited(void **state)
{
	static const uint32_t w[] = { 100, 100, 100 };
	struct plant p;
	struct share s;

	plant_init(&p, 3, w);
	p.in[2].limitable = false;
	p.demand[2] = 2000;
	share_init(&s);
	for (unsigned t = 0; t < 30; t++)
		period(&p, &s);
	assert_true(p.lim[2].read_iops == 0 && p.lim[2].write_iops == 0);
	assert_true(p.done[2] >= 0.95 * 2000);
	assert_true(fabs(p.done[0] / p.done[1] - 1) < 0.05);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jain),
		cmocka_unit_test(test_backlogged_by_weight),
		cmocka_unit_test(test_work_conservation),
		cmocka_unit_test(test_light_group_keeps_its_use),
		cmocka_unit_test(test_not_saturated_lifts_limits),
		cmocka_unit_test(test_write_cost),
		cmocka_unit_test(test_root_not_limited),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
