/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The scheduler-cost sampler (bpf/sched_cost.bpf.c): how much CPU time
 * the block layer takes, machine-wide. Opened at start (perf events and
 * /proc/kallsyms need the privileges the daemon drops later), disabled;
 * enabled for a window (an interval) now and then, so that idle CPUs are
 * not woken a thousand times a second for nothing.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cost_probe;

/* What one window measured. */
struct cost_window {
	uint64_t samples;	/* CPU samples, idle ones included */
	uint64_t block;		/* of which in the block layer */
	uint64_t period_ns;	/* CPU time one sample stands for */
};

/* Open, load and attach, disabled. -errno with why filled in (the daemon
 * runs without it, saying so) where the kernel has no perf events, the
 * functions cannot be found or the programs do not load. */
int cost_probe_new(struct cost_probe **ret, char *why, size_t n);
struct cost_probe *cost_probe_free(struct cost_probe *p);

/* Start a window, or end it and say what it measured. */
int cost_probe_start(struct cost_probe *p);
int cost_probe_stop(struct cost_probe *p, struct cost_window *ret);
bool cost_probe_running(const struct cost_probe *p);
