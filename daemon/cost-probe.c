/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cost-probe.h"
#include "ksym-ranges.h"
#include "log.h"
#include "macro.h"
#include "observer-abi.h"
#include "sched_cost.skel.h"

/* The block layer's entry points (bpf/sched_cost.bpf.c says why these). */
static const char *const entry_points[] = {
	"blk_mq_submit_bio", "blk_mq_flush_plug_list", "blk_mq_run_hw_queue",
	"blk_mq_run_work_fn", "__blk_mq_end_request", "blk_mq_end_request_batch",
};
_Static_assert(ELEMENTSOF(entry_points) <= KT_COST_RANGES, "more entry points than the sampler holds");

struct cost_probe {
	struct sched_cost_bpf *skel;
	int ncpus;
	int *fds;			/* one cpu-clock event per CPU; -1: offline */
	struct bpf_link **links;
	bool running;
	struct kt_cost *percpu;		/* one per-CPU value */
	struct kt_cost base;		/* the counters when the window started */
};

static int set_ranges(struct sched_cost_bpf *skel, char *why, size_t n)
{
	struct ksym_range ranges[ELEMENTSOF(entry_points)];
	_cleanup_fclose_ FILE *f = NULL;
	unsigned k = 0;
	int r;

	f = fopen("/proc/kallsyms", "re");
	if (!f) {
		r = negative_errno();
		snprintf(why, n, "cannot read /proc/kallsyms: %s", strerror(-r));
		return r;
	}
	r = ksym_ranges_find(f, entry_points, ELEMENTSOF(entry_points), ranges);
	if (r <= 0) {
		snprintf(why, n, "%s", r == -EPERM ? "/proc/kallsyms hides the kernel's addresses" :
			 r < 0 ? "/proc/kallsyms is malformed" : "the block layer's functions are not in /proc/kallsyms");
		return r ?: -ENOENT;
	}
	for (size_t i = 0; i < ELEMENTSOF(ranges); i++) {
		if (!ranges[i].start)
			continue;	/* inlined on this kernel: its callers' ranges hold it */
		skel->rodata->range_start[k] = ranges[i].start;
		skel->rodata->range_end[k] = ranges[i].end;
		k++;
	}
	skel->rodata->n_ranges = k;
	return 0;
}

static int open_events(struct cost_probe *p, char *why, size_t n)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = KT_COST_PERIOD_NS,
		.disabled = 1,
	};
	unsigned opened = 0;

	for (int cpu = 0; cpu < p->ncpus; cpu++) {
		p->fds[cpu] = (int)syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (p->fds[cpu] < 0) {
			if (errno == ENODEV || errno == EINVAL)
				continue;	/* a possible CPU that is not online */
			snprintf(why, n, "cannot open a perf event on CPU %d: %m", cpu);
			return negative_errno();
		}
		p->links[cpu] = bpf_program__attach_perf_event(p->skel->progs.sample, p->fds[cpu]);
		if (!p->links[cpu]) {
			snprintf(why, n, "cannot attach to the perf event of CPU %d: %m", cpu);
			return negative_errno();
		}
		opened++;
	}
	if (!opened) {
		snprintf(why, n, "no CPU has a perf cpu-clock event");
		return -ENODEV;
	}
	return 0;
}

int cost_probe_new(struct cost_probe **ret, char *why, size_t n)
{
	struct cost_probe *p;
	int r;

	p = calloc(1, sizeof(*p));
	if (!p)
		return log_oom();
	p->ncpus = libbpf_num_possible_cpus();
	if (p->ncpus <= 0) {
		r = p->ncpus ?: -EINVAL;
		snprintf(why, n, "cannot count the CPUs: %s", strerror(-r));
		goto fail;
	}
	p->fds = malloc(p->ncpus * sizeof(*p->fds));
	p->links = calloc(p->ncpus, sizeof(*p->links));
	p->percpu = calloc(p->ncpus, sizeof(*p->percpu));
	if (!p->fds || !p->links || !p->percpu) {
		r = log_oom();
		goto fail;
	}
	for (int cpu = 0; cpu < p->ncpus; cpu++)
		p->fds[cpu] = -1;
	p->skel = sched_cost_bpf__open();
	if (!p->skel) {
		r = negative_errno();
		snprintf(why, n, "cannot open its BPF object: %s", strerror(-r));
		goto fail;
	}
	r = set_ranges(p->skel, why, n);
	if (r < 0)
		goto fail;
	r = sched_cost_bpf__load(p->skel);
	if (r < 0) {
		snprintf(why, n, "its BPF program does not load: %s", strerror(-r));
		goto fail;
	}
	r = open_events(p, why, n);
	if (r < 0)
		goto fail;
	*ret = p;
	return 0;
fail:
	cost_probe_free(p);
	return r;
}

struct cost_probe *cost_probe_free(struct cost_probe *p)
{
	if (!p)
		return NULL;
	for (int cpu = 0; p->links && cpu < p->ncpus; cpu++)
		bpf_link__destroy(p->links[cpu]);
	for (int cpu = 0; p->fds && cpu < p->ncpus; cpu++)
		if (p->fds[cpu] >= 0)
			close(p->fds[cpu]);
	sched_cost_bpf__destroy(p->skel);
	free(p->links);
	free(p->fds);
	free(p->percpu);
	free(p);
	return NULL;
}

static int read_counters(struct cost_probe *p, struct kt_cost *ret)
{
	uint32_t zero = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(p->skel->maps.cost), &zero, p->percpu) < 0)
		return negative_errno();
	*ret = (struct kt_cost) {};
	for (int cpu = 0; cpu < p->ncpus; cpu++) {
		ret->samples += p->percpu[cpu].samples;
		ret->block += p->percpu[cpu].block;
	}
	return 0;
}

static int set_enabled(struct cost_probe *p, bool on)
{
	int r = 0;

	for (int cpu = 0; cpu < p->ncpus; cpu++)
		if (p->fds[cpu] >= 0 &&
		    ioctl(p->fds[cpu], on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0) < 0)
			r = negative_errno();
	return r;
}

int cost_probe_start(struct cost_probe *p)
{
	int r;

	if (p->running)
		return 0;
	r = read_counters(p, &p->base);
	if (r < 0)
		return r;
	r = set_enabled(p, true);
	if (r < 0) {
		(void)set_enabled(p, false);
		return r;
	}
	p->running = true;
	return 0;
}

int cost_probe_stop(struct cost_probe *p, struct cost_window *ret)
{
	struct kt_cost now;
	int r;

	if (!p->running)
		return -ESRCH;
	r = set_enabled(p, false);
	p->running = false;
	if (r < 0)
		return r;
	r = read_counters(p, &now);
	if (r < 0)
		return r;
	*ret = (struct cost_window) {
		.samples = now.samples - p->base.samples,
		.block = now.block - p->base.block,
		.period_ns = KT_COST_PERIOD_NS,
	};
	return 0;
}

bool cost_probe_running(const struct cost_probe *p)
{
	return p && p->running;
}
