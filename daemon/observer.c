/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/capability.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "kyber_observer.skel.h"
#include "log.h"
#include "macro.h"
#include "observer-internal.h"
#include "time-util.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

#define VMLINUX_BTF "/sys/kernel/btf/vmlinux"

/*
 * After the insert/issue programs are detached, the requests they tracked
 * still complete through the map for this long; what is left then (a
 * request in flight longer, or a completion never delivered) is swept.
 */
#define TRACKING_DRAIN_NS	1000000000ull

static const char *const attach_names[] = {
	[OBSERVER_ATTACH_AUTO] = "auto",
	[OBSERVER_ATTACH_TP_BTF] = "tp_btf",
	[OBSERVER_ATTACH_RAW_TP] = "raw_tp",
};

int observer_attach_from_string(const char *s, enum observer_attach *ret)
{
	for (size_t i = 0; i < ELEMENTSOF(attach_names); i++)
		if (strcmp(s, attach_names[i]) == 0) {
			*ret = (enum observer_attach)i;
			return 0;
		}
	return -EINVAL;
}

const char *observer_attach_to_string(enum observer_attach a)
{
	return (size_t)a < ELEMENTSOF(attach_names) ? attach_names[a] : "?";
}

enum observer_attach observer_attach_mode(const struct observer *o)
{
	return o->mode;
}

bool observer_has_kyber_view(const struct observer *o)
{
	return o->kyber_view;
}

/* libbpf's chatter (verifier logs included) goes to debug. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (log_get_max_level() < LOG_LEVEL_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* Names the capabilities that loading tracing BPF needs and we lack. */
static bool missing_bpf_caps(char *buf, size_t n)
{
	cap_flag_value_t bpf = CAP_CLEAR, perfmon = CAP_CLEAR, admin = CAP_CLEAR;
	cap_t caps = cap_get_proc();

	if (!caps)
		return false;
	(void)cap_get_flag(caps, CAP_BPF, CAP_EFFECTIVE, &bpf);
	(void)cap_get_flag(caps, CAP_PERFMON, CAP_EFFECTIVE, &perfmon);
	(void)cap_get_flag(caps, CAP_SYS_ADMIN, CAP_EFFECTIVE, &admin);
	cap_free(caps);
	if (admin == CAP_SET || (bpf == CAP_SET && perfmon == CAP_SET))
		return false;
	snprintf(buf, n, "%s%s%s", bpf == CAP_SET ? "" : "CAP_BPF",
		 bpf != CAP_SET && perfmon != CAP_SET ? " and " : "",
		 perfmon == CAP_SET ? "" : "CAP_PERFMON");
	return true;
}

static bool btf_has_typedef(const struct btf *btf, const char *name)
{
	return btf && btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF) >= 0;
}

static int choose_programs(struct observer *o, enum observer_attach want)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	struct bpf_program *prog;
	bool have_tp_btf;

	if (!vmlinux)
		return log_error_errno(-errno ?: -EIO, "Failed to load kernel BTF from %s: %m", VMLINUX_BTF);
	have_tp_btf = btf_has_typedef(vmlinux, "btf_trace_block_rq_insert");
	o->kyber_view = btf_has_typedef(vmlinux, "btf_trace_kyber_adjust");
	btf__free(vmlinux);

	if (want == OBSERVER_ATTACH_TP_BTF && !have_tp_btf)
		return log_error_errno(-ENOTSUP, "This kernel has no BTF-typed block tracepoints (tp_btf); "
				       "use --attach=raw_tp or auto");
	o->mode = want == OBSERVER_ATTACH_AUTO ?
		(have_tp_btf ? OBSERVER_ATTACH_TP_BTF : OBSERVER_ATTACH_RAW_TP) : want;

	bpf_object__for_each_program(prog, o->skel->obj) {
		const char *name = bpf_program__name(prog);
		bool ours = strncmp(name, o->mode == OBSERVER_ATTACH_TP_BTF ? "btf_" : "raw_", 4) == 0;

		/* Without Kyber built in its tracepoints do not exist. */
		if (strstr(name, "_kyber_") && !o->kyber_view)
			ours = false;
		bpf_program__set_autoload(prog, ours);
		if (ours && (strstr(name, "_rq_insert") || strstr(name, "_rq_issue"))) {
			/* Attached only while a watched device needs them. */
			bpf_program__set_autoattach(prog, false);
			o->track_progs[strstr(name, "_rq_insert") ? 0 : 1] = prog;
		} else if (ours && strstr(name, "_sched_")) {
			bpf_program__set_autoattach(prog, false);
			o->waiter_progs[strstr(name, "_sched_waking") ? 0 : 1] = prog;
		}
	}
	return 0;
}

/* What the observer needs before it tries anything: the number of possible CPUs, or -errno (logged). */
static int check_environment(unsigned max_devices)
{
	char caps[64];
	int ncpus;

	if (max_devices == 0 || max_devices > OBSERVER_DEVICES_MAX)
		return log_error_errno(-EINVAL, "Invalid device count %u (1..%u)", max_devices,
				       OBSERVER_DEVICES_MAX);
	if (access(VMLINUX_BTF, R_OK) < 0)
		return log_error_errno(negative_errno(), "Kernel BTF is missing (%s: %m): kyber-tuned needs "
				       "a kernel built with CONFIG_DEBUG_INFO_BTF=y", VMLINUX_BTF);
	if (missing_bpf_caps(caps, sizeof(caps)))
		return log_error_errno(-EPERM, "BPF not permitted: missing %s (or CAP_SYS_ADMIN); run as root",
				       caps);
	ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0)
		return log_error_errno(ncpus < 0 ? ncpus : -EIO, "Failed to count possible CPUs: %m");
	return ncpus;
}

static int open_skeleton(struct observer *o, enum observer_attach attach)
{
	int r;

	o->skel = kyber_observer_bpf__open();
	if (!o->skel)
		return log_error_errno(negative_errno(), "Failed to open the BPF object: %m");
	/* ~1024 requests in flight per device is far above any tag depth. */
	bpf_map__set_max_entries(o->skel->maps.watched, o->max_devices);
	bpf_map__set_max_entries(o->skel->maps.kyber_state, o->max_devices);
	bpf_map__set_max_entries(o->skel->maps.dev_stats, o->max_devices);
	bpf_map__set_max_entries(o->skel->maps.app_moves, o->max_devices);
	bpf_map__set_max_entries(o->skel->maps.sampling, o->max_devices);
	bpf_map__set_max_entries(o->skel->maps.requests, MAX(4096u, o->max_devices * 1024u));

	r = choose_programs(o, attach);
	if (r < 0)
		return r;
	r = kyber_observer_bpf__load(o->skel);
	if (r == -EPERM || r == -EACCES)
		return log_error_errno(r, "BPF not permitted: loading failed with %m; kyber-tuned needs "
				       "CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN)");
	if (r < 0)
		return log_error_errno(r, "Failed to load the BPF programs (%s): %m; "
				       "--log-level=debug shows the verifier log",
				       observer_attach_to_string(o->mode));
	r = kyber_observer_bpf__attach(o->skel);
	if (r < 0)
		return log_error_errno(r, "Failed to attach the BPF programs (%s): %m",
				       observer_attach_to_string(o->mode));
	return 0;
}

int observer_new(struct observer **ret, enum observer_attach attach, unsigned max_devices)
{
	struct observer *o;
	int r, ncpus;

	ncpus = check_environment(max_devices);
	if (ncpus < 0)
		return ncpus;
	libbpf_set_print(libbpf_print);
	o = calloc(1, sizeof(*o));
	if (!o)
		return log_oom();
	o->ncpus = (unsigned)ncpus;
	o->stride = (sizeof(struct kt_dev_stats) + 7) & ~(size_t)7;
	o->max_devices = max_devices;
	o->percpu = calloc(o->ncpus, o->stride);
	o->slot_used = calloc(max_devices, sizeof(bool));
	o->slot_tracked = calloc(max_devices, sizeof(bool));
	o->slot_cgroups = calloc(max_devices, sizeof(bool));
	o->slot_kdev = calloc(max_devices, sizeof(uint32_t));
	o->slot_sampling = calloc(max_devices, sizeof(struct kt_sampling));
	o->books = calloc(max_devices, sizeof(struct slot_books));
	if (!o->percpu || !o->slot_used || !o->slot_tracked || !o->slot_cgroups || !o->slot_kdev || !o->slot_sampling ||
	    !o->books) {
		r = log_oom();
		goto fail;
	}
	r = open_skeleton(o, attach);
	if (r < 0)
		goto fail;
	*ret = o;
	return 0;
fail:
	observer_free(o);
	return r;
}

struct observer *observer_free(struct observer *o)
{
	if (!o)
		return NULL;
	observer_adjusts_close(o);
	for (size_t i = 0; i < ELEMENTSOF(o->track_links); i++)
		bpf_link__destroy(o->track_links[i]);
	for (size_t i = 0; i < ELEMENTSOF(o->waiter_links); i++)
		bpf_link__destroy(o->waiter_links[i]);
	kyber_observer_bpf__destroy(o->skel);
	free(o->percpu);
	free(o->slot_used);
	free(o->slot_tracked);
	free(o->slot_cgroups);
	free(o->slot_kdev);
	free(o->slot_sampling);
	free(o->books);
	free(o);
	return NULL;
}

static int slot_of_kdev(const struct observer *o, uint32_t kdev)
{
	for (unsigned slot = 0; slot < o->max_devices; slot++)
		if (o->slot_used[slot] && o->slot_kdev[slot] == kdev)
			return (int)slot;
	return -1;
}

/*
 * Delete the request entries of one slot (slot < 0: of every device);
 * with books, record them on their slot's books. Collects the keys first
 * and deletes after: one walk of the map, however many match.
 */
static int sweep_requests(struct observer *o, int slot, bool books)
{
	int fd = bpf_map__fd(o->skel->maps.requests);
	_cleanup_free_ __u64 *keys = NULL;
	size_t n = 0, cap = 0;
	__u64 key, next;
	struct kt_req v;
	void *prev = NULL;
	int swept = 0;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (n == cap) {
			__u64 *k = reallocarray(keys, cap ? 2 * cap : 64, sizeof(*keys));

			if (!k)
				return -ENOMEM;
			keys = k;
			cap = cap ? 2 * cap : 64;
		}
		keys[n++] = key;
	}
	for (size_t i = 0; i < n; i++) {
		int owner;

		if (bpf_map_lookup_elem(fd, &keys[i], &v) < 0)
			continue;	/* completed meanwhile */
		owner = slot_of_kdev(o, v.dev);
		if ((slot >= 0 && owner != slot) || bpf_map_delete_elem(fd, &keys[i]) < 0)
			continue;
		if (books && owner >= 0 && v.op < KT_OP_MAX) {
			struct slot_books *b = &o->books[owner];

			if (v.state == KT_REQ_QUEUED)
				b->queued[v.op]++;
			else
				b->inflight[v.op]++;
			b->expired[v.op]++;
		}
		swept++;
	}
	return swept;
}

/* Attach (want) or detach programs loaded without autoattach. -errno. */
static int attach_on_demand(struct bpf_program *const *progs, struct bpf_link **links, size_t n, bool want)
{
	for (size_t i = 0; i < n; i++) {
		if (!want) {
			bpf_link__destroy(links[i]);
			links[i] = NULL;
		} else if (progs[i] && !links[i]) {
			links[i] = bpf_program__attach(progs[i]);
			if (!links[i]) {
				int r = negative_errno();

				return log_error_errno(r, "Failed to attach %s: %m", bpf_program__name(progs[i]));
			}
		}
	}
	return 0;
}

/* The waiter programs (the reads' app span) while any device is watched. */
static int reconcile_waiters(struct observer *o)
{
	bool want = false;

	for (unsigned slot = 0; slot < o->max_devices; slot++)
		want = want || o->slot_used[slot];
	return attach_on_demand(o->waiter_progs, o->waiter_links, ELEMENTSOF(o->waiter_links), want);
}

/* Attach insert/issue while any watched device needs them; after they are
 * detached, sweep what they left once it had time to complete. */
static int reconcile_tracking(struct observer *o)
{
	bool want = false, have = o->track_links[0] || o->track_links[1];
	int r;

	for (unsigned slot = 0; slot < o->max_devices; slot++)
		want = want || (o->slot_used[slot] && o->slot_tracked[slot]);
	if (want && !have) {
		o->skel->bss->tracking = true;
		o->detached_ns = 0;
		r = attach_on_demand(o->track_progs, o->track_links, ELEMENTSOF(o->track_links), true);
		if (r < 0)
			return r;
		log_debug("Request tracking attached (insert/issue)");
	} else if (!want && have) {
		(void)attach_on_demand(o->track_progs, o->track_links, ELEMENTSOF(o->track_links), false);
		o->detached_ns = now_ns(CLOCK_MONOTONIC);
		log_debug("Request tracking detached: every watched device is timed by its stamps");
	} else if (!want && o->detached_ns &&
		   now_ns(CLOCK_MONOTONIC) - o->detached_ns >= TRACKING_DRAIN_NS) {
		int n = sweep_requests(o, -1, true);

		if (n > 0)
			log_debug("Swept %d request entries left by tracking", n);
		o->skel->bss->tracking = false;
		o->detached_ns = 0;
	}
	return 0;
}

/* The programs attached on demand, as the watched devices want them. */
static int reconcile_programs(struct observer *o)
{
	int r = reconcile_tracking(o);

	return r < 0 ? r : reconcile_waiters(o);
}

int observer_write_watch(struct observer *o, unsigned slot)
{
	struct kt_watch w = {
		.slot = slot,
		.flags = (o->slot_tracked[slot] ? KT_WATCH_TRACK : 0) | (o->slot_cgroups[slot] ? KT_WATCH_CGROUPS : 0),
	};

	if (bpf_map_update_elem(bpf_map__fd(o->skel->maps.watched), &o->slot_kdev[slot], &w, BPF_EXIST) < 0)
		return negative_errno();
	return 0;
}

int observer_set_tracked(struct observer *o, unsigned slot, bool tracked)
{
	if (slot >= o->max_devices || !o->slot_used[slot])
		return -ENOENT;
	if (o->slot_tracked[slot] != tracked) {
		bool was = o->slot_tracked[slot];
		int r;

		o->slot_tracked[slot] = tracked;
		r = observer_write_watch(o, slot);
		if (r < 0) {
			o->slot_tracked[slot] = was;
			return r;
		}
	}
	return reconcile_programs(o);
}

/* Zeroes a slot's statistics on every CPU and names its device (0: free). */
static int write_slot_stats(struct observer *o, unsigned slot, uint32_t kdev)
{
	memset(o->percpu, 0, o->ncpus * o->stride);
	for (unsigned c = 0; c < o->ncpus; c++) {
		struct kt_dev_stats *ds = (void *)((char *)o->percpu + c * o->stride);

		ds->dev = kdev;
		ds->slot = slot;
	}
	if (bpf_map_update_elem(bpf_map__fd(o->skel->maps.dev_stats), &slot, o->percpu, BPF_ANY) < 0 ||
	    bpf_map_update_elem(bpf_map__fd(o->skel->maps.app_moves), &slot, &(struct kt_app_moves){}, BPF_ANY) < 0)
		return negative_errno();
	return 0;
}

int observer_write_sampling(struct observer *o, unsigned slot)
{
	struct kt_sampling none = {};
	const struct kt_sampling *sm = o->slot_cgroups[slot] ? &none : &o->slot_sampling[slot];

	if (bpf_map_update_elem(bpf_map__fd(o->skel->maps.sampling), &slot, sm, BPF_ANY) < 0)
		return negative_errno();
	return 0;
}

int observer_set_sampling(struct observer *o, unsigned slot, const struct kt_sampling *sm)
{
	struct kt_sampling was;
	int r;

	if (slot >= o->max_devices || !o->slot_used[slot])
		return -ENOENT;
	if (memcmp(&o->slot_sampling[slot], sm, sizeof(*sm)) == 0)
		return 0;
	was = o->slot_sampling[slot];
	o->slot_sampling[slot] = *sm;
	r = observer_write_sampling(o, slot);
	if (r < 0)
		o->slot_sampling[slot] = was;
	return r;
}

int observer_watch(struct observer *o, uint32_t kdev, unsigned *ret_slot)
{
	struct kt_watch w = { .flags = KT_WATCH_TRACK };
	struct kt_kyber_state ks = {};
	unsigned slot;
	int r;

	if (kdev == 0)
		return -EINVAL;	/* names a free slot in dev_stats */
	if (slot_of_kdev(o, kdev) >= 0)
		return -EEXIST;
	for (slot = 0; slot < o->max_devices && o->slot_used[slot]; slot++)
		;
	if (slot == o->max_devices)
		return -ENOSPC;

	/* Fresh counters, named for the device before the programs can find it. */
	r = write_slot_stats(o, slot, kdev);
	if (r < 0)
		return r;
	if (bpf_map_update_elem(bpf_map__fd(o->skel->maps.kyber_state), &slot, &ks, BPF_ANY) < 0)
		goto fail;
	/* Every completion timed until an interval says how often it comes. */
	o->slot_cgroups[slot] = false;
	o->slot_sampling[slot] = (struct kt_sampling){};
	if (observer_write_sampling(o, slot) < 0)
		goto fail;
	memset(&o->books[slot], 0, sizeof(o->books[slot]));

	/* Tracked until the caller says how the device is timed: never
	 * misses a request in the meantime. */
	w.slot = slot;
	if (bpf_map_update_elem(bpf_map__fd(o->skel->maps.watched), &kdev, &w, BPF_NOEXIST) < 0)
		goto fail;
	o->slot_used[slot] = true;
	o->slot_tracked[slot] = true;
	o->slot_kdev[slot] = kdev;
	*ret_slot = slot;
	r = reconcile_programs(o);
	if (r < 0)
		(void)observer_unwatch(o, slot);
	return r;

fail:
	r = negative_errno();
	(void)write_slot_stats(o, slot, 0);
	return r;
}

int observer_unwatch(struct observer *o, unsigned slot)
{
	if (slot >= o->max_devices || !o->slot_used[slot])
		return -ENOENT;
	if (bpf_map_delete_elem(bpf_map__fd(o->skel->maps.watched), &o->slot_kdev[slot]) < 0)
		return negative_errno();
	(void)sweep_requests(o, (int)slot, false);
	(void)write_slot_stats(o, slot, 0);
	observer_cgroups_drop(o, slot);
	o->slot_used[slot] = false;
	o->slot_tracked[slot] = false;
	(void)reconcile_programs(o);
	return 0;
}

int observer_expire(struct observer *o, unsigned slot)
{
	if (slot >= o->max_devices || !o->slot_used[slot])
		return -ENOENT;
	return sweep_requests(o, (int)slot, true);
}

int observer_snapshot(struct observer *o, unsigned slot, struct kt_snapshot *out)
{
	struct kt_app_moves moves;

	if (slot >= o->max_devices || !o->slot_used[slot])
		return -ENOENT;
	if (bpf_map_lookup_elem(bpf_map__fd(o->skel->maps.dev_stats), &slot, o->percpu) < 0)
		return negative_errno();
	dev_stats_sum_cpus(out, o->percpu, o->ncpus, o->stride);
	if (bpf_map_lookup_elem(bpf_map__fd(o->skel->maps.app_moves), &slot, &moves) < 0)
		return negative_errno();
	snapshot_app_span(out, &moves);
	for (unsigned op = 0; op < KT_OP_MAX; op++) {
		out->op[op].queued -= o->books[slot].queued[op];
		out->op[op].inflight -= o->books[slot].inflight[op];
		out->expired[op] = o->books[slot].expired[op];
	}
	if (bpf_map_lookup_elem(bpf_map__fd(o->skel->maps.kyber_state), &slot, &out->kyber) < 0)
		return negative_errno();
	out->time_ns = now_ns(CLOCK_MONOTONIC);
	return 0;
}

int observer_prog_stats(struct observer *o, struct observer_prog_stats *out, size_t n)
{
	struct bpf_program *prog;
	int count = 0;

	bpf_object__for_each_program(prog, o->skel->obj) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (fd < 0 || !bpf_program__autoload(prog))
			continue;
		if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0)
			return negative_errno();
		if ((size_t)count < n) {
			snprintf(out[count].name, sizeof(out[count].name), "%s", bpf_program__name(prog));
			out[count].run_cnt = info.run_cnt;
			out[count].run_time_ns = info.run_time_ns;
			out[count].recursion_misses = info.recursion_misses;
		}
		count++;
	}
	return count;
}

int observer_pending_requests(struct observer *o, size_t *ret)
{
	int fd = bpf_map__fd(o->skel->maps.requests);
	__u64 key, next;
	void *prev = NULL;
	size_t n = 0;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		n++;
	}
	*ret = n;
	return 0;
}

int observer_check_access(struct observer *o)
{
	__u64 next;
	int r;

	/* Any map command will do: before Linux 6.5 each needs CAP_BPF when
	 * unprivileged BPF is disabled, since then none does. */
	r = bpf_map_get_next_key(bpf_map__fd(o->skel->maps.requests), NULL, &next);
	return r == -ENOENT ? 0 : r;
}
