/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The simulator's API: parameters, life cycle, the knobs (workload,
 * scheduler, targets) and the interval summary in the observer's terms.
 * The plant itself is in sim-blk.c (block layer), sim-kyber.c (Kyber's
 * controller) and sim-device.c (media).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim-internal.h"

void sim_params_default(struct sim_params *p, enum sim_profile profile)
{
	*p = (struct sim_params) {
		.profile = profile,
		.dies = 8,
		.read_ns = 60 * SIM_NSEC_PER_USEC,
		.program_ns = 500 * SIM_NSEC_PER_USEC,
		.optane_ns = 12 * SIM_NSEC_PER_USEC,
		.optane_write_iops = 16000,
		/*
		 * FUSE daemon + loop worker + io_uring: the observer measured
		 * R1 alone on flashsim at a total p50 of 126-150 us with 60 us
		 * reads, so the host path is ~80 us (README.md).
		 */
		.host_ns = 80 * SIM_NSEC_PER_USEC,
		.tags = 128,
		.seed = 1,
		.host_jitter_ns = 0,
		/* R1 alone ran at 5.4-6.0K IOPS with that ~145 us total. */
		.think_ns = 30 * SIM_NSEC_PER_USEC,
	};
	/* Optane R1 alone: total p50 67-75 us with 12 us reads. */
	if (profile == SIM_OPTANE)
		p->host_ns = 60 * SIM_NSEC_PER_USEC;
}

/* ---------------------------------------------------------------- API */

int sim_new(struct sim **ret, const struct sim_params *p)
{
	struct sim *s;
	int r;

	if (!ret || !p)
		return -EINVAL;
	if (p->tags < 1 || p->tags > 65536)
		return -EINVAL;
	if (p->profile == SIM_OPTANE && !p->optane_write_iops)
		return -EINVAL;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->p = *p;
	s->rng = p->seed;
	sim_heap_init(&s->events);
	sim_blk_init(s);
	kyber_model_init(&s->km);
	r = sim_device_init(&s->dev, p);
	if (r < 0) {
		sim_free(s);
		return r;
	}
	*ret = s;
	return 0;
}

struct sim *sim_free(struct sim *s)
{
	if (!s)
		return NULL;
	sim_device_free(&s->dev);
	sim_heap_free(&s->events);
	free(s->reqs);
	free(s);
	return NULL;
}

void sim_set_workload(struct sim *s, unsigned read_qd, unsigned write_qd)
{
	s->qd[KT_OP_READ] = read_qd;
	s->qd[KT_OP_WRITE] = write_qd;
}

void sim_set_host_jitter(struct sim *s, uint64_t mean_ns)
{
	s->p.host_jitter_ns = mean_ns;
}

void sim_set_kyber(struct sim *s, bool on)
{
	if (on == s->want_kyber)
		return;
	s->want_kyber = on;
	/* A new Kyber instance: default targets, depths at the caps, no
	 * samples, fresh timeouts (kyber_init_sched()). */
	if (on)
		kyber_model_init(&s->km);
	sim_blk_maybe_switch(s);
}

void sim_set_targets(struct sim *s, uint64_t read_ns, uint64_t write_ns)
{
	if (!s->want_kyber)
		return;
	s->km.target[KT_OP_READ] = read_ns;
	s->km.target[KT_OP_WRITE] = write_ns;
}

void sim_get_targets(const struct sim *s, uint64_t *read_ns, uint64_t *write_ns)
{
	if (read_ns)
		*read_ns = s->km.target[KT_OP_READ];
	if (write_ns)
		*write_ns = s->km.target[KT_OP_WRITE];
}

uint64_t sim_now_ns(const struct sim *s)
{
	return s->now;
}

unsigned sim_kyber_depth(const struct sim *s, int domain)
{
	if (!s->want_kyber || (domain != KT_OP_READ && domain != KT_OP_WRITE))
		return 0;
	return s->km.depth[domain];
}

static uint64_t pct(const __u64 *h, double p)
{
	uint64_t v = 0;

	(void)hist_percentile(h, p, &v);	/* -ENODATA leaves 0 */
	return v;
}

static void fill_op(const struct sim *s, int op, uint64_t duration, struct ctl_op_sample *o)
{
	const struct op_stats *st = &s->st[op];

	memset(o, 0, sizeof(*o));
	o->completed = st->completed;
	o->iops = rate_per_sec(st->completed, duration);
	if (st->completed)
		o->total_mean_ns = (double)st->sum_total / (double)st->completed;
	o->total_p90_ns = pct(st->hist_total, 90);
	o->total_p99_ns = pct(st->hist_total, 99);
	o->device_p90_ns = pct(st->hist_device, 90);
	o->device_p99_ns = pct(st->hist_device, 99);
	o->outstanding = o->iops * o->total_mean_ns / 1e9;
	o->kyber_depth = sim_kyber_depth(s, op);
	o->throttled = st->throttled;
}

int sim_run(struct sim *s, uint64_t duration_ns, struct ctl_sample *out)
{
	uint64_t end;
	int r;

	if (!s || !duration_ns || duration_ns > UINT64_MAX - s->now)
		return -EINVAL;
	end = s->now + duration_ns;
	memset(s->st, 0, sizeof(s->st));

	r = sim_blk_start(s);
	if (r < 0)
		return r;
	while (s->events.n && s->events.v[0].time <= end) {
		struct sim_event ev = sim_heap_pop(&s->events);

		s->now = ev.time;
		r = sim_blk_handle(s, &ev);
		if (r < 0)
			return r;
	}
	s->now = end;

	if (out) {
		memset(out, 0, sizeof(*out));
		out->duration_ns = duration_ns;
		fill_op(s, KT_OP_READ, duration_ns, &out->read);
		fill_op(s, KT_OP_WRITE, duration_ns, &out->write);
		out->read_total_hist = s->st[KT_OP_READ].hist_total;
	}
	return 0;
}

int sim_client_stats(const struct sim *s, int op, struct sim_client_op *out)
{
	const struct op_stats *st;

	if (op != KT_OP_READ && op != KT_OP_WRITE)
		return -EINVAL;
	st = &s->st[op];
	memset(out, 0, sizeof(*out));
	out->completed = st->completed;
	if (st->completed)
		out->mean_ns = (double)st->sum_client / (double)st->completed;
	out->p50_ns = pct(st->hist_client, 50);
	out->p90_ns = pct(st->hist_client, 90);
	out->p99_ns = pct(st->hist_client, 99);
	return 0;
}

void sim_kyber_info(const struct sim *s, struct sim_kyber_info *out)
{
	*out = s->km.info;
}
