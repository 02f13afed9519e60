# SPDX-License-Identifier: LGPL-2.1-or-later
"""scheduler=auto, the default policy, on the real kernel (issue 13): the
goals here say no scheduler=, so they test the default. The device stays
on its original scheduler where the goal holds there or there is no read goal,
and moves to Kyber where the goal is missed while writes run. The
decision's bounds (how fast, how often) are the simulator's
(tests/unit/test-ctl-sched.c); here the properties hold with wide margins:
a goal four times what none gives, a goal six times below it.
"""

import signal
import statistics

from tests.lib import fio
from tests.lib.daemon import json_lines

# x scheduler none's read P99 measured just before: a goal none meets
# with room for this host's noise (one-second P99s vary by 2x here).
EASY_GOAL_FACTOR = 4
TUNED_S = 20
# The policy's evidence for leaving the original scheduler
# (daemon/controller/ctl-tunables.h): the goal missed there in this many
# intervals in a row, or once by this factor.
SCHED_MISSES_TO_KYBER = 2
SCHED_FAR_MISS = 3.0


def run_tuned(daemon_factory, dev, goal, jobs, runtime_s=TUNED_S):
    d = daemon_factory(["--foreground", "--goal", f"{dev.name}:{goal}", "--json", "--interval", "1s"])
    assert d.ready(), d.stderr()
    fio.run(dev.path, jobs, runtime_s=runtime_s, ramp_s=0)
    rc = d.stop(signal.SIGTERM)
    out = d.communicate()
    assert rc == 0, d.stderr()
    lines = json_lines(out)
    for l in lines:
        print(f"  {l['scheduler']:6} {l['tuner']['state']:10} {l['tuner']['reason']}")
    assert len(lines) >= runtime_s // 2, d.stderr()
    return lines, d.stderr()


def left_none_on_evidence(lines, goal_ns):
    """Where the daemon left none: whether the goal was missed there as
    the policy requires. The interval it switched in was measured on none
    (its line already shows Kyber), and so were the ones before it."""
    first = next((i for i, l in enumerate(lines) if l["scheduler"] != "none"), None)
    if first is None:
        return True
    misses = [l["tuner"] for l in lines[max(0, first - SCHED_MISSES_TO_KYBER + 1):first + 1]]
    print(f"left none at interval {first + 1}: read P99 "
          f"{[t['metric_ns'] and round(t['metric_ns'] / 1e3) for t in misses]} us, goal {goal_ns / 1e3:.0f} us")
    last = misses[-1]
    far = last["goal_met"] is False and last["metric_ns"] >= SCHED_FAR_MISS * goal_ns
    return far or (len(misses) == SCHED_MISSES_TO_KYBER and all(t["goal_met"] is False for t in misses))


def test_stays_where_none_meets_the_goal(daemon_factory, device_factory):
    """R1+W256 on a loop over /dev/shm, goal four times none's read P99:
    the device stays on none while none meets the goal. This CPU-bound
    device's one-second read P99 can still pass four times its 5-second
    P99 (5.2x in a CI run, with no host steal); where it does so in two
    intervals in a row, the policy leaves none, and the test checks that
    it did so on that evidence and not before."""
    dev = device_factory("shm")
    with fio.io_lock():
        none_p99 = fio.run(dev.path, fio.pair(), runtime_s=5, ramp_s=1)["r"].read_clat_ns[99.0]
        goal_us = max(1, round(EASY_GOAL_FACTOR * none_p99 / 1e3))
        lines, err = run_tuned(daemon_factory, dev, f"read-p99={goal_us}us", fio.pair())
    assert left_none_on_evidence(lines, goal_us * 1000), err
    if all(l["scheduler"] == "none" for l in lines):
        assert "-> kyber" not in err, err
    assert dev.scheduler() == "none"


def test_throughput_mode_stays_off_kyber(daemon_factory, device_factory):
    """No read goal (mode=throughput), R256+W1: nothing for Kyber to protect."""
    dev = device_factory("shm")
    with fio.io_lock():
        lines, err = run_tuned(daemon_factory, dev, "mode=throughput",
                               fio.pair(read_qd=256, write_qd=1))
    assert all(l["scheduler"] == "none" for l in lines), err
    assert all(l["tuner"]["state"] == "holding" for l in lines[1:]), err


def test_switches_where_kyber_is_needed(daemon_factory, device_factory):
    """flashsim flash, R1+W256, goal 2 ms (none gives 10-15 ms): Kyber,
    the switch logged with its evidence, the original back on exit."""
    dev = device_factory("flashsim", profile="flash")
    with fio.io_lock():
        lines, err = run_tuned(daemon_factory, dev, "read-p99=2ms", fio.pair())
    on_kyber = [i for i, l in enumerate(lines) if l["scheduler"] == "kyber"]
    assert on_kyber and on_kyber[0] <= 10, err
    assert "scheduler none -> kyber (the switch took" in err, err
    assert "with writes running" in err, err
    print(f"  CPU per I/O (ns): none {last_cost(lines, 'original_cpu_per_io_ns')}, "
          f"kyber {last_cost(lines, 'kyber_cpu_per_io_ns')}")
    assert dev.scheduler() == "none"


# Rounds of each scheduler, interleaved, for the cost comparison.
COST_ROUNDS = 2
COST_RUN_S = 12


def last_cost(lines, key):
    """The last interval's sampled cost under one scheduler, or None."""
    return next((l["tuner"][key] for l in reversed(lines) if l["tuner"][key]), None)


def test_cost_per_io_measured_live(daemon_factory, device_factory):
    """R256+W1 on a loop over /dev/shm: the sampler prices the block
    layer per I/O under each scheduler, the JSON lines show it, and Kyber
    costs more per I/O than none (the storage-stack study's finding; here
    0.8 against 1.5 us), in every pair of interleaved rounds' medians."""
    dev = device_factory("shm")
    costs = {"none": [], "kyber": []}
    with fio.io_lock():
        for _ in range(COST_ROUNDS):
            # mode=throughput keeps none under scheduler=auto; scheduler=kyber keeps Kyber.
            for sched, goal, key in (("none", "mode=throughput", "original_cpu_per_io_ns"),
                                     ("kyber", "mode=throughput scheduler=kyber", "kyber_cpu_per_io_ns")):
                lines, err = run_tuned(daemon_factory, dev, goal, fio.pair(read_qd=256, write_qd=1),
                                       runtime_s=COST_RUN_S)
                assert all(l["scheduler"] == sched for l in lines[1:]), err
                cost = last_cost(lines, key)
                assert cost, f"{sched}: no cost measured in {len(lines)} intervals\n{err}"
                other = "kyber_cpu_per_io_ns" if sched == "none" else "original_cpu_per_io_ns"
                assert last_cost(lines, other) is None, err	# nothing ran under the other
                costs[sched].append(cost)
    print(f"  CPU per I/O (ns): none {costs['none']}, kyber {costs['kyber']}")
    assert statistics.median(costs["kyber"]) > statistics.median(costs["none"]), costs
    assert dev.scheduler() == "none"
