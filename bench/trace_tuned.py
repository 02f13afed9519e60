# SPDX-License-Identifier: GPL-2.0-or-later
"""kyber-tuned's decisions, second by second, beside fio's read P99.

A diagnostic, not a benchmark section: it writes nothing into
docs/BENCHMARKS.md. Per run (root; holds the machine-wide I/O lock of
tests/lib/fio.py): kyber-tuned is started fresh with the goal (scheduler
none first, --json, 1 s interval), then fio's R1+W256 (tests.lib.fio.pair())
runs for the ramp and SECONDS more. Every measured second of fio's read
histogram log (log_unix_epoch, so both clocks are the wall clock) is printed
beside the daemon's --json line that ended nearest to it: its state, targets,
read metric, Kyber's write depth, the writes' IOPS and P99 total latency,
and its reason. Each run ends with its read percentile and write IOPS, the
share of its seconds within the goal, the seconds over 1.5x the goal, and
the host's CPU steal during it.

    python3 -m bench.trace_tuned rootfs read-p99=470us --runs 7 --seconds 25
    python3 -m bench.trace_tuned shm half --runs 3
    python3 -m bench.trace_tuned flashsim:tlc read-p99=3ms

GOAL is the daemon's goal grammar (kyber-tuned(8)), or `half`: half of
scheduler none's median read P99 over NONE_RUNS runs, as `make
bench-generalize` sets it.
"""

import argparse
import os
import re
import statistics
import sys
import tempfile
import time

from bench import benchlib
from bench.benchlib import Tuner, fmt_iops, fmt_pct, fmt_target, fmt_us, set_static
from bench.generalize import ROUNDS_RAMP_S, goal_for
from tests.lib import fio, testdev
from tests.lib.paths import KYBER_TUNED

DEVICES = {"rootfs": testdev.rootfs, "shm": testdev.shm}
NONE_RUNS = 3          # runs of scheduler none that set a `half` goal
NONE_RUN_S = 10        # their length: make bench-generalize's
FAR_MISS = 1.5         # a second this far over the goal is a spike (docs/tuner.md)
REASON_WIDTH = 60      # characters of the daemon's reason per line
# The goal's read percentile and bound, as the daemon's grammar writes them;
# the rest of a goal is the daemon's to check.
GOAL_RE = re.compile(r"(?:^|\s)read-p(\d+(?:\.\d+)?)=(\d+(?:\.\d+)?)(ns|us|ms|s)(?=\s|$)")
UNIT_NS = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}


def parse_goal(text):
    """(percentile, bound in ns) of a goal's read-pNN=DURATION."""
    m = GOAL_RE.search(text)
    if not m:
        raise ValueError("no read-pNN=DURATION in it (e.g. read-p99=470us)")
    pct = float(m.group(1))
    if not 0 < pct < 100:
        raise ValueError(f"percentile {m.group(1)} is not between 0 and 100")
    return pct, float(m.group(2)) * UNIT_NS[m.group(3)]


def open_device(spec):
    """rootfs, shm or flashsim[:PROFILE]: a context manager for the device."""
    kind, _, profile = spec.partition(":")
    if kind == "flashsim":
        return testdev.flashsim(profile or "flash")
    if kind in DEVICES and not profile:
        return DEVICES[kind]()
    raise ValueError(f"unknown device {spec!r}: rootfs, shm or flashsim[:PROFILE]")


def nearest_line(lines, t_s, tolerance_s=0.6):
    """The daemon's line whose interval ended nearest to t_s, or None."""
    best = min(lines, key=lambda l: abs(l["time_ns"] / 1e9 - t_s), default=None)
    if best is None or abs(best["time_ns"] / 1e9 - t_s) > tolerance_s:
        return None
    return best


def line_text(line):
    """The daemon's view of one second, in one line of text."""
    if line is None:
        return "(no daemon line)"
    tuner = line.get("tuner") or {}
    write = (line.get("ops") or {}).get("write") or {}
    depth = (line.get("kyber_depth") or {}).get("write")
    metric = tuner.get("metric_ns")
    wp99 = ((write.get("total") or {}).get("p99_ns"))
    targets = (f"{fmt_target(line['read_target_ns'])}/{fmt_target(line['write_target_ns'])}"
               if line.get("read_target_ns") is not None else "-")
    reason = (tuner.get("reason") or "")[:REASON_WIDTH]
    return (f"{tuner.get('state') or '?':<10} {targets:>15} "
            f"metric {fmt_us(metric) if metric else '-':>8} "
            f"wdepth {depth if depth is not None else '-':>3} "
            f"w {fmt_iops(write.get('iops') or 0):>7} P99 {fmt_us(wp99) if wp99 else '-':>8}  {reason}")


def window_pct(windows, pct):
    """[(end_msec, the pct percentile in ns)] of fio.hist_windows()."""
    return [(ms, p) for ms, p in ((ms, fio.hist_percentile(bins, pct)) for ms, bins in windows)
            if p is not None]


def run_pct(windows, pct):
    """The pct percentile (ns) of all the windows' reads together."""
    return fio.hist_percentile([sum(col) for col in zip(*(bins for _, bins in windows))] or [0], pct)


def trace_run(dev, goal, pct, goal_ns, ramp_s, seconds):
    """One run: (per-second rows (time, read percentile, daemon line), summary dict)."""
    with tempfile.TemporaryDirectory(prefix="kt-trace-") as tmp:
        hist = dict(fio.hist_log(f"{tmp}/r"), log_unix_epoch=1)
        tuner = Tuner([dev], goal)
        try:
            wall0 = time.time()
            res = fio.run(dev.path, fio.pair(read_extra=hist), runtime_s=seconds, ramp_s=ramp_s)
            stolen = benchlib.steal_pct(wall0 + ramp_s)
        finally:
            lines = tuner.stop()
        logged = fio.hist_windows(f"{tmp}/r")
    set_static(dev, "none")
    lines = [l for l in lines if l.get("device") == dev.name]
    rows = [(ms / 1e3, p, nearest_line(lines, ms / 1e3)) for ms, p in window_pct(logged, pct)]
    per_s = [p for _, p, _ in rows]
    summary = {"read": run_pct(logged, pct), "write_iops": res["w"].write_iops,
               "within_pct": 100 * sum(p <= goal_ns for p in per_s) / len(per_s) if per_s else None,
               "far": sum(p > FAR_MISS * goal_ns for p in per_s), "seconds": len(per_s),
               "steal_pct": stolen}
    return rows, summary


def summary_text(s, pname, goal_ns):
    within = fmt_pct(s["within_pct"]) if s["within_pct"] is not None else "-"
    steal = fmt_pct(s["steal_pct"]) if s["steal_pct"] is not None else "unknown"
    return (f"run read {pname} {fmt_us(s['read'])} ({'within' if s['read'] <= goal_ns else 'OVER'} "
            f"the goal), writes {fmt_iops(s['write_iops'])} IOPS, {within} of {s['seconds']} s within "
            f"the goal, {s['far']} over {FAR_MISS}x it, host steal {steal}")


def none_goal(dev, ramp_s):
    """`half`: (goal text, percentile, goal ns) from scheduler none's median
    read P99, as make bench-generalize sets its goal."""
    p99 = []
    for i in range(NONE_RUNS):
        benchlib.progress(f"none, run {i + 1}/{NONE_RUNS}")
        set_static(dev, "none")
        p99.append(fio.run(dev.path, fio.pair(), runtime_s=NONE_RUN_S,
                           ramp_s=ramp_s)["r"].read_clat_ns[99.0])
    goal_ns, goal = goal_for(statistics.median(p99))
    print(f"none's read P99 {', '.join(fmt_us(p) for p in p99)}: goal {goal}")
    return goal, 99.0, goal_ns


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="python3 -m bench.trace_tuned",
                                 description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="DEVICE: rootfs, shm or flashsim[:PROFILE]; GOAL: a goal, "
                                        "e.g. read-p99=470us, or half (of none's read P99)")
    ap.add_argument("device", metavar="DEVICE")
    ap.add_argument("goal", metavar="GOAL")
    ap.add_argument("--runs", type=int, default=1, help="runs, each with a fresh daemon (default 1)")
    ap.add_argument("--seconds", type=int, default=25, help="measured seconds per run (default 25)")
    ap.add_argument("--ramp", type=int, default=ROUNDS_RAMP_S,
                    help=f"seconds before measuring, the daemon's warm-up (default {ROUNDS_RAMP_S}, "
                         "make bench-generalize's)")
    args = ap.parse_args(argv)
    if args.runs < 1 or args.seconds < 2 or args.ramp < 0:
        ap.error("--runs must be >= 1, --seconds >= 2 and --ramp >= 0")
    if args.goal != "half":
        try:
            args.pct, args.goal_ns = parse_goal(args.goal)
        except ValueError as e:
            ap.error(f"GOAL {args.goal!r}: {e}")
    try:
        args.open_device = open_device(args.device)
    except ValueError as e:
        ap.error(str(e))
    return args


def print_run(i, args, goal, pname, goal_ns, rows, s):
    print(f"\n# run {i + 1}/{args.runs} on {args.device}, goal {goal}")
    t0 = rows[0][0] - 1 if rows else 0
    for t, p, line in rows:
        mark = "  " if p <= goal_ns else "!!" if p > FAR_MISS * goal_ns else " !"
        print(f"{t - t0:5.0f}s fio read {pname} {fmt_us(p):>8} {mark}  {line_text(line)}")
    print(f"# {summary_text(s, pname, goal_ns)}")


def main(argv):
    args = parse_args(argv)
    benchlib.require_root("trace_tuned.py")
    for path in (KYBER_TUNED, testdev.FLASHSIM):
        if not os.access(path, os.X_OK):
            sys.exit(f"trace_tuned.py: {path} missing: run make (and make deps) first")
    benchlib.catch_signals()
    summaries = []
    with fio.io_lock(), benchlib.steal_watch(), args.open_device as dev:
        if args.goal == "half":
            goal, pct, goal_ns = none_goal(dev, args.ramp)
        else:
            goal, pct, goal_ns = args.goal, args.pct, args.goal_ns
        pname = f"P{pct:g}"
        for i in range(args.runs):
            benchlib.progress(f"{args.device}: kyber-tuned {goal}, run {i + 1}/{args.runs}")
            try:
                rows, s = trace_run(dev, goal, pct, goal_ns, args.ramp, args.seconds)
            except RuntimeError as e:  # the daemon refused the goal, say
                sys.exit(f"trace_tuned.py: {e}")
            print_run(i, args, goal, pname, goal_ns, rows, s)
            summaries.append(s)
    if len(summaries) > 1:
        runs = [s["read"] for s in summaries]
        print(f"\n# {len(summaries)} runs: read {pname} {fmt_us(min(runs))}-{fmt_us(max(runs))} "
              f"(median {fmt_us(statistics.median(runs))}), "
              f"{sum(p <= goal_ns for p in runs)} of {len(runs)} within the goal; writes median "
              f"{fmt_iops(statistics.median(s['write_iops'] for s in summaries))} IOPS")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
