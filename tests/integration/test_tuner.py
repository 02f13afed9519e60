# SPDX-License-Identifier: LGPL-2.1-or-later
"""The tuner on the real kernel and the flash-model device (issue 3).

Read latency is judged by fio's own per-second histograms of the reader
(write_hist_log), independent of kyber-tuned's observer, wherever fio's
span is close to the goal's (one read in flight); decisions and states
come from the tuner's --json lines. Ratios are measured in the same
test run, never against remembered numbers.

flashsim runs in this VM's CPUs: seconds in which the host stole more than
5% of them (tests/lib/hoststeal.py) measure the host, not the tuner, and
are left out of the per-window judgements (each test prints how many); a
test skips when too few of its windows are left (half, unless it says),
and tests/conftest.py runs it again before the skip stands.
test_goal_met_and_writes_kept leaves out the RECOVERY_S after each such
second too where it judges the writes and the target changes
(hoststeal.Monitor.clean's recovery_s).
"""

import glob
import os
import signal
import tempfile
import threading
import time

import pytest

from tests.lib import fio, hoststeal
from tests.lib.daemon import json_lines
from tests.lib.tuner_trace import return_steps

GOAL_NS = 2_000_000
GOAL = "read-p99=2ms"
# Steady state: target changes in the calm seconds (below) of the minute
# after STEADY_FROM_S, per calm minute. The controller's bound is 6 a
# minute (pulses included): a change is a plain sysfs store, but the Kyber
# window after it mixes old and new buckets and the tuner discards the
# next 300 ms of data. That bound is judged where it
# is deterministic, on every cell of the simulator matrix (make
# tuner-matrix). Here the bound is twice that: flashsim serves I/O from this
# VM's CPUs, and host hiccups the steal counter does not show (write P99
# jumping from 13-17 ms to 26-43 ms for a second) are real misses the tuner
# must answer, a cut and a later return, two changes each. A controller
# that oscillates (a change every few intervals, 20-30 a minute) still
# fails it.
STEADY_CHANGES_PER_MIN = 12
STEADY_FROM_S = 15
STEADY_S = 60
GOAL_RUN_S = STEADY_FROM_S + STEADY_S
# The seconds a disturbance and the RECOVERY_S after it are not judged
# for the writes and the target changes: the tuner cuts while the host
# holds the machine (reads need it then) and returns step by step once it
# has passed, each step a target change (one CI run: 12 s of 8-23% steal,
# then changes 1, 4 and 7 s after). 10 s is the bound for writes
# to be back after a disturbance, judged in the simulator. The reads are
# judged in every calm second after convergence, the return included: a
# return that misses the goal is the tuner's. On these VMs the host's
# steal comes in episodes of 10-40 s (tests/lib/hoststeal.py), so a run
# keeps at least MIN_READ_WINDOWS, MIN_WRITE_WINDOWS and MIN_STEADY_WINDOWS
# calm seconds for the three judgements (a share over fewer moves in steps
# of 5% or more), or it is made again (tests/conftest.py, HOST_RERUNS).
RECOVERY_S = 10
MIN_READ_WINDOWS = 20
MIN_WRITE_WINDOWS = 10
MIN_STEADY_WINDOWS = 20
# Properties with margin on this noisy host (the quantitative bounds are
# the simulator's and the benchmarks'): the goal is first met within
# CONVERGE_S (the simulator's bound is 5 s; Kyber evaluates slow reads
# about once a second, and the host delays flashsim's replies); met in
# MET_SHARE of the calm windows after that (the simulator's bound
# is 95%; here flashsim's write latency jumps now and then from 13 to
# 27-34 ms for a second, unseen by the steal counter, Kyber grows the
# writes past the level, and reads miss for 2-4 s until the tuner has cut
# them back: 85-100% of the windows were met in the runs measured, so 75%
# keeps a margin and still fails a tuner that leaves reads over the goal);
# with writes at WRITES_KEPT_SHARE of scheduler none's or more, the median
# of the calm seconds after 10 s (the best static setting keeps
# 85-100% of them on this profile; the untuned tuner this replaced kept
# 10-40% on other devices). The tuner answers the host's misses: it cuts
# writes and counts the miss against their level, so under host steal it
# keeps fewer. Measured here: 98% of none's in a quiet run, 58% in one with
# steal in 20 of its 74 seconds. The bound keeps a margin below that and
# stays above what the untuned tuner kept.
CONVERGE_S = 8
MET_SHARE = 0.75
WRITES_KEPT_SHARE = 0.5


def print_trace(lines):
    """The tuner's view per interval (shown by pytest when a test fails)."""
    t0 = lines[0]["time_ns"] if lines else 0
    for l in lines:
        t, o = l["tuner"], l["ops"]
        w_p99 = (o['write']['total']['p99_ns'] or 0) / 1e3
        r_p99 = (o['read']['total']['p99_ns'] or 0) / 1e3
        print(f"  {(l['time_ns'] - t0) / 1e9:5.1f}s {t['state']:10} depth w={l['kyber_depth']['write']} "
              f"write {o['write']['iops']:7.0f} IOPS P99 {w_p99:6.0f}us read P99 {r_p99:6.0f}us "
              f"targets {l['read_target_ns']}/{l['write_target_ns']}{' *' if t['changed'] else ''} {t['reason']}")


def start_tuner(daemon_factory, dev, goal, *extra):
    """The law on Kyber: scheduler=kyber unless the goal says otherwise
    (when to run Kyber at all is test_sched_choice.py's)."""
    if "scheduler=" not in goal:
        goal += " scheduler=kyber"
    d = daemon_factory(["--foreground", "--goal", f"{dev.name}:{goal}", "--json",
                        "--interval", "1s", *extra])
    assert d.ready(), d.stderr()
    return d


def stop_tuner(d):
    rc = d.stop(signal.SIGTERM)
    out = d.communicate()
    assert rc == 0, d.stderr()
    lines = json_lines(out)
    print_trace(lines)
    return lines


def static_run(dev, read_ns, write_ns, runtime=5, ramp=5, steal=None, tries=2):
    """R1+W256 under fixed targets, in steady state: Kyber's depths depend
    on their history, so the first seconds after a switch are skipped.
    With a hoststeal.Monitor, a run the host disturbed is repeated (at
    most `tries` runs; the least disturbed counts). Returns (read P99,
    write IOPS)."""
    def once():
        dev.set_scheduler("none")  # fresh depths, whatever ran before
        if read_ns is not None:
            dev.set_scheduler("kyber")
            dev.set_kyber_targets(read_ns, write_ns)
        res = fio.run(dev.path, fio.pair(), runtime_s=runtime, ramp_s=ramp)
        return res["r"].read_clat_ns[99.0], res["w"].write_iops

    if steal is None:
        return once()
    setting = "none" if read_ns is None else f"kyber {read_ns}/{write_ns}"
    return steal.calm_run(once, f"R1+W256 under {setting}", tries, or_skip=False)[0]


def fio_log_values(prefix, kind):
    """[(end_ms, value)] of a fio per-interval log (write_iops_log=PREFIX:
    kind 'iops')."""
    out = []
    for path in sorted(glob.glob(f"{prefix}_{kind}.*.log")):
        with open(path) as f:
            for line in f:
                fields = [x.strip() for x in line.split(",")]
                if len(fields) >= 2:
                    out.append((int(fields[0]), float(fields[1])))
    return sorted(out)


@pytest.fixture
def flash(device_factory):
    return device_factory("flashsim", profile="flash")


def test_goal_met_and_writes_kept(daemon_factory, flash):
    """R1+W256, goal read-p99=2ms: met within CONVERGE_S and in most of the
    undisturbed 1-s windows over GOAL_RUN_S, writes kept at a large share of
    scheduler none's (measured just before, same device), and at most
    STEADY_CHANGES_PER_MIN target changes a minute once converged.
    Properties with margin: how close the tuner comes to the best static
    setting is judged in the simulator (make tuner-matrix, every device
    model) and on this kernel by the benchmark (make bench-generalize)."""
    with tempfile.TemporaryDirectory() as tmp, fio.io_lock(), hoststeal.Monitor() as steal:
        none_w = static_run(flash, None, None, steal=steal)[1]
        d = start_tuner(daemon_factory, flash, GOAL)
        t0 = time.monotonic()
        start = time.time()
        w_extra = {"write_iops_log": f"{tmp}/w", "log_avg_msec": 1000}
        res = fio.run(flash.path, fio.pair(read_extra=fio.hist_log(f"{tmp}/r"), write_extra=w_extra),
                      runtime_s=GOAL_RUN_S, ramp_s=0)
        lines = stop_tuner(d)
        windows = fio.window_p99(f"{tmp}/r")
        w_log = fio_log_values(f"{tmp}/w", "iops")  # tmp is gone after this block
    first_ok = next((ms for ms, p in windows if p <= GOAL_NS), None)
    out = steal.disturbed_windows(start, [ms for ms, _ in windows])
    late, _ = steal.clean(start, [(ms, p) for ms, p in windows if ms > CONVERGE_S * 1000 + 100],
                          "reads after convergence", min_kept=MIN_READ_WINDOWS)
    met = sum(p <= GOAL_NS for _, p in late) / len(late)
    assert len(w_log) >= 50, w_log
    w_late, _ = steal.clean(start, [(ms, v) for ms, v in w_log if ms > 10000],
                            "writes after 10 s", RECOVERY_S, MIN_WRITE_WINDOWS)
    tuned_write = sorted(v for _, v in w_late)[len(w_late) // 2]
    steady_windows, _ = steal.clean(start, [(ms, p) for ms, p in windows if ms > STEADY_FROM_S * 1000],
                                    "steady state", RECOVERY_S, MIN_STEADY_WINDOWS)
    print(f"first window meeting the goal ends at {first_ok} ms; met in {met:.0%} of "
          f"{len(late)} calm windows after {CONVERGE_S} s; read P99 overall "
          f"{res['r'].read_clat_ns[99.0] / 1e3:.0f} us")
    print(f"tuned write IOPS {tuned_write:.0f} (median of {len(w_late)} calm seconds after "
          f"10 s; whole run {res['w'].write_iops:.0f}); scheduler none {none_w:.0f}")
    # Within CONVERGE_S, unless the host held the machine in the seconds before.
    assert first_ok is not None, windows[:8]
    assert first_ok <= CONVERGE_S * 1000 + 100 or \
        any(ms in out for ms, _ in windows if ms <= first_ok), windows[:8]
    calm = {ms for ms, _ in late}
    assert met >= MET_SHARE, [(ms, round(p / 1e3), ms in calm) for ms, p in windows]
    assert tuned_write >= WRITES_KEPT_SHARE * none_w, (tuned_write, none_w)

    # Steady state: the changes in the calm seconds after STEADY_FROM_S,
    # per calm minute, but for the returns from a disturbance.
    changes = [l for l in lines if l["tuner"]["changed"]]
    steady = [ms for ms, _ in steady_windows]

    def at(l):
        return l["time_ns"] / 1e6 - start * 1000

    returning = return_steps(lines, at, out)
    calm_changes = [l for l in changes if any(e - 1000 < at(l) <= e for e in steady)]
    late_changes = [l for l in calm_changes if id(l) not in returning]
    per_min = len(late_changes) * 60 / len(steady)
    print(f"target changes: {len(changes)} in all, {len(calm_changes)} in the {len(steady)} calm seconds "
          f"after {STEADY_FROM_S} s, {len(calm_changes) - len(late_changes)} of them returns from a "
          f"disturbance ({per_min:.1f}/min without those; bound {STEADY_CHANGES_PER_MIN})")
    assert per_min <= STEADY_CHANGES_PER_MIN, [
        (round(at(l) / 1e3), l["tuner"]["reason"]) for l in late_changes]
    assert all(l["tuner"]["reason"] for l in changes)
    assert time.monotonic() - t0 < 300


# test_shifts: each phase lasts SHIFT_PHASE_S and is judged after its first
# SHIFT_RECOVER_S undisturbed seconds, on the undisturbed windows after those,
# and only when there are at least SHIFT_JUDGED_MIN of them. A share of goal
# met moves in steps of 1/n: over 5 windows two misses fail a tuner that
# meets the goal everywhere else (a CI run: 2.1-2.8 ms in three, 3.09 ms in
# one, and 5.1 ms in the second before the daemon logged 9% host steal),
# over 8 they leave it at 75%. A 20-s phase has 15 windows after the first
# 5 when the host leaves it alone.
SHIFT_PHASE_S = 20
SHIFT_RECOVER_S = 5
SHIFT_JUDGED_MIN = 8


def daemon_read_windows(lines, start):
    """[(end in ms after `start`, read P99 ns)] of the daemon's intervals
    that completed reads, on the span the goal is judged on: the app span,
    from the read's start to when the task waiting for it runs."""
    return [(round((l["time_ns"] / 1e9 - start) * 1000), l["ops"]["read"]["app"]["p99_ns"])
            for l in lines if l["ops"]["read"]["app"]["p99_ns"]]


def test_shifts(daemon_factory, flash):
    """W256 stops and starts again, then R1 becomes R64: the goal is met
    again within SHIFT_RECOVER_S undisturbed seconds of each change and in
    most windows after that, and the log says why targets moved. The goal is 3 ms: with 64
    reads queued on 8 dies, reads alone take about 2 ms at P99 on this
    device, so 2 ms is out of reach in the last phase.

    Every phase is judged by the daemon's intervals, on the span the goal
    is judged on (the app span: from the read's start to when the task
    waiting for it runs); fio's windows are printed beside them. fio's
    latency also counts the wait until fio reaps a completion on CPUs it
    shares with flashsim and the loop worker, outside the block layer and
    outside what Kyber's targets move: with 64 reads in
    flight, fio's P99 was 0.1-0.4 ms above the daemon's in quiet runs and
    0.4-0.9 ms (2.6-3.5 ms against the daemon's 2.2-2.7) in one with host
    steal; with R1, a fresh-clone CI run at 1.4% steal failed the W256
    restart on fio's 3.0-3.4 ms while the daemon's intervals were at
    2.57-2.88 ms. A tuner that uses the goal's slack holds reads at 75-90%
    of it, inside that gap. That the daemon's P99 is fio's is
    test_observer's to judge. With the writes let go beside R64, the
    daemon's view is 20-23 ms (one CI run)."""
    goal_ns = 3_000_000
    ph, ph_ms = SHIFT_PHASE_S, SHIFT_PHASE_S * 1000
    w_a = {"runtime": f"{ph}s"}
    w_b = {"startdelay": f"{2 * ph}s", "runtime": f"{2 * ph}s"}
    with tempfile.TemporaryDirectory() as tmp, fio.io_lock(), hoststeal.Monitor() as steal:
        d = start_tuner(daemon_factory, flash, "read-p99=3ms")
        start = time.time()
        js = [fio.randread("r1", 1, extra={"runtime": f"{3 * ph}s", **fio.hist_log(f"{tmp}/r1")}),
              fio.randread("r64", 64, extra={"startdelay": f"{3 * ph}s", "runtime": f"{ph}s",
                                             **fio.hist_log(f"{tmp}/r64")}),
              fio.randwrite("wa", 256, extra=w_a),
              fio.randwrite("wb", 256, extra=w_b)]
        fio.run(flash.path, js, runtime_s=4 * ph, ramp_s=0)
        lines = stop_tuner(d)
        r1_fio = fio.window_p99(f"{tmp}/r1")
        # r64's windows count from its own start (startdelay excluded).
        r64_fio = [(ms + 3 * ph_ms, p) for ms, p in fio.window_p99(f"{tmp}/r64")]
    # Only intervals wholly within the run (start_tuner's intervals are 1 s).
    windows = [(ms, p) for ms, p in daemon_read_windows(lines, start) if ms <= 4 * ph_ms]
    clean, bad = steal.clean(start, windows, "shifts", min_kept=0)  # judged per phase below
    for ms, p in windows:
        print(f"  t={ms / 1e3:4.0f}s read P99 {p / 1e3:7.0f} us{' (disturbed)' if ms in bad else ''}")
    print("  by fio (not judged): " + ", ".join(
        f"{ms / 1e3:.0f}s {p / 1e3:.0f} us" for ms, p in r1_fio + r64_fio))
    judged = 0
    for i, what in enumerate(("start", "W256 stops", "W256 starts", "R1 -> R64")):
        change, end = i * ph_ms, (i + 1) * ph_ms
        # Intervals wholly after the change. The time to recover counts
        # undisturbed seconds: the first SHIFT_RECOVER_S of them, however
        # many the host took in between (a CI run: 7 disturbed seconds
        # 3-9 s into the run, the goal met in the first calm one after).
        phase = [p for ms, p in clean if change + 1000 <= ms <= end]
        recovery, after = phase[:SHIFT_RECOVER_S], phase[SHIFT_RECOVER_S:]
        if len(after) < SHIFT_JUDGED_MIN:
            print(f"{what}: not judged, only {len(after)} undisturbed windows after "
                  f"the first {SHIFT_RECOVER_S}")
            continue
        judged += 1
        ok = sum(p <= goal_ns for p in after) / len(after)
        recovered = any(p <= goal_ns for p in recovery)
        print(f"{what}: met within {SHIFT_RECOVER_S} undisturbed s: {recovered}; after that: "
              f"{ok:.0%} of {len(after)} undisturbed windows")
        assert recovered, what
        assert ok >= 0.75, what
    if judged < 3:
        hoststeal.skip(f"only {judged} of 4 phases had {SHIFT_JUDGED_MIN} windows undisturbed "
                       "by host CPU steal")
    reasons = " | ".join(l["tuner"]["reason"] for l in lines if l["tuner"]["changed"])
    assert "writes started" in reasons or "protecting" in reasons, reasons
    assert all(l["tuner"]["reason"] for l in lines if l["tuner"]["changed"])


def test_r1_w1_never_writes(daemon_factory, flash):
    """R1+W1 (G-1): Kyber cannot act with one request per op; the tuner
    holds and never writes a target, even with a goal it misses."""
    flash.set_scheduler("kyber")
    before = flash.kyber_targets()
    d = start_tuner(daemon_factory, flash, "read-p99=150us")
    with fio.io_lock():
        fio.run(flash.path, fio.pair(write_qd=1), runtime_s=12, ramp_s=0)
    after = flash.kyber_targets()
    lines = stop_tuner(d)
    states = [l["tuner"]["state"] for l in lines]
    print(states, lines[-1]["tuner"]["reason"])
    assert after == before
    assert not any(l["tuner"]["changed"] for l in lines)
    assert states.count("holding") >= len(states) // 2
    assert "G-1" in " ".join(l["tuner"]["reason"] for l in lines)


def test_optane_no_throttling_cost(daemon_factory, device_factory):
    """No read/write interference (optane) and a goal met without
    throttling: write IOPS within 5% of scheduler none (interleaved pairs).
    A pair in which the host stole more than 5% of the CPUs measures the
    host; it is left out and another is run (at most 4 pairs for 2 clean
    ones; skipped if none was clean)."""
    dev = device_factory("flashsim", profile="optane")
    none, tuned, shares = [], [], []
    with fio.io_lock(), hoststeal.Monitor() as steal:
        for _ in range(4):
            t0 = time.time()
            dev.set_scheduler("none")
            w_none = fio.run(dev.path, fio.pair(), runtime_s=6, ramp_s=1)["w"].write_iops
            d = start_tuner(daemon_factory, dev, "read-p99=5ms")
            w_tuned = fio.run(dev.path, fio.pair(), runtime_s=6, ramp_s=1)["w"].write_iops
            lines = stop_tuner(d)
            assert not any(l["tuner"]["state"] == "infeasible" for l in lines)
            shares.append(steal.share(t0, time.time()))
            if shares[-1] <= hoststeal.DISTURBED_SHARE:
                none.append(w_none)
                tuned.append(w_tuned)
            if len(none) == 2:
                break
    print(f"\nwrite IOPS none {none} tuned {tuned}; host steal per pair "
          f"{[f'{x:.1%}' for x in shares]}")
    if not none:
        hoststeal.skip(f"the host stole more than {hoststeal.DISTURBED_SHARE:.0%} of the CPUs in "
                       f"each of {len(shares)} pairs: the model's timing does not hold")
    none_m, tuned_m = sorted(none)[len(none) // 2], sorted(tuned)[len(tuned) // 2]
    assert tuned_m >= 0.95 * none_m, (none, tuned)


# test_infeasible_goal: the static setting and the tuned run are two runs
# made a few seconds apart on flashsim, served from this VM's CPUs, so
# their reads are compared on the median of their per-second P99s over the
# seconds the host did not disturb (a whole run's P99 is its worst seconds':
# one CI run's tuned reads were at 979 us against the static run's 635 us,
# at write depth 1 all along, with 14-28% steal in a few of its seconds).
# Judged after INFEASIBLE_SETTLE_S: Kyber's write depth walks down to 1 in
# the first seconds of either run. The tolerance covers that median's
# spread between such runs (static 643 and 659 us, tuned 659 and 692 us
# in the runs measured, up to 8% apart); a tuner that does not throttle
# leaves the reads at none's P99, 10-20x the static setting's.
INFEASIBLE_SETTLE_S = 5
INFEASIBLE_RUN_S = 14
INFEASIBLE_P99_TOLERANCE = 1.25
# Runs the host took the CPUs from in more than half of their judged
# seconds are made again: on this VM the host's steal rises while the
# guest is busy (6-26% over some 15-s runs of this test, 0-0.3% idle).
INFEASIBLE_TRIES = 3


def calm_median_p99(steal, tmp, name, what, run):
    """Median of the per-second read P99s of the seconds after
    INFEASIBLE_SETTLE_S the host did not disturb, of `run(read_extra)`
    (an R1+W256 run whose reader logs fio's hist_log). A run with more
    than half of those seconds disturbed is made again, INFEASIBLE_TRIES
    times in all; then steal.clean skips the test. Returns (median P99,
    run's result)."""
    for attempt in range(INFEASIBLE_TRIES):
        prefix = f"{tmp}/{name}{attempt}"
        start = time.time()
        res = run(fio.hist_log(prefix))
        windows = [(ms, p) for ms, p in fio.window_p99(prefix) if ms > INFEASIBLE_SETTLE_S * 1000]
        calm = steal.calm_windows(start, [ms for ms, _ in windows])
        if 2 * len(calm) >= len(windows):
            break
    kept, _ = steal.clean(start, windows, f"{what} (run {attempt + 1})")
    p99s = sorted(p for _, p in kept)
    return p99s[len(p99s) // 2], res


def test_infeasible_goal(daemon_factory, flash):
    """read-p99=10us is out of reach: state infeasible, reads at least as
    good as the static 50 us / 100 ms setting, write-iops-min honoured."""
    def static(read_extra):
        flash.set_scheduler("none")  # fresh depths, whatever ran before
        flash.set_scheduler("kyber")
        flash.set_kyber_targets(50_000, 100_000_000)
        return fio.run(flash.path, fio.pair(read_extra=read_extra),
                       runtime_s=INFEASIBLE_RUN_S, ramp_s=0), None

    def tuned(read_extra):
        d = start_tuner(daemon_factory, flash, "read-p99=10us")
        res = fio.run(flash.path, fio.pair(read_extra=read_extra),
                      runtime_s=INFEASIBLE_RUN_S, ramp_s=0)
        return res, stop_tuner(d)

    with tempfile.TemporaryDirectory() as tmp, fio.io_lock(), hoststeal.Monitor() as steal:
        static_p99, (static_res, _) = calm_median_p99(steal, tmp, "s", "static 50us/100ms", static)
        tuned_p99, (res, lines) = calm_median_p99(steal, tmp, "t", "read-p99=10us under the tuner",
                                                  tuned)
        d = start_tuner(daemon_factory, flash, "read-p99=10us write-iops-min=8k")
        floor = fio.run(flash.path, fio.pair(), runtime_s=20, ramp_s=4)
        floor_lines = stop_tuner(d)
    print(f"median per-second read P99 of the undisturbed seconds after {INFEASIBLE_SETTLE_S} s: "
          f"static 50us/100ms {static_p99 / 1e3:.0f} us (write {static_res['w'].write_iops:.0f} IOPS), "
          f"tuned {tuned_p99 / 1e3:.0f} us (write {res['w'].write_iops:.0f}); with floor: write "
          f"{floor['w'].write_iops:.0f}")
    # Steady state: after the first INFEASIBLE_SETTLE_S and before fio winds
    # down (its last second mixes in the end of the run).
    steady = lines[INFEASIBLE_SETTLE_S:-2]
    states = [l["tuner"]["state"] for l in steady]
    assert states.count("infeasible") >= 0.7 * len(states), states
    # The best the tuner can do is the static setting's own end state:
    # writes at depth 1, and then the reads as the static setting's.
    depths = [l["kyber_depth"]["write"] for l in steady]
    assert depths.count(1) >= 0.7 * len(depths), depths
    assert tuned_p99 <= static_p99 * INFEASIBLE_P99_TOLERANCE, (tuned_p99, static_p99)
    assert floor["w"].write_iops >= 8000 * 0.95
    # With a floor the tuner may only ask for a 2x write slowdown, so Kyber
    # walks the write depth down in small steps; how long that takes varies
    # (3-11 s here). Judged: it settles on infeasible within 18 s, stays
    # there, and the settled intervals keep writes above the floor.
    floor_states = [l["tuner"]["state"] for l in floor_lines[:-2]]
    assert "infeasible" in floor_states[:18], floor_states
    settled = floor_lines[floor_states.index("infeasible"):-2]
    assert all(l["tuner"]["state"] == "infeasible" for l in settled), floor_states
    settled_w = sorted(l["ops"]["write"]["iops"] for l in settled)
    assert settled_w[len(settled_w) // 2] >= 8000 * 0.95, settled_w


def test_override_and_resume(daemon_factory, flash):
    """Someone writes read_lat_nsec by hand: overridden within 2 intervals,
    no further write to the device until resumed (SIGUSR1)."""
    d = start_tuner(daemon_factory, flash, GOAL)
    # fio runs in a thread and takes the I/O lock there (the lock is
    # re-entrant per thread, not across threads).
    fio_done = []
    th = threading.Thread(target=lambda: fio_done.append(
        fio.run(flash.path, fio.pair(), runtime_s=18, ramp_s=0)))
    th.start()
    try:
        deadline = time.monotonic() + 10
        while flash.kyber_targets() == (2_000_000, 10_000_000) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert flash.kyber_targets() != (2_000_000, 10_000_000), "the tuner never wrote"
        with open(f"{flash.sysfs}/queue/iosched/read_lat_nsec", "w") as f:
            f.write("3333333")
        t_admin = time.time()
        admin = flash.kyber_targets()
        time.sleep(6)
        held = flash.kyber_targets()
        os.kill(d.proc.pid, signal.SIGUSR1)
    finally:
        th.join()
    lines = stop_tuner(d)
    assert fio_done
    over = [l for l in lines if l["tuner"]["state"] == "overridden"]
    assert over, [l["tuner"]["state"] for l in lines]
    delay = over[0]["time_ns"] / 1e9 - t_admin
    print(f"\noverridden {delay:.2f} s after the admin's write: {over[0]['tuner']['reason']}")
    assert delay <= 2.2
    assert held == admin, "the tuner wrote while overridden"
    assert not any(l["tuner"]["changed"] for l in over)
    assert lines[-1]["tuner"]["state"] != "overridden", "SIGUSR1 did not resume"


@pytest.mark.parametrize("initial", ["none", "kyber-custom"])
def test_rollback(daemon_factory, flash, initial):
    """SIGTERM puts the original scheduler and both targets back exactly."""
    if initial == "kyber-custom":
        flash.set_scheduler("kyber")
        flash.set_kyber_targets(1234567, 7654321)
    sched_before = flash.scheduler()
    targets_before = flash.kyber_targets() if initial != "none" else None
    d = start_tuner(daemon_factory, flash, GOAL)
    with fio.io_lock():
        fio.run(flash.path, fio.pair(), runtime_s=6, ramp_s=0)
    lines = stop_tuner(d)
    assert any(l["tuner"]["changed"] for l in lines), "nothing to roll back"
    assert flash.scheduler() == sched_before
    if targets_before:
        assert flash.kyber_targets() == targets_before
