# SPDX-License-Identifier: GPL-2.0-or-later
"""scheduler=auto: no harm where Kyber buys nothing (issue 13).

Method (root; holds the machine-wide I/O lock from tests/lib/fio.py for the
whole run). Device: loop over a file in /dev/shm (tests/lib/testdev.py),
where every scheduler's CPU cost per I/O shows. fio jobs as in
tests.lib.fio.pair(): 4 KiB random, io_uring, direct, reader on CPU 0,
writer on CPU 1.

1. R256+W1 (read-heavy): scheduler none's median read P99 over GOAL_RUNS
   runs sets a read goal none meets (EASY_GOAL_FACTOR x it). Then ROUNDS
   interleaved rounds of none, kyber-tuned `mode=throughput
   scheduler=kyber` (Kyber always), kyber-tuned `mode=throughput
   scheduler=auto` (the default policy, said explicitly) and kyber-tuned
   with the easy read goal and `scheduler=auto`.
   The daemon's sampled block-layer CPU per I/O (docs/tuner.md, "What
   each scheduler costs") is read from its JSON lines: Kyber's in the
   Kyber-always runs, none's in the mode=throughput scheduler=auto runs.
2. R1+W256 with its own easy goal (EASY_GOAL_FACTOR x none's read P99):
   ROUNDS interleaved rounds of none and kyber-tuned `scheduler=auto`.
3. On flashsim `flash` (where Kyber is needed): R1 for ALT_PHASES x
   ALT_PHASE_S seconds, with W256 running in every other phase (the
   first included), kyber-tuned `read-p99=2ms scheduler=auto` started
   fresh from none, ALT_ROUNDS runs. Judged on the daemon's own intervals
   (its --json lines): the share of intervals with writes whose read P99
   met the goal, and the scheduler switches a minute.

kyber-tuned starts fresh (from none) before each run, so fio's ramp is its
warm-up. Verdicts (issue 13's acceptance): under scheduler=auto, read IOPS
>= 95% of none's and read P99 <= 1.1x none's (medians) on R256+W1, the
device on none in every round of R1+W256, and on the alternating
workload the goal met in ALT_MET_SHARE of the intervals with writes
(median) with at most ALT_SWITCHES_PER_MIN switches a minute. Every run goes through
benchlib.Rounds: a run the host disturbed (CPU steal over 5%) is rejected
and rerun, and every try is listed. Results replace the "sched-choice"
section of docs/BENCHMARKS.md (--no-write: stdout only).

Run from the repository root: python3 -m bench.sched_choice (make bench-sched).
"""

import argparse
import datetime
import os
import statistics
import sys
import time

from bench import baselines, benchlib
from bench.benchlib import (LAT_IOPS, LAT_IOPS_FIGURES, Tuner, fmt_iops, fmt_us, machine, med, plural,
                            progress, rounds_log, set_static, summary_table, verdict)
from tests.lib import fio, testdev
from tests.lib.paths import KYBER_TUNED

SECTION = "sched-choice"
EASY_GOAL_FACTOR = 4      # x none's read P99: a goal none meets with room for this host's noise
READ_IOPS_SHARE = 0.95    # the acceptance: read IOPS against none's
READ_P99_FACTOR = 1.1     # the acceptance: read P99 against none's
NONE = ("none", "static", ("none",))
ALWAYS = "kyber-tuned mode=throughput scheduler=kyber (Kyber always)"
AUTO_THROUGHPUT = "kyber-tuned mode=throughput scheduler=auto"
AUTO_GOAL = "kyber-tuned easy goal, scheduler=auto"
ALT_GOAL, ALT_GOAL_NS = "read-p99=2ms scheduler=auto", 2_000_000
ALT_PHASE_S = 10          # the acceptance: R1 and R1+W256 alternating every 10 s
ALT_PHASES = 12           # for 2 minutes
ALT_WRITES_MIN_IOPS = 1000  # an interval with writes (flash's writers do ~15k/s; an interval
                            # straddling a phase's edge has them for part of it)
ALT_MET_SHARE = 0.90      # the acceptance: goal met in 90% of the windows with writes
ALT_SWITCHES_PER_MIN = 4  # the acceptance: at most 4 switches a minute


def easy_goal(none_p99_ns):
    us = max(1, round(float(f"{none_p99_ns * EASY_GOAL_FACTOR / 1e3:.2g}")))
    return f"read-p99={us}us scheduler=auto"


def none_p99(log, dev, jobs, args, label):
    runs = []
    for i in range(args.goal_runs):
        progress(f"{label}: none, run {i + 1}/{args.goal_runs}")
        runs.append(log.run(lambda: baselines.measure(dev, NONE, jobs, args.ramp, args.runtime),
                            label, i + 1, "none"))
    return statistics.median(r["read_p99"] for r in runs)


def run(args, dev):
    log = benchlib.Rounds()
    heavy, mixed = fio.pair(read_qd=256, write_qd=1), fio.pair()
    out = {"log": log}
    out["heavy_goal"] = easy_goal(none_p99(log, dev, heavy, args, "R256+W1 goal"))
    configs = [("none", NONE), (ALWAYS, (ALWAYS, "tuned", "mode=throughput scheduler=kyber")),
               (AUTO_THROUGHPUT, (AUTO_THROUGHPUT, "tuned", "mode=throughput scheduler=auto")),
               (AUTO_GOAL, (AUTO_GOAL, "tuned", out["heavy_goal"]))]
    out["heavy"] = log.interleaved(configs, args.rounds,
                                   lambda cfg: baselines.measure(dev, cfg, heavy, args.ramp, args.runtime),
                                   "R256+W1")
    out["mixed_goal"] = easy_goal(none_p99(log, dev, mixed, args, "R1+W256 goal"))
    configs = [("none", NONE), (AUTO_GOAL, (AUTO_GOAL, "tuned", out["mixed_goal"]))]
    out["mixed"] = log.interleaved(configs, args.rounds,
                                   lambda cfg: baselines.measure(dev, cfg, mixed, args.ramp, args.runtime),
                                   "R1+W256")
    set_static(dev, "none")
    return out


def alternating_run():
    """One alternating run on a fresh flashsim flash device: the daemon's
    intervals judged, as figures."""
    total = ALT_PHASES * ALT_PHASE_S
    js = [fio.randread("r", 1, extra={"runtime": f"{total}s"})]
    js += [fio.randwrite(f"w{k}", 256, extra={"startdelay": f"{2 * k * ALT_PHASE_S}s",
                                              "runtime": f"{ALT_PHASE_S}s"})
           for k in range((ALT_PHASES + 1) // 2)]
    with testdev.flashsim("flash") as dev:
        tuner = Tuner([dev], ALT_GOAL)
        lines = []
        try:
            t0 = time.time()
            fio.run(dev.path, js, runtime_s=total, ramp_s=0)
        finally:
            lines = tuner.stop()
    lines = [l for l in lines if l.get("device") == dev.name and not l.get("reset")
             and 0 < l["time_ns"] / 1e9 - t0 <= total + 1]
    writing = [l for l in lines if l["ops"]["write"]["iops"] >= ALT_WRITES_MIN_IOPS]
    met = [l for l in writing if 0 < (l["ops"]["read"]["total"]["p99_ns"] or 0) <= ALT_GOAL_NS]
    # The device ran none before the daemon started (Tuner sets it): a
    # switch in the first interval shows in its first line already.
    scheds = ["none"] + [l.get("scheduler") or "?" for l in lines]
    switches = sum(a != b for a, b in zip(scheds, scheds[1:]))
    return {"windows": len(writing), "met": len(met),
            "met_share": len(met) / len(writing) if writing else 0.0,
            "switches": switches, "switches_per_min": switches * 60 / total,
            "schedulers": sorted(set(scheds))}


def alternating(args):
    log = benchlib.Rounds(prefix="alternating: ")
    runs = [log.run(alternating_run, "alternating", r + 1, "kyber-tuned " + ALT_GOAL)
            for r in range(args.alt_rounds)]
    return {"log": log, "runs": runs}


def fmt_ns(values):
    return f"{statistics.median(values) / 1e3:.2f} µs" if values else "not measured"


def judge(res):
    heavy, mixed = res["heavy"], res["mixed"]
    n_iops, n_p99 = med(heavy, "none", "read_iops"), med(heavy, "none", "read_p99")
    out = []
    for name in (AUTO_THROUGHPUT, AUTO_GOAL):
        iops, p99 = med(heavy, name, "read_iops"), med(heavy, name, "read_p99")
        out.append((iops >= READ_IOPS_SHARE * n_iops,
                    f"R256+W1, {name}: read IOPS ≥ {READ_IOPS_SHARE:.0%} of none's, median: "
                    f"{fmt_iops(iops)} vs {fmt_iops(n_iops)} ({iops / n_iops:.0%})"))
        out.append((p99 <= READ_P99_FACTOR * n_p99,
                    f"R256+W1, {name}: read P99 ≤ {READ_P99_FACTOR:g}× none's, median: "
                    f"{fmt_us(p99)} vs {fmt_us(n_p99)} ({p99 / n_p99:.2f}×)"))
    cost_none = [r["original_cpu_per_io_ns"] for r in heavy[AUTO_THROUGHPUT] if r.get("original_cpu_per_io_ns")]
    cost_kyber = [r["kyber_cpu_per_io_ns"] for r in heavy[ALWAYS] if r.get("kyber_cpu_per_io_ns")]
    ok = bool(cost_none and cost_kyber) and statistics.median(cost_kyber) > statistics.median(cost_none)
    out.append((ok, "R256+W1: the daemon's sampled block-layer CPU per I/O is higher under Kyber than "
                f"under none, median: {fmt_ns(cost_kyber)} vs {fmt_ns(cost_none)} "
                f"(measured in {len(cost_kyber)} and {len(cost_none)} of {len(heavy[ALWAYS])} rounds)"))
    scheds = [r.get("schedulers", ["?"]) for r in mixed[AUTO_GOAL]]
    out.append((all(s == ["none"] for s in scheds),
                f"R1+W256, goal none meets ({res['mixed_goal']}): on none in every round "
                f"(schedulers seen per round: {'; '.join(', '.join(s) for s in scheds)})"))
    alt = res["alternating"]["runs"]
    share = statistics.median(r["met_share"] for r in alt)
    most = max(r["switches_per_min"] for r in alt)
    out.append((share >= ALT_MET_SHARE,
                f"alternating R1 / R1+W256 every {ALT_PHASE_S} s on flashsim flash ({ALT_GOAL}): "
                f"goal met in ≥ {ALT_MET_SHARE:.0%} of the intervals with writes, median: {share:.0%}"))
    out.append((most <= ALT_SWITCHES_PER_MIN,
                f"alternating: at most {ALT_SWITCHES_PER_MIN} scheduler switches a minute, "
                f"most in a run: {most:g}"))
    return out


ALT_FIGURES = (("met", "intervals with writes met", str), ("windows", "intervals with writes", str),
               ("met_share", "share met", lambda v: f"{v:.0%}"),
               ("switches", "switches", str))


def render(args, res, wall, command):
    heavy, mixed = res["heavy"], res["mixed"]
    always = med(heavy, ALWAYS, "read_iops") / med(heavy, "none", "read_iops")
    return "\n".join([
        "## Scheduler choice: no harm where Kyber buys nothing",
        "",
        f"Measured {datetime.datetime.now().astimezone():%Y-%m-%d %H:%M %Z} on {machine()}, "
        f"{wall / 60:.0f} min. Regenerate with `{command}` (root)." + benchlib.steal_sentence(),
        "",
        "Loop over a file in /dev/shm. fio 4 KiB random, io_uring, direct, reader on CPU 0, "
        f"writer on CPU 1; every run {args.ramp:g} s ramp, {args.runtime:g} s measured; "
        "kyber-tuned started fresh from scheduler none before each run. The easy goals are "
        f"{EASY_GOAL_FACTOR}× none's median read P99 over {plural(args.goal_runs, 'run')} of the "
        f"same workload. {args.rounds} interleaved rounds, order rotated each round. Cells: "
        "median (min–max). " + benchlib.REJECTION_SENTENCE,
        "",
        f"### R256+W1 (easy goal `{res['heavy_goal']}`)",
        "",
        *summary_table(heavy, LAT_IOPS), "",
        f"Kyber always (`scheduler=kyber`) keeps {always:.0%} of none's read IOPS.", "",
        "### R1+W256 (easy goal `" + res["mixed_goal"] + "`)",
        "",
        *summary_table(mixed, LAT_IOPS), "",
        f"### Alternating R1 and R1+W256 on flashsim `flash` (`{ALT_GOAL}`)",
        "",
        f"fio R1 for {ALT_PHASES * ALT_PHASE_S} s, W256 beside it in every other {ALT_PHASE_S}-second "
        "phase (the first included); kyber-tuned started fresh from none. Judged on the daemon's "
        f"1-second intervals: one with writes has ≥ {ALT_WRITES_MIN_IOPS} write IOPS; met: its read "
        "P99 (insert to completion) within the goal.",
        "",
        *benchlib.rounds_table(res["alternating"]["log"].entries(), ALT_FIGURES), "",
        *[verdict(ok, text) for ok, text in judge(res)], "",
        *rounds_log(res["log"].entries() + res["alternating"]["log"].entries(), LAT_IOPS_FIGURES,
                    title="Every run, rejected ones included", label_heading="phase", fold=False),
    ]) + "\n"


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--no-write", action="store_true", help="print only, leave docs/BENCHMARKS.md alone")
    ap.add_argument("--smoke", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    args.goal_runs, args.rounds, args.ramp, args.runtime, args.alt_rounds = 3, 5, 5, 8, 3
    if args.smoke:
        args.no_write = True
        args.goal_runs, args.rounds, args.ramp, args.runtime, args.alt_rounds = 1, 1, 2, 2, 1
    return args


def main(argv):
    args = parse_args(argv)
    benchlib.require_root("sched_choice.py")
    if not os.access(KYBER_TUNED, os.X_OK):
        sys.exit(f"sched_choice.py: {KYBER_TUNED} missing: run make (and make deps) first")
    benchlib.catch_signals()
    t0 = time.monotonic()
    with fio.io_lock(), benchlib.steal_watch():
        with testdev.shm() as dev:
            res = run(args, dev)
        res["alternating"] = alternating(args)
    command = benchlib.regenerate_command("sched_choice.py", argv, {(): "make bench-sched"})
    body = render(args, res, time.monotonic() - t0, command)
    benchlib.publish(SECTION, body, not args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
