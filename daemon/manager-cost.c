/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manager's side of the scheduler-cost sampler (cost-probe.h): when a
 * window runs, and which device it is charged to. */
#include <stdbool.h>

#include "cost-probe.h"
#include "device.h"
#include "log.h"
#include "manager-internal.h"

/*
 * The scheduler-cost sampler runs for one interval in COST_PROBE_EVERY,
 * and at once for a busy device whose scheduler has no cost yet (a new
 * device, the first stay on Kyber): one BPF run per millisecond of CPU
 * while it runs, none per I/O, and idle CPUs are left alone the rest of
 * the time.
 */
#define COST_PROBE_EVERY 10

void manager_cost_window_charge(struct manager *m, const struct cost_window *w)
{
	uint64_t all_ios = 0;

	for (size_t i = 0; i < m->n_devs; i++)
		all_ios += device_interval_ios(m->devs[i]);
	for (size_t i = 0; i < m->n_devs; i++)
		device_cost_window_end(m->devs[i], w, all_ios);
}

void manager_cost_window_maybe_begin(struct manager *m)
{
	bool wanted = ++m->ticks_since_cost >= COST_PROBE_EVERY;
	int r;

	if (!m->cost)
		return;
	for (size_t i = 0; i < m->n_devs && !wanted; i++)
		wanted = device_cost_wanted(m->devs[i]);
	if (!wanted || !m->n_devs)
		return;
	r = cost_probe_start(m->cost);
	if (r < 0) {
		log_warning_errno(r, "Failed to start sampling the block layer's CPU time: %m");
		return;
	}
	m->ticks_since_cost = 0;
	for (size_t i = 0; i < m->n_devs; i++)
		device_cost_window_begin(m->devs[i]);
}

bool manager_cost_window_stop(struct manager *m, struct cost_window *w)
{
	return cost_probe_running(m->cost) && cost_probe_stop(m->cost, w) >= 0;
}

void manager_cost_window_abandon(struct manager *m)
{
	struct cost_window w;

	(void)manager_cost_window_stop(m, &w);
}
