# SPDX-License-Identifier: LGPL-2.1-or-later
"""The BPF observer against the real kernel: accuracy against fio and the
kernel's own counters, no per-request leaks, the raw_tp fallback, Kyber's
view, and errors that name their cause.

Where the observer and fio measure different spans the tests say which and
assert the relation that follows from the cause (see docs/observer.md):
- fio's completion latency of an I/O starts after io_uring_enter returns and
  ends when fio reaps it; the observer's total runs from block_rq_insert (or
  issue) to block_rq_complete. Each I/O's observer span lies inside fio's
  total (slat + clat) span, so no observer percentile can exceed fio's total
  percentile.
- At iodepth 256 on a device with 128 driver tags (scheduler none), half of
  fio's I/Os wait for a tag before any request exists: invisible to request
  tracepoints. Little's law gives the offset: fio/observer = iodepth / tags.
- On loop over /dev/shm every I/O is a few microseconds of CPU work, the same
  order as the submission and completion path outside the block layer on
  this 2-vCPU VM, so only containment and Little's law are asserted there.
"""

import math
import os
import subprocess
import time

import pytest

from tests.lib import fio, hoststeal
from tests.lib.daemon import json_lines

RUNTIME = 6  # >= 5 s per the acceptance criteria


class KernelStat:
    """The kernel's own accounting of the same requests (/sys/block/DEV/stat):
    per-op completions and the sum of their latencies, measured by the block
    layer from request allocation to completion (iostat's await)."""

    def __init__(self, dev):
        self.dev = dev
        self.before = self.read()

    def read(self):
        return [int(x) for x in open(f"{self.dev.sysfs}/stat").read().split()]

    def finish(self):
        a, b = self.before, self.read()
        self.ios = {"read": b[0] - a[0], "write": b[4] - a[4]}
        # I/Os merged into another request (bio or request merges).
        self.merges = {"read": b[1] - a[1], "write": b[5] - a[5]}
        ticks_ms = {"read": b[3] - a[3], "write": b[7] - a[7]}
        self.await_ns = {op: ticks_ms[op] * 1e6 / max(1, self.ios[op]) for op in ticks_ms}
        return self


def observe_once(daemon_factory, dev, workload, interval):
    d = daemon_factory(["--observe", dev.name, "--json", "--interval", f"{interval}s",
                        "--count", "1"])
    assert d.ready(), d.stderr()
    t0 = time.monotonic()
    kstat = KernelStat(dev)
    res = workload()
    kstat.finish()
    assert time.monotonic() - t0 < interval, "workload outlived the observer interval"
    out = d.communicate(timeout=interval + 30)
    lines = json_lines(out)
    assert len(lines) == 1, out
    return lines[0], res, kstat


def observe_during(daemon_factory, dev, workload, slack=3.0, tries=2):
    """One observer interval that covers exactly one workload run. A run in
    which the host stole more than 5% of the CPUs measures the host's
    stalls (and, measured here, loses several times more completion
    events, see docs/observer.md): it is run again, and the test skips
    when every try was disturbed."""
    with fio.io_lock(), hoststeal.Monitor() as steal:
        return steal.calm_run(lambda: observe_once(daemon_factory, dev, workload, RUNTIME + slack),
                              f"one observer interval on {dev.name}", tries)[0]


def run_job(dev, name, rw, iodepth, cpu):
    job = fio.Job(name, rw, iodepth=iodepth, cpu=cpu)
    return fio.run(dev.path, [job], runtime_s=RUNTIME, ramp_s=0,
                   global_extra={"lat_percentiles": 1, "clat_percentiles": 1})[name]


def sides(res, obs, op):
    o = obs["ops"][op]
    if op == "read":
        return o, res.read_clat_ns, res.read_lat_ns, res.read_ios, res.read_clat_mean_ns
    return o, res.write_clat_ns, res.write_lat_ns, res.write_ios, res.write_clat_mean_ns


def report(label, o, clat, lat, kstat, op):
    t = o["total"]
    print(f"\n{label}: fio clat p50 {clat[50.0]/1e3:.1f}us p99 {clat[99.0]/1e3:.1f}us | "
          f"fio lat p50 {lat[50.0]/1e3:.1f}us p99 {lat[99.0]/1e3:.1f}us | observer total "
          f"p50 {t['p50_ns']/1e3:.1f}us p99 {t['p99_ns']/1e3:.1f}us mean {t['mean_ns']/1e3:.1f}us | "
          f"kernel await {kstat.await_ns[op]/1e3:.1f}us")


# Completion events the kernel never runs a program for (docs/observer.md):
# measured up to 0.044% of requests on this VM, also in runs with at most
# 5% host steal; twice that and some margin.
LOST_BOUND = 1e-3


def assert_counts(o, ios, kstat, op):
    """The observer saw every request the kernel completed, once; and every
    I/O fio counted is a request or was merged into one (with a scheduler,
    neighbouring random writes merge)."""
    print(f"requests: observer {o['completed']}, kernel {kstat.ios[op]} + {kstat.merges[op]} "
          f"merged, fio {ios}")
    assert abs(o["completed"] - kstat.ios[op]) <= max(10, ios * LOST_BOUND), (o["completed"], kstat.ios[op])
    assert abs(kstat.ios[op] + kstat.merges[op] - ios) <= max(10, ios * LOST_BOUND), (kstat.ios[op], ios)
    assert o["dropped"] == 0 and o["errors"] == 0


# Percentile resolution: the observer's buckets (2.5%, KT_HIST_SUB 20) and
# fio's (~1.6%).
RES = 1.045
# Host time outside the block layer on this 2-vCPU VM: syscall entry and
# bio setup before the insert, completion IPI, wake-up and reap after it.
# Measured 10-35 us per I/O at P50 (fio lat - observer).
HOST_NS = 40000
# At P99 the gap is the host path's tail: fio's wake-up waits behind
# flashsim's and the loop worker's threads on the same 2 CPUs, measured
# from 40 us on a quiet run to 185 us (observer 182 us, fio 367 us) on one
# with no host steal at all: as large as the device time, so at P99 only
# containment holds. The observer's tail is still checked: every request
# counted against the kernel's own count (assert_counts), the mean against
# the kernel's (assert_kernel_mean), and the percentile arithmetic against
# exact percentiles in tests/unit/test-hist.c.


def assert_within_fio(o, lat, host_ns=HOST_NS):
    """Each I/O's observer span lies inside its fio total span (lat), so no
    observer percentile exceeds fio's; at P50 it is short of fio's by the
    host path, lat - obs <= 10% + host_ns (None: the host path is not
    bounded, only containment holds)."""
    for p, key in ((50.0, "p50_ns"), (99.0, "p99_ns")):
        v = o["total"][key]
        assert v <= lat[p] * RES, ("observer above fio's total", p, v, lat[p])
    if host_ns is not None:
        v = o["total"]["p50_ns"]
        assert lat[50.0] - v <= 0.10 * lat[50.0] + host_ns, ("observer too far below fio", 50.0, v, lat[50.0])


# Of the time fio's reads spend outside the block layer (fio's lat mean -
# the observer's total mean), the share the app span must cover at least:
# the wait for the reader to be woken and to run is most of it (all of it
# within 1 us on shm R1, 2026-12-01: app mean 29.7 us, fio 29.7 us, total
# 15.3 us); the rest, the syscall's own path, is not the app span's. Half
# leaves room for a run in which some wakeups go to another task first.
APP_GAP_COVERED = 0.5
# The app span ends before fio reaps the read, so it stays under fio's
# total span: at P99 by 2-7% on shm R1 and 2-4% on flash R1 (seven runs of
# 2026-12-01), its mean within 2% of fio's either way. Not at P50 on shm:
# there the reads split between those whose reader did not sleep (~10 us)
# and those it waited for (~20-40 us), P50 falls on that edge, and the app
# span's came out from 5% under to 10% over fio's. So P99 and the mean are
# compared, the mean within the 5% the two clocks and histograms allow
# (fio times with the TSC it calibrates at start).
APP_MEAN_OVER_FIO = 1.05


def assert_app_span(o, lat, lat_mean_ns):
    """The reads' app span (start -> the waiting task runs) contains the
    total (start -> completion) of the same read and ends before fio reaps
    it (at P99 and in the mean); and it covers most of what fio's reads
    spend outside the block layer."""
    app, tot = o["app"], o["total"]
    print(f"app span p50 {app['p50_ns']/1e3:.1f}us p99 {app['p99_ns']/1e3:.1f}us "
          f"mean {app['mean_ns']/1e3:.1f}us; fio lat p50 {lat[50.0]/1e3:.1f}us "
          f"p99 {lat[99.0]/1e3:.1f}us mean {lat_mean_ns/1e3:.1f}us")
    assert app["count"] == tot["count"], (app["count"], tot["count"])
    for p, key in ((50.0, "p50_ns"), (99.0, "p99_ns")):
        assert tot[key] <= app[key] * RES, ("app span under the total", p, app[key], tot[key])
    assert app["p99_ns"] <= lat[99.0] * RES, ("app span over fio's total", app["p99_ns"], lat[99.0])
    assert app["mean_ns"] <= lat_mean_ns * APP_MEAN_OVER_FIO, ("app span over fio's total",
                                                               app["mean_ns"], lat_mean_ns)
    assert app["mean_ns"] - tot["mean_ns"] >= APP_GAP_COVERED * (lat_mean_ns - tot["mean_ns"]), \
        ("app span misses the wait for the reader", app["mean_ns"], tot["mean_ns"], lat_mean_ns)


def assert_kernel_mean(o, kstat, op, low):
    """The kernel's own mean (allocation -> completion) contains ours
    (insert/issue -> completion); they differ by the allocation-to-insert
    time, negligible when the device time dominates."""
    mean, kernel = o["total"]["mean_ns"], kstat.await_ns[op]
    assert low * kernel <= mean <= 1.02 * kernel + 1000, (mean, kernel)


@pytest.fixture
def flash(device_factory):
    return device_factory("flashsim", profile="flash")


@pytest.fixture
def shm(device_factory):
    return device_factory("shm", size_mib=256)


# x the kernel's mean (allocation -> completion): our mean (issue ->
# completion) on flash R1 is at least this (test_accuracy_flash_r1).
FLASH_R1_KERNEL_MEAN_LOW = 0.8


def test_accuracy_flash_r1(daemon_factory, flash):
    """QD1 on the flash model: nothing waits outside the block layer but the
    host path, which is small against ~150 us of device time."""
    obs, res, kstat = observe_during(daemon_factory, flash,
                                     lambda: run_job(flash, "r1", "randread", 1, 0))
    o, clat, lat, ios, _ = sides(res, obs, "read")
    report("flash R1", o, clat, lat, kstat, "read")
    assert_counts(o, ios, kstat, "read")
    assert_within_fio(o, lat)
    # The kernel's span starts earlier (allocation) and ends later (its
    # accounting follows the completion tracepoint). With ~110 us of device
    # time on the Intel host the gap was 12% (109.8 vs 124.3 us, 0% steal),
    # over the 0.9 that held on the AMD host. FLASH_R1_KERNEL_MEAN_LOW keeps
    # margin for that and still fails an observer that loses or misplaces
    # a share of the requests; the upper bound stays tight.
    assert_kernel_mean(o, kstat, "read", FLASH_R1_KERNEL_MEAN_LOW)
    # No scheduler: a request is issued as it is allocated, so where the
    # issue is stamped at all (the queue keeps statistics, as writeback
    # throttling makes it) the queue span stays under 1 us, and the device
    # span is the total one.
    assert o["queue"]["count"] == 0 or o["queue"]["p99_ns"] < 1024, o["queue"]
    assert abs(o["total"]["p50_ns"] - o["device"]["p50_ns"]) <= 0.02 * o["total"]["p50_ns"]
    assert_app_span(o, lat, res.read_lat_mean_ns)


def test_accuracy_flash_w256_scheduler(daemon_factory, flash):
    """QD256 with mq-deadline (256 scheduler tags): every I/O fio has
    outstanding is a request in the block layer; P50/P99 within 10%."""
    flash.set_scheduler("mq-deadline")
    assert int(open(f"{flash.sysfs}/queue/nr_requests").read()) >= 256
    obs, res, kstat = observe_during(daemon_factory, flash,
                                     lambda: run_job(flash, "w256", "randwrite", 256, 1))
    o, clat, lat, ios, _ = sides(res, obs, "write")
    report("flash W256 mq-deadline", o, clat, lat, kstat, "write")
    assert_counts(o, ios, kstat, "write")
    for p, key in ((50.0, "p50_ns"), (99.0, "p99_ns")):
        assert abs(o["total"][key] - clat[p]) <= 0.10 * clat[p], (p, o["total"][key], clat[p])
    assert_kernel_mean(o, kstat, "write", 0.9)
    assert o["queue"]["count"] > 0


def test_accuracy_flash_w256_none_tag_wait(daemon_factory, flash):
    """QD256 with scheduler none on a 128-tag device: the documented offset.
    Half of fio's I/Os wait for a driver tag before a request exists, so by
    Little's law fio's mean latency is iodepth/tags times the observer's;
    the kernel's own accounting agrees with the observer."""
    tags = int(open(f"{flash.sysfs}/queue/nr_requests").read())
    obs, res, kstat = observe_during(daemon_factory, flash,
                                     lambda: run_job(flash, "w256", "randwrite", 256, 1))
    o, clat, lat, ios, clat_mean = sides(res, obs, "write")
    report("flash W256 none", o, clat, lat, kstat, "write")
    assert_counts(o, ios, kstat, "write")
    ratio = clat_mean / o["total"]["mean_ns"]
    print(f"fio/observer mean latency {ratio:.2f}, predicted 256/{tags} = {256 / tags:.2f}")
    assert abs(ratio - 256 / tags) <= 0.10 * (256 / tags)
    # The tag wait does not fall evenly on the I/Os: it shows in fio's mean
    # and tail, while fio's P50 can sit at the device time itself (a CI
    # run: fio clat P50 7.96 ms, observer 8.07 ms; P99 74.97 against
    # 8.60 ms). At P50, as at P99, only containment holds, within the two
    # histograms' resolution.
    assert_within_fio(o, lat, host_ns=None)
    assert_kernel_mean(o, kstat, "write", 0.9)


def test_accuracy_shm_r1(daemon_factory, shm):
    """QD1 on RAM: microsecond I/O, so the host path is of the same order
    as the I/O itself. The observer lies inside fio's span, and inside the
    kernel's (allocation -> completion)."""
    obs, res, kstat = observe_during(daemon_factory, shm,
                                     lambda: run_job(shm, "r1", "randread", 1, 0))
    o, clat, lat, ios, _ = sides(res, obs, "read")
    report("shm R1", o, clat, lat, kstat, "read")
    assert_counts(o, ios, kstat, "read")
    # Preemption tails of the host path reach 50+ us at P99: same order as
    # the I/O. Containment only.
    assert_within_fio(o, lat, host_ns=None)
    assert_kernel_mean(o, kstat, "read", 0.5)
    assert_app_span(o, lat, res.read_lat_mean_ns)


def test_accuracy_shm_w256(daemon_factory, shm):
    """QD256 on RAM: CPU-bound; most of fio's latency is waiting for a CPU
    or a tag outside the block layer (the observer sees at most the 128
    requests the device's tags allow: Little's law). The kernel's own
    accounting of the block layer agrees with the observer."""
    tags = int(open(f"{shm.sysfs}/queue/nr_requests").read())
    obs, res, kstat = observe_during(daemon_factory, shm,
                                     lambda: run_job(shm, "w256", "randwrite", 256, 1))
    o, clat, lat, ios, clat_mean = sides(res, obs, "write")
    report("shm W256", o, clat, lat, kstat, "write")
    assert_counts(o, ios, kstat, "write")
    in_block_layer = res.write_iops * o["total"]["mean_ns"] / 1e9
    in_fio = res.write_iops * clat_mean / 1e9
    print(f"requests in the block layer {in_block_layer:.1f} (<= {tags} tags), at fio {in_fio:.1f}")
    assert in_block_layer <= tags * 1.05
    assert abs(in_fio - 256) <= 0.10 * 256
    for p, key in ((50.0, "p50_ns"), (99.0, "p99_ns")):
        assert o["total"][key] <= lat[p] * RES
    assert_kernel_mean(o, kstat, "write", 0.8)


# daemon/interval.c: timed completions a second an op keeps under
# sampling, and the largest shift (1 in 16).
TIMED_PER_SEC_MIN = 20000
SAMPLE_SHIFT_MAX = 4


def sample_shift(iops):
    k = 0
    while k < SAMPLE_SHIFT_MAX and iops / (2 << k) >= TIMED_PER_SEC_MIN:
        k += 1
    return k


def sampled_run(daemon_factory, dev):
    """The --observe intervals (1 s) of W256 for RUNTIME s; rerun once if
    the host stole more than 5% of the CPUs, skipped if it did both times."""
    def observed():
        d = daemon_factory(["--observe", dev.name, "--json", "--interval", "1s"])
        assert d.ready(), d.stderr()
        run_job(dev, "w256", "randwrite", 256, 1)
        time.sleep(1.1)  # the last interval with writes in it ends
        d.stop()
        return json_lines(d.communicate())

    with fio.io_lock(), hoststeal.Monitor() as steal:
        return steal.calm_run(observed, f"W256 observed on {dev.name}", tries=2)[0]


def test_sampled_at_high_rates(daemon_factory, shm):
    """W256 on RAM completes 10^5 writes a second and more: after its first
    interval the observer times 1 in 2^k of them, at random
    (interval_sample_shift: at least 20,000 a second). Every completion is
    still counted, timed or unsampled. Which ones are timed is random, so
    the sample is unbiased by construction; what is checked of the timed
    ones' mean is Little's law: the requests in the block layer, IOPS x
    mean, are no more than the device's tags."""
    tags = int(open(f"{shm.sysfs}/queue/nr_requests").read())
    lines = sampled_run(daemon_factory, shm)
    ops = [o["ops"]["write"] for o in lines]
    ncpus = os.cpu_count()
    sampled = 0
    for prev, o in zip(ops, ops[1:]):
        k = sample_shift(prev["iops"])
        timed = o["total"]["count"]
        in_block_layer = o["iops"] * (o["total"]["mean_ns"] or 0) / 1e9
        print(f"write IOPS {o['iops']:.0f} after {prev['iops']:.0f}: 1 in {1 << k}, timed {timed}, "
              f"unsampled {o['unsampled']}, completed {o['completed']}; "
              f"in the block layer {in_block_layer:.1f} (<= {tags} tags)")
        # Each completion once: timed (stamped), untimed or unsampled; a
        # snapshot may fall between one program's counters on each CPU.
        assert abs(timed + o["untimed"] + o["unsampled"] - o["completed"]) <= 2 * ncpus, o
        # 1 in 2^k at random: a binomial count, within 5 standard
        # deviations, give or take what completed while the daemon set the
        # shift after its snapshot (2%) and one program's counters per CPU.
        n, p = o["completed"], 1 / (1 << k)
        sd = math.sqrt(n * p * (1 - p))
        assert abs(timed - n * p) <= 5 * sd + 0.02 * n + 2 * ncpus, (k, o)
        if k > 0 and timed >= TIMED_PER_SEC_MIN / 2:
            sampled += 1
            assert in_block_layer <= tags * 1.05, (in_block_layer, tags)
    assert sampled >= RUNTIME - 3, f"only {sampled} intervals sampled: {[o['iops'] for o in ops]}"
