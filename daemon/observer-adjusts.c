/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Kyber's depth changes as they happen (the kyber_adjusts ring buffer,
 * struct kt_kyber_adjust): a grow pulse (device-pulse.c) reacts to them
 * within a millisecond or two, where a poll of kyber_state would let Kyber
 * bucket too many samples against the pulse's target.
 */
#include <errno.h>

#include <bpf/libbpf.h>

#include "kyber_observer.skel.h"
#include "log.h"
#include "observer-internal.h"

static int on_adjust(void *ctx, void *data, size_t size)
{
	struct observer *o = ctx;
	const struct kt_kyber_adjust *ev = data;

	if (size < sizeof(*ev) || ev->slot >= o->max_devices || !o->slot_used[ev->slot] || ev->op >= KT_OP_MAX)
		return 0;
	if (o->adjust_fn)
		o->adjust_fn(ev->slot, (int)ev->op, ev->depth, o->adjust_userdata);
	return 0;
}

int observer_adjusts_open(struct observer *o, observer_adjust_fn fn, void *userdata)
{
	int r;

	if (o->adjusts)
		return -EBUSY;
	o->adjusts = ring_buffer__new(bpf_map__fd(o->skel->maps.kyber_adjusts), on_adjust, o, NULL);
	if (!o->adjusts) {
		r = negative_errno();
		return log_error_errno(r, "Failed to open the ring buffer of Kyber's depth changes: %m");
	}
	o->adjust_fn = fn;
	o->adjust_userdata = userdata;
	return ring_buffer__epoll_fd(o->adjusts);
}

int observer_adjusts_consume(struct observer *o)
{
	int r;

	if (!o->adjusts)
		return -EBADF;
	r = ring_buffer__consume(o->adjusts);
	return r < 0 ? r : 0;
}

void observer_adjusts_close(struct observer *o)
{
	ring_buffer__free(o->adjusts);
	o->adjusts = NULL;
	o->adjust_fn = NULL;
	o->adjust_userdata = NULL;
}
