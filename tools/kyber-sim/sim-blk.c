/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The block layer of the simulated plant: closed-loop clients, request
 * allocation (scheduler or driver tags), Kyber's dispatch (tokens, round
 * robin with batches, hctx->dispatch) and completions.
 *
 * A request's life (README.md has the whole model):
 *   submit --(wait for a request: sched tag with kyber, driver tag with none;
 *             FIFO per client, round robin between clients; invisible to
 *             the observer)--> insert
 *   kyber: insert -> per-domain FIFO -> token (round robin with batches)
 *          -> driver tag (else hctx->dispatch, FIFO) -> issue
 *   none:  insert == issue
 *   issue -> media time (tools/flashsim/model.c) + host path -> complete
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim-internal.h"

/* Kyber's domains: READ, WRITE, DISCARD, OTHER; only the first two ever
 * hold requests here, but the round robin walks all four as the kernel's. */
#define KYBER_NUM_DOMAINS 4
static const unsigned kyber_batch_size[KYBER_NUM_DOMAINS] = { 16, 8, 1, 1 };

/* ---------------------------------------------------------------- requests */

static void list_push(struct sim *s, struct req_list *l, int32_t idx)
{
	s->reqs[idx].next = -1;
	if (l->n)
		s->reqs[l->tail].next = idx;
	else
		l->head = idx;
	l->tail = idx;
	l->n++;
}

static int32_t list_pop(struct sim *s, struct req_list *l)
{
	int32_t idx = l->head;

	l->head = s->reqs[idx].next;
	if (!--l->n)
		l->head = l->tail = -1;
	return idx;
}

static int req_new(struct sim *s, int op, int32_t *ret)
{
	struct sim_req *r;
	int32_t idx;

	if (s->free_list < 0) {
		/* Grow by doubling; indices stay valid across the realloc. */
		uint32_t n = s->nreqs ? s->nreqs * 2 : 512;
		struct sim_req *v;

		if (n > INT32_MAX / 2)
			return -ENOMEM;
		v = realloc(s->reqs, n * sizeof(*v));
		if (!v)
			return -ENOMEM;
		s->reqs = v;
		for (uint32_t i = n; i-- > s->nreqs; ) {
			v[i].state = REQ_FREE;
			v[i].next = s->free_list;
			s->free_list = (int32_t)i;
		}
		s->nreqs = n;
	}

	idx = s->free_list;
	r = &s->reqs[idx];
	s->free_list = r->next;
	*r = (struct sim_req) {
		.submit_ns = s->now,
		.page = (uint32_t)(sim_rng_next(&s->rng) % SIM_PAGES),
		.next = -1,
		.op = (uint8_t)op,
	};
	*ret = idx;
	return 0;
}

static void req_release(struct sim *s, int32_t idx)
{
	s->reqs[idx].state = REQ_FREE;
	s->reqs[idx].next = s->free_list;
	s->free_list = idx;
}

/* ---------------------------------------------------------------- device */

int sim_event_push(struct sim *s, uint64_t time, uint32_t kind, uint32_t arg)
{
	return heap_push_u64(&s->events, time, sim_event_pack(kind, arg));
}

static int issue(struct sim *s, int32_t idx)
{
	struct sim_req *r = &s->reqs[idx];
	uint64_t media_end;

	r->state = REQ_INFLIGHT;
	r->issue_ns = s->now;
	media_end = model_submit_page(&s->dev, r->op == KT_OP_READ ? MODEL_READ : MODEL_WRITE,
				      r->page, s->now);
	return sim_event_push(s, sim_host_complete_at(s, media_end), SIM_EV_COMPLETE,
			      (uint32_t)idx);
}

static int issue_with_driver_tag(struct sim *s, int32_t idx)
{
	s->driver_used++;
	s->reqs[idx].driver_tag = true;
	return issue(s, idx);
}

/* ---------------------------------------------------------------- kyber */

/* kyber_dispatch_cur_domain(): head of the domain's FIFO if a token is free.
 * A missing token is one kyber_throttled event. */
static int32_t kyber_try_domain(struct sim *s, unsigned d)
{
	int32_t idx;

	if (d >= 2 || !s->kq[d].n)
		return -1;
	/*
	 * Tokens are an sbitmap of `depth` bits; the model counts them. After
	 * a cut the kernel lets a new token out as soon as a low bit frees,
	 * even while bits above the new depth are still held, so real
	 * in-flight drains to the new depth a little later than here (within
	 * one device round trip).
	 */
	if (s->tokens_used[d] >= s->km.depth[d]) {
		s->st[d].throttled++;
		return -1;
	}
	s->tokens_used[d]++;
	s->batching++;
	idx = list_pop(s, &s->kq[d]);
	s->reqs[idx].token = true;
	s->reqs[idx].state = REQ_DISPATCH;
	return idx;
}

/* kyber_dispatch_request(): finish the current batch, else round-robin to
 * the next domain that has a request and a token. */
static int32_t kyber_dispatch(struct sim *s)
{
	int32_t idx;

	if (s->batching < kyber_batch_size[s->cur_domain]) {
		idx = kyber_try_domain(s, s->cur_domain);
		if (idx >= 0)
			return idx;
	}
	s->batching = 0;
	for (unsigned i = 0; i < KYBER_NUM_DOMAINS; i++) {
		s->cur_domain = (s->cur_domain + 1) % KYBER_NUM_DOMAINS;
		idx = kyber_try_domain(s, s->cur_domain);
		if (idx >= 0)
			return idx;
	}
	return -1;
}

/*
 * blk_mq_run_hw_queue() with Kyber: requests parked on hctx->dispatch go
 * first; while any remain the scheduler is not asked. A request that got
 * a token but finds no driver tag is parked there and dispatching stops
 * (__blk_mq_do_dispatch_sched). Run after every insert and completion, as
 * the kernel does via insert, tag restart and token wake-ups.
 */
static int run_queue(struct sim *s)
{
	int32_t idx;
	int r;

	if (!s->kyber)
		return 0;
	for (;;) {
		while (s->hctx_dispatch.n && s->driver_used < s->p.tags) {
			r = issue_with_driver_tag(s, list_pop(s, &s->hctx_dispatch));
			if (r < 0)
				return r;
		}
		if (s->hctx_dispatch.n)
			return 0;
		if (!s->kq[KT_OP_READ].n && !s->kq[KT_OP_WRITE].n)
			return 0;	/* !kyber_has_work() */
		idx = kyber_dispatch(s);
		if (idx < 0)
			return 0;
		if (s->driver_used >= s->p.tags) {
			list_push(s, &s->hctx_dispatch, idx);
			return 0;
		}
		r = issue_with_driver_tag(s, idx);
		if (r < 0)
			return r;
	}
}

/* ---------------------------------------------------------------- block layer */

static bool frozen(const struct sim *s)
{
	return s->kyber != s->want_kyber;
}

/*
 * Whether a request of this op can be allocated now: 2 x tags scheduler
 * requests with Kyber (q->nr_requests), the driver tags themselves with
 * none. With Kyber, writes are further limited to async_depth (75% of
 * nr_requests, 192 on loop): on the 6.18 kernel W256 holds 191-192
 * requests (queued + in flight, measured by the observer), i.e. Kyber's
 * kyber_limit_depth() applies to all writes there, as in kernels that test
 * blk_mq_is_sync_read(); older ones limit only !op_is_sync() requests.
 * The kernel's shallow depth restricts which bits a write may take; the
 * model counts writes instead.
 */
static bool can_alloc(const struct sim *s, int op)
{
	if (frozen(s))
		return false;
	if (!s->kyber)
		return s->driver_used < s->p.tags;
	if (s->sched_used >= 2 * s->p.tags)
		return false;
	return op != KT_OP_WRITE || s->write_sched_used < s->async_depth;
}

/* The request exists from here on: this is the observer's insert. */
static int admit(struct sim *s, int32_t idx)
{
	struct sim_req *r = &s->reqs[idx];

	r->insert_ns = s->now;
	if (!s->kyber) {
		/* none: the tag is the driver tag; issued at once. */
		return issue_with_driver_tag(s, idx);
	}
	s->sched_used++;
	if (r->op == KT_OP_WRITE)
		s->write_sched_used++;
	r->sched_tag = true;
	r->kyber = true;
	r->state = REQ_QUEUED;
	list_push(s, &s->kq[r->op], idx);
	return 0;
}

/*
 * Hand free tags to waiting submissions: FIFO within a client, round robin
 * between clients. Real sbitmap waiters are not one FIFO: each fio job
 * waits through its own io-wq workers, woken in batches, and new
 * submissions try a free bit before sleeping. The observer measured R1
 * next to W256 (scheduler none, 128 tags all busy) at 126 IOPS, one read
 * per device latency: it practically never queues behind the writer's
 * 128 waiting requests, which one shared FIFO would make it do.
 */
static int admit_waiters(struct sim *s)
{
	bool progress = true;
	int r;

	while (progress) {
		progress = false;
		for (unsigned i = 0; i < 2; i++) {
			unsigned c = (s->wait_rr + i) % 2;

			if (!s->tag_wait[c].n || !can_alloc(s, (int)c))
				continue;
			r = admit(s, list_pop(s, &s->tag_wait[c]));
			if (r < 0)
				return r;
			s->wait_rr = (c + 1) % 2;
			progress = true;
			break;
		}
	}
	return 0;
}

static int client_submit(struct sim *s, int op)
{
	int32_t idx;
	int r;

	r = req_new(s, op, &idx);
	if (r < 0)
		return r;
	s->outstanding[op]++;
	/* No overtaking within a client. */
	if (s->tag_wait[op].n || !can_alloc(s, op)) {
		s->reqs[idx].state = REQ_WAIT_TAG;
		list_push(s, &s->tag_wait[op], idx);
		return 0;
	}
	return admit(s, idx);
}

/* Bring every client to its qd at once (start of a run, a new workload). */
static int top_up(struct sim *s)
{
	int r;

	for (int op = 0; op < 2; op++)
		while (s->outstanding[op] + s->thinking[op] < s->qd[op]) {
			r = client_submit(s, op);
			if (r < 0)
				return r;
		}
	return run_queue(s);
}

/* A completion: the client submits its next request after think_ns. */
static int client_completed(struct sim *s, int op)
{
	uint64_t think = sim_host_think_ns(s);
	int r;

	s->outstanding[op]--;
	if (s->outstanding[op] + s->thinking[op] >= s->qd[op])
		return 0;
	if (!think)
		return client_submit(s, op);
	r = sim_event_push(s, s->now + think, SIM_EV_SUBMIT, (uint32_t)op);
	if (r < 0)
		return r;
	s->thinking[op]++;
	return 0;
}

/* The elevator switch completes once the old scheduler owns nothing. */
void sim_blk_maybe_switch(struct sim *s)
{
	if (!frozen(s) || s->sched_used || s->driver_used)
		return;
	s->kyber = s->want_kyber;
	s->tokens_used[0] = s->tokens_used[1] = 0;
	s->cur_domain = s->batching = 0;
	/* kyber_exit_sched() shuts the timer down: a pending one is stale. */
	s->timer_gen++;
	s->timer_pending = false;
}

static void account(struct op_stats *st, uint64_t total, uint64_t device, uint64_t client)
{
	st->completed++;
	st->sum_total += total;
	st->sum_device += device;
	st->sum_client += client;
	st->hist_total[kt_hist_index(total)]++;
	st->hist_device[kt_hist_index(device)]++;
	st->hist_client[kt_hist_index(client)]++;
}

static int complete(struct sim *s, int32_t idx)
{
	struct sim_req *r = &s->reqs[idx];
	uint64_t total = s->now - r->insert_ns, device = s->now - r->issue_ns;
	int op = r->op, ret;

	account(&s->st[op], total, device, s->now - r->submit_ns);

	if (r->kyber) {
		/* kyber_completed_request(): samples, then timer_reduce() to
		 * now + HZ/10, which only arms an idle timer since later
		 * completions never ask for an earlier expiry. */
		kyber_model_sample(&s->km, (unsigned)op, total, device);
		if (!s->timer_pending) {
			ret = sim_event_push(s, s->now + KYBER_MODEL_TIMER_NS,
					     SIM_EV_KYBER_TIMER, s->timer_gen);
			if (ret < 0)
				return ret;
			s->timer_pending = true;
		}
	}
	/* kyber_finish_request(), then the driver and scheduler tags. */
	if (r->token)
		s->tokens_used[op]--;
	if (r->driver_tag)
		s->driver_used--;
	if (r->sched_tag) {
		s->sched_used--;
		if (op == KT_OP_WRITE)
			s->write_sched_used--;
	}
	req_release(s, idx);

	sim_blk_maybe_switch(s);
	/* Freed tags go to waiters before the client resubmits. */
	ret = admit_waiters(s);
	if (ret < 0)
		return ret;
	ret = client_completed(s, op);
	if (ret < 0)
		return ret;
	return run_queue(s);
}

int sim_blk_handle(struct sim *s, const struct sim_event *ev)
{
	int r;

	switch (ev->kind) {
	case SIM_EV_COMPLETE:
		return complete(s, (int32_t)ev->arg);
	case SIM_EV_KYBER_TIMER:
		if (ev->arg != s->timer_gen || !s->kyber)
			return 0;
		s->timer_pending = false;
		/* A resize does not run the queue in the kernel either: the
		 * next completion or insert picks up new tokens. */
		kyber_model_timer(&s->km, s->now);
		return 0;
	case SIM_EV_SUBMIT:
		if (ev->arg > KT_OP_WRITE)
			return -EINVAL;
		s->thinking[ev->arg]--;
		/* The qd may have dropped meanwhile. */
		if (s->outstanding[ev->arg] >= s->qd[ev->arg])
			return 0;
		r = client_submit(s, (int)ev->arg);
		if (r < 0)
			return r;
		return run_queue(s);
	default:
		return -EINVAL;
	}
}

static void list_init(struct req_list *l)
{
	l->head = l->tail = -1;
	l->n = 0;
}

void sim_blk_init(struct sim *s)
{
	s->free_list = -1;
	list_init(&s->tag_wait[0]);
	list_init(&s->tag_wait[1]);
	list_init(&s->kq[0]);
	list_init(&s->kq[1]);
	list_init(&s->hctx_dispatch);
	/* kyber_depth_updated(): nr_requests * KYBER_ASYNC_PERCENT / 100 */
	s->async_depth = 2 * s->p.tags * 75 / 100;
	if (!s->async_depth)
		s->async_depth = 1;
}

int sim_blk_start(struct sim *s)
{
	int r;

	r = admit_waiters(s);
	if (r < 0)
		return r;
	return top_up(s);
}
