# SPDX-License-Identifier: LGPL-2.1-or-later
"""Cgroups sharing a disk by weight (issue 15, kyber-tuned(8) WEIGHTS) on
the real kernel: flashsim `flash`, fio jobs in cgroups of the io
controller's hierarchy (cgroup v1's blkio here), kyber-tuned on a private
system bus setting their limits.

Judged on ratios measured in the same test: the weighted Jain index of the
tenants' throughput, and their total against scheduler none's without
weights just before, both over the seconds the host did not disturb
(hoststeal): flashsim runs over FUSE on the same 2 CPUs, so a second the
host took them cuts every tenant's rate (a CI run at 2.9% steal over the
whole run had the four's total at 16k a second late in the run against 25k
early, and judged work conservation at 78% on it). The three workloads of
the acceptance and BFQ beside kyber-tuned are a benchmark (make
bench-weights), not a test."""

import glob
import json
import os
import signal
import time

import pytest

from tests.integration.dbus_helpers import start_service, status_json, tunectl
from tests.lib import cgroups, fio, hoststeal
from tests.lib.daemon import wait_for

WEIGHTS = {"a": 1000, "b": 500, "c": 250, "d": 100}
QUEUE_DEPTH = 32
# The acceptance's bounds (issue 15). A Jain index over the mean rates of a
# run moves by a few thousandths with one disturbed second; the bounds
# leave the tuned runs 0.04 and 2-10% of margin on this machine (docs/
# BENCHMARKS.md, "Weights": 0.997-0.999, 92-100% of none).
JAIN_MIN = 0.95
THROUGHPUT_SHARE_MIN = 0.90
SETTLE_S = 3		# "after the first 3 s"
# The acceptance's 80% of its weighted share is judged by make bench-weights
# on the median of its rounds (84-93% on one host). One run here judges the
# same property with 5 points of room for this host's run-to-run spread: the
# reader alone is CPU-bound at ~100k reads a second.
READER_SHARE_MIN = 0.75
# Kyber-fairness' capacity probe finds the capacity the writes' first price
# underestimated in 5-7 periods (the reader at 63-68k/s from its 8th second
# in three runs): judged after 10 s, to the run's last second but one (a
# mean that took in a last second fio did not log counted it as 0: a CI
# run judged that way at 71% of the share had its reader at 72.9k/s, 94%
# of it, in the status at its end). The reader is CPU-bound and steady, so
# READER_CALM_S calm seconds give its rate on each side; the host's steal
# comes in episodes of 10-40 s, so the run alone is made again
# (READER_ALONE_TRIES at most) until it has that many, and the run beside
# the writer is judged over 19 s (over 9 s, needing 5 calm ones, it
# skipped the test in busy CI runs).
READER_ALONE_S = 8
READER_ALONE_TRIES = 3
READER_RUN_S = 30
READER_JUDGED_FROM_S = 10
READER_CALM_S = 5
# The host's steal comes in episodes of 10-40 s at 10-40% of the CPUs
# (tests/lib/hoststeal.py), and a second of it cuts every tenant's rate:
# each rate is judged on calm seconds only, a fixed number of them in a
# span long enough to outlast a short episode. Judged that way over 11 s
# (needing 6) and 8 s (needing 4), a CI run at 7.7% steal skipped both
# tests three times. Scheduler none's baseline is a run of its own, made
# again (NONE_TRIES at most) until NONE_CALM_S of its seconds are calm.
RUN_S = 25
RUN_CALM_S = 6
NONE_RUN_S = 8
NONE_CALM_S = 4
NONE_TRIES = 3
# test_work_conservation's phases: all four, then two, then four again.
FOUR_S = 18
TWO_S = 14
BACK_S = 12
PHASE_CALM_S = 4


def jain(x, w):
    """Weighted Jain fairness index (sum x_i/w_i)^2 / (n sum (x_i/w_i)^2)."""
    v = [xi / wi for xi, wi in zip(x, w)]
    return sum(v) ** 2 / (len(v) * sum(t * t for t in v)) if any(v) else 0.0


def per_second(prefix):
    """{second: I/Os} of a job's iops log (log_avg_msec=1000), both directions."""
    out = {}
    for path in glob.glob(f"{prefix}_iops.*.log"):
        with open(path) as f:
            for line in f:
                fields = [x.strip() for x in line.split(",")]
                if len(fields) >= 2:
                    s = round(int(fields[0]) / 1000)
                    out[s] = out.get(s, 0.0) + float(fields[1])
    return out


def mean_over(secs, first, last):
    return sum(secs.get(s, 0.0) for s in range(first, last + 1)) / (last - first + 1)


def calm_seconds(steal, start, first, last, what, min_kept=None):
    """The seconds first..last of a run that began at `start` (wall clock)
    the host did not disturb (skips the test when fewer than min_kept
    were, by default half of them). fio logs a run's last second for some
    jobs only, so `last` is at most the run's length - 1."""
    kept, _ = steal.clean(start, [(s * 1000, None) for s in range(first, last + 1)], what, min_kept=min_kept)
    return [ms // 1000 for ms, _ in kept]


def undisturbed(secs, steal, start, first, last, what, min_kept=None):
    """{second: I/Os} of one job's seconds first..last, those the host
    disturbed left out (see calm_seconds)."""
    return {s: secs.get(s, 0.0) for s in calm_seconds(steal, start, first, last, what, min_kept)}


def calm_runs(steal, tmp, run, length_s, needed, tries, what):
    """Makes a run of length_s seconds again until `needed` of the runs'
    seconds were calm, `tries` runs at most (then skips the test): a
    baseline for a later run is only worth comparing when calm, and the
    host's steal comes in episodes that a run of a few seconds may fall
    wholly inside. run(out) runs fio with its logs in a new directory
    `out` under tmp and returns {job: {second: I/Os}}. Returns {job: [I/Os
    of each calm second]}, the same seconds for every job."""
    kept = {}
    for attempt in range(1, tries + 1):
        out = f"{tmp}/{what.replace(' ', '_')}{attempt}"
        os.makedirs(out)
        t0 = time.time()
        secs = run(out)
        # fio logs a run's last second for some jobs only.
        calm = sorted(steal.calm_windows(t0, [s * 1000 for s in range(1, length_s)]))
        for name, v in secs.items():
            kept.setdefault(name, []).extend(v.get(ms // 1000, 0.0) for ms in calm)
        got = min(len(v) for v in kept.values())
        print(f"{what}, run {attempt}: {len(calm)} calm seconds of {length_s - 1}")
        if got >= needed:
            return kept
    hoststeal.skip(f"the host stole more than {hoststeal.DISTURBED_SHARE:.0%} of the CPUs in all but "
                   f"{got} of the seconds of {tries} runs ({what}), where {needed} are needed")


def reader_run(t, flash, out):
    """test_reader_beside_writer's reader alone."""
    fio.run(flash.path, [job(t, "r", "randread", out)], runtime_s=READER_ALONE_S, ramp_s=0)
    return {"r": per_second(f"{out}/r")}


def none_run(t, flash, out):
    """The four tenants without weights under scheduler none."""
    fio.run(flash.path, [job(t, n, "randrw", out) for n in WEIGHTS], runtime_s=NONE_RUN_S, ramp_s=0)
    return {n: per_second(f"{out}/{n}") for n in WEIGHTS}


def calm_means(secs, steal, start, first, last, what, min_kept):
    """Each tenant's mean rate over the seconds first..last, those the host
    disturbed left out (the same seconds for every tenant: they share the
    machine; see calm_seconds)."""
    calm = calm_seconds(steal, start, first, last, what, min_kept)
    return {n: sum(v.get(s, 0.0) for s in calm) / len(calm) for n, v in secs.items()}


def job(t, name, rw, tmp=None, extra=None):
    opts = dict(t.fio_options(name))
    if rw == "randrw":
        opts["rwmixread"] = 50
    if tmp:
        opts.update({"write_iops_log": f"{tmp}/{name}", "log_avg_msec": 1000})
    opts.update(extra or {})
    return fio.Job(name, rw, iodepth=QUEUE_DEPTH, extra=opts)


def status_json_lines(text):
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def disk_of(dev):
    st = os.stat(dev.path)
    return os.major(st.st_rdev), os.minor(st.st_rdev)


@pytest.fixture
def flash(device_factory):
    return device_factory("flashsim", profile="flash")


@pytest.fixture
def tenants(flash):
    try:
        with cgroups.tenants(list(WEIGHTS), disk=disk_of(flash)) as t:
            yield t
    except cgroups.DeviceUnavailable as e:
        pytest.skip(str(e))


def set_weights(bus, dev, t, weights):
    for name, w in weights.items():
        res = tunectl(bus, "set-weight", dev.name, t.rel(name), str(w))
        assert res.returncode == 0, res.stderr


def test_shares_follow_weights(bus, flash, tenants, daemon_factory, tmp_path):
    """Four tenants at iodepth 32, 50/50 random reads and writes, weights
    1000:500:250:100: throughput by weight (Jain >= 0.95 after 3 s) and
    >= 90% of scheduler none's without weights; the figures weights shows
    are the ones fio saw; the limits go back when the daemon stops."""
    t = tenants
    with hoststeal.Monitor() as steal:
        none = {n: sum(v) / len(v) for n, v in
                calm_runs(steal, tmp_path, lambda out: none_run(t, flash, out), NONE_RUN_S,
                          NONE_CALM_S, NONE_TRIES, "none").items()}
        d = start_service(daemon_factory, bus, str(tmp_path), interval="1s")
        set_weights(bus, flash, t, WEIGHTS)
        t0 = time.time()
        fio.run(flash.path, [job(t, n, "randrw", str(tmp_path)) for n in WEIGHTS], runtime_s=RUN_S, ramp_s=0)
    res = tunectl(bus, "--json", "weights", flash.name)
    assert res.returncode == 0, res.stderr
    print(tunectl(bus, "weights", flash.name).stdout)
    weighted = calm_means({n: per_second(f"{tmp_path}/{n}") for n in WEIGHTS}, steal, t0,
                          SETTLE_S + 1, RUN_S - 1, "weighted", RUN_CALM_S)
    late = [weighted[n] for n in WEIGHTS]
    none_total = sum(none.values())
    index = jain(late, list(WEIGHTS.values()))
    print(f"none {none_total:.0f} I/Os a second, Jain {jain([none[n] for n in WEIGHTS], list(WEIGHTS.values())):.3f}; "
          f"weighted {[round(x) for x in late]} = {sum(late):.0f}, Jain {index:.3f}")
    assert index >= JAIN_MIN, late
    assert sum(late) >= THROUGHPUT_SHARE_MIN * none_total, (late, none_total)
    rows = {r["cgroup"]: r for r in status_json_lines(res.stdout)[0]["cgroups"]}
    for n, w in WEIGHTS.items():
        r = rows[t.rel(n)]
        assert r["weight"] == w and r["weight_set"], r
        assert r["limit"]["read_iops"] > 0 and r["limit"]["write_iops"] > 0, r
        assert t.limits(n, *disk_of(flash))["read_iops"] == r["limit"]["read_iops"], r
    assert d.stop(signal.SIGTERM) == 0, d.stderr()
    for n in WEIGHTS:
        assert t.limits(n, *disk_of(flash)) == dict.fromkeys(cgroups.V1_FILES, 0), n
    assert flash.scheduler() == "none"


def test_work_conservation(bus, flash, tenants, daemon_factory, tmp_path):
    """Two of the four stop for TWO_S: the two left take the device within
    3 s (>= 90% of what the four did); they come back: the shares are by
    weight again within 3 s."""
    t = tenants
    d = start_service(daemon_factory, bus, str(tmp_path), interval="1s")
    set_weights(bus, flash, t, WEIGHTS)
    total_s = FOUR_S + TWO_S + BACK_S
    stay = {"runtime": f"{total_s}s"}
    gone = {"runtime": f"{FOUR_S}s"}
    back = {"startdelay": f"{FOUR_S + TWO_S}s", "runtime": f"{BACK_S}s"}
    os.makedirs(f"{tmp_path}/back")
    jobs = [job(t, "a", "randrw", str(tmp_path), stay), job(t, "b", "randrw", str(tmp_path), stay),
            job(t, "c", "randrw", str(tmp_path), gone), job(t, "d", "randrw", str(tmp_path), gone),
            job(t, "c", "randrw", f"{tmp_path}/back", back), job(t, "d", "randrw", f"{tmp_path}/back", back)]
    for j in jobs[4:]:
        j.name = f"{j.name}2"
    with hoststeal.Monitor() as steal:
        t0 = time.time()
        fio.run(flash.path, jobs, runtime_s=total_s, ramp_s=0)
    secs = {n: per_second(f"{tmp_path}/{n}") for n in WEIGHTS}
    for n in ("c", "d"):
        for s, v in per_second(f"{tmp_path}/back/{n}").items():
            secs[n][s + FOUR_S + TWO_S] = secs[n].get(s + FOUR_S + TWO_S, 0.0) + v
    for s in range(1, total_s + 1):
        print(s, [round(secs[n].get(s, 0)) for n in WEIGHTS])
    before = sum(calm_means(secs, steal, t0, SETTLE_S + 1, FOUR_S - 1, "four", PHASE_CALM_S).values())
    left = calm_means({n: secs[n] for n in ("a", "b")}, steal, t0, FOUR_S + SETTLE_S + 1,
                      FOUR_S + TWO_S - 1, "two", PHASE_CALM_S)
    two = sum(left.values())
    # Shares within the same seconds: a second the host took cuts them all.
    after = [mean_over(secs[n], FOUR_S + TWO_S + SETTLE_S + 1, total_s - 1) for n in WEIGHTS]
    print(f"four {before:.0f}; two, from 3 s after the others stopped: {two:.0f}; back, from 3 s on: "
          f"{[round(x) for x in after]}, Jain {jain(after, list(WEIGHTS.values())):.3f}")
    assert two >= 0.9 * before, (two, before)
    assert jain(after, list(WEIGHTS.values())) >= JAIN_MIN, after
    assert d.stop(signal.SIGTERM) == 0, d.stderr()


def test_reader_beside_writer(bus, flash, daemon_factory, tmp_path):
    """A reader with weight 1000 beside a writer with weight 100: a write
    costs its service time in reads, so the reader keeps most of its
    weighted share of what it does alone (READER_SHARE_MIN). The reader
    is CPU-bound: seconds in which the host took the CPUs (hoststeal)
    measure the host, and are left out on both sides."""
    with cgroups.tenants(["r", "w"], disk=disk_of(flash)) as t, hoststeal.Monitor() as steal:
        alone_secs = calm_runs(steal, tmp_path, lambda out: reader_run(t, flash, out), READER_ALONE_S,
                               READER_CALM_S, READER_ALONE_TRIES, "reader alone")["r"]
        d = start_service(daemon_factory, bus, str(tmp_path), interval="1s", extra=("--log-level=debug",))
        set_weights(bus, flash, t, {"r": 1000, "w": 100})
        t0 = time.time()
        fio.run(flash.path, [job(t, "r", "randread", str(tmp_path)), job(t, "w", "randwrite", str(tmp_path))],
                runtime_s=READER_RUN_S, ramp_s=0)
        print(tunectl(bus, "weights", flash.name).stdout)
        reads, writes = per_second(f"{tmp_path}/r"), per_second(f"{tmp_path}/w")
        for s in range(1, READER_RUN_S + 1):
            print(f"  {s:2d}s reader {reads.get(s, 0):8.0f}/s writer {writes.get(s, 0):6.0f}/s")
        late_secs = undisturbed(reads, steal, t0, READER_JUDGED_FROM_S + 1, READER_RUN_S - 1,
                                "beside the writer", READER_CALM_S)
        alone = sum(alone_secs) / len(alone_secs)
        late = sum(late_secs.values()) / len(late_secs)
        share = 1000 / 1100 * alone
        print(f"reader alone {alone:.0f}/s; beside the writer from {READER_JUDGED_FROM_S} s {late:.0f}/s = "
              f"{late / share:.0%} of its weighted share")
        assert d.stop(signal.SIGTERM) == 0, d.stderr()
        # The policy's periods (capacity, write cost, who wants more).
        print("\n".join(line for line in d.stderr().splitlines() if "sharing" in line or "allocation" in line))
        assert late >= READER_SHARE_MIN * share, (late, share)


def test_limits_back_after_exit_and_kill(bus, flash, tenants, daemon_factory, tmp_path):
    """A cgroup's own limit is kyber-tuned's original: back at exit, and
    after a SIGKILL at the next start."""
    t = tenants
    disk = disk_of(flash)
    own = 90000
    t.set_limit("a", *disk, "read_iops", own)
    runtime = f"{tmp_path}/run"

    def limited():
        return t.limits("a", *disk)["write_iops"] > 0 and t.limits("b", *disk)["read_iops"] > 0

    for sig in (signal.SIGTERM, signal.SIGKILL):
        d = start_service(daemon_factory, bus, str(tmp_path), interval="500ms")
        set_weights(bus, flash, t, {"a": 1000, "b": 100})
        jobs = [job(t, n, "randrw", extra={"runtime": "6s"}) for n in ("a", "b")]
        fio.run(flash.path, jobs, runtime_s=6, ramp_s=0)
        assert limited(), (t.limits("a", *disk), t.limits("b", *disk), d.stderr())
        assert t.limits("a", *disk)["read_iops"] <= own
        d.stop(sig)
        if sig == signal.SIGKILL:
            assert limited()	# nobody put them back
            d = start_service(daemon_factory, bus, str(tmp_path), interval="500ms")
            wait_for(lambda: not limited(), what="the limits a killed instance left put back")
            assert "left by a previous instance" in d.stderr(), d.stderr()
            assert d.stop(signal.SIGTERM) == 0
        assert t.limits("a", *disk) == {**dict.fromkeys(cgroups.V1_FILES, 0), "read_iops": own}
        assert t.limits("b", *disk) == dict.fromkeys(cgroups.V1_FILES, 0)
        assert os.path.exists(f"{runtime}/originals.pb")


def test_weight_requests(bus, flash, tenants, daemon_factory, tmp_path):
    """What set-weight, clear-weight and weights answer: bad input named,
    nothing changed by a refused request; a disk without a goal is tuned
    for its weights alone and stops with its last weight; run-time weights
    survive a restart."""
    t = tenants
    d = start_service(daemon_factory, bus, str(tmp_path))
    a = t.rel("a")
    cases = [
        (("set-weight", flash.name, a, "0"), 2, "Invalid weight '0'"),
        (("set-weight", flash.name, a, "10001"), 2, "Invalid weight '10001'"),
        (("set-weight", flash.name, a, "ten"), 2, "Invalid weight 'ten'"),
        (("set-weight", flash.name, "../x", "100"), 1, "\".\" and \"..\" are not cgroups"),
        (("set-weight", flash.name, "/", "100"), 1, "the hierarchy's root has no limits of its own"),
        (("set-weight", flash.name, "kt-no-such-cgroup", "100"), 1, "No cgroup kt-no-such-cgroup in"),
        (("set-weight", "nosuchdisk0", a, "100"), 1, "nosuchdisk0"),
        (("clear-weight", flash.name, a), 1, "is not tuned"),
        (("weights", flash.name), 1, flash.name),
    ]
    for args, code, text in cases:
        res = tunectl(bus, *args)
        assert res.returncode == code and text in res.stderr, (args, res)
    assert tunectl(bus, "list").stdout.count(flash.name) == 0

    assert tunectl(bus, "set-weight", flash.name, a, "300").returncode == 0
    st = status_json(bus, flash.name)
    assert st["goal"] == "" and st["scheduler"] == "none", st
    assert "tuned for its cgroups' weights" in tunectl(bus, "status", flash.name).stdout
    res = tunectl(bus, "clear-weight", flash.name, t.rel("b"))
    assert res.returncode == 1 and f"Cgroup {t.rel('b')} has no weight on {flash.name}" in res.stderr, res
    res = tunectl(bus, "--json", "weights", flash.name)
    assert status_json_lines(res.stdout)[0]["cgroups"] == [{
        "cgroup": a, "weight": 300, "weight_set": True, "share": 0, "read_iops": 0, "write_iops": 0,
        "read_bytes_per_sec": 0, "write_bytes_per_sec": 0, "read_p99_ns": None, "write_p99_ns": None,
        "limit": {"read_iops": 0, "write_iops": 0, "read_bytes_per_sec": 0, "write_bytes_per_sec": 0}}]

    # A goal on top, then cleared: the weight stays, and so does the device.
    assert tunectl(bus, "set-goal", flash.name, "read-p99=5ms").returncode == 0
    assert status_json(bus, flash.name)["goal"].startswith("read-p99=5ms")
    assert tunectl(bus, "clear-goal", flash.name).returncode == 0
    assert status_json(bus, flash.name)["goal"] == ""

    # Kept across a restart; a weight set and cleared is not.
    assert tunectl(bus, "set-weight", flash.name, t.rel("b"), "50").returncode == 0
    assert tunectl(bus, "clear-weight", flash.name, t.rel("b")).returncode == 0
    assert d.stop(signal.SIGTERM) == 0, d.stderr()
    d = start_service(daemon_factory, bus, str(tmp_path))
    res = tunectl(bus, "--json", "weights", flash.name)
    assert res.returncode == 0, (res.stderr, d.stderr())
    assert [(r["cgroup"], r["weight"]) for r in status_json_lines(res.stdout)[0]["cgroups"]] == [(a, 300)]
    # The last weight of a disk tuned for its weights alone: tuning stops.
    assert tunectl(bus, "clear-weight", flash.name, a).returncode == 0
    assert flash.name not in tunectl(bus, "list").stdout
    assert flash.scheduler() == "none"
