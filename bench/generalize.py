# SPDX-License-Identifier: GPL-2.0-or-later
"""kyber-tuned beside the best static Kyber setting on three kinds of device.

Method (root; holds the machine-wide I/O lock from tests/lib/fio.py for the
whole run). Devices: loop over a file on the root file system, loop over a
file in /dev/shm, flashsim profile `flash` (tests/lib/testdev.py). Workload
R1+W256 (tests.lib.fio.pair(): fio randread iodepth 1 on CPU 0 beside
randwrite iodepth 256 on CPU 1, 4 KiB, io_uring, direct). Per device:

1. Goal: scheduler none, GOAL_RUNS runs; the goal is half of their median
   read P99, rounded to two significant digits (read-p99=NNNus).
2. Grid: the quick grid of `make bench` (baselines.GRID_QUICK, 4 read x 4
   write targets spanning the study's range); per point scheduler none ->
   kyber (fresh depths), the targets, a ramp, then the measured run.
3. Confirmation: one short run per grid point is noisy, so a point that
   met the goal in it may not meet it. The points that met it are run
   CONFIRM_RUNS more times each, with the rounds' measured length, most
   write IOPS first, until one's median read P99 meets the goal: that one
   is the best static setting (none confirmed: the one closest to it, and
   the verdict says it missed).
4. Rounds: ROUNDS interleaved rounds of none, the best static setting and
   kyber-tuned with the goal (order rotated each round); every run from
   fresh depths, kyber-tuned started fresh before fio for each run, so fio's
   ramp is its warm-up and convergence is not what is measured.
5. Verdicts: kyber-tuned's median write IOPS >= 90% of the best static
   setting's; kyber-tuned's median read P99 <= the goal. Beside them, not
   a verdict: the share of each run's seconds whose read P99 is within the
   goal, the daemon's own test of a goal (docs/tuner.md).

Every run of 1-4 goes through benchlib.Rounds: a run during which the host
stole more than 5% of the CPUs is rejected and rerun (capped), and every try
is listed in the section. Results go to stdout and replace the "generalize"
section of docs/BENCHMARKS.md (--no-write: stdout only). Devices, daemons and
schedulers are torn down/restored on every exit, also on SIGTERM.

Run from the repository root: python3 -m bench.generalize [--full]
(make bench-generalize).
"""

import argparse
import datetime
import os
import statistics
import sys
import tempfile
import time

from bench import baselines, benchlib
from bench.benchlib import (LAT_IOPS, LAT_IOPS_FIGURES, fmt_iops, fmt_pct, fmt_target, fmt_us,
                            machine, med, plural, progress, rounds_log, set_static, summary_table,
                            verdict)
from tests.lib import fio, testdev
from tests.lib.paths import KYBER_TUNED

SECTION = "generalize"
# (key, heading, context manager): the devices, in the order run.
DEVICES = (("rootfs", "loop over a file on the root file system", testdev.rootfs),
           ("shm", "loop over a file in /dev/shm", testdev.shm),
           ("flashsim", "flashsim `flash`", lambda: testdev.flashsim("flash")))
GOAL_SHARE = 0.5     # the goal: this share of none's read P99
WRITE_SHARE = 0.9    # kyber-tuned's write IOPS against the best static setting's
NONE = ("none", "static", ("none",))
TUNED = "kyber-tuned"
BEST = "kyber best static"
GOAL_LOG, GRID_LOG, CONFIRM_LOG, ROUNDS_LOG = "goal", "grid", "confirm", "rounds"  # a device's log
# Runs per grid point that confirm it meets the goal: 3 makes a median, and
# the rounds then measure the chosen point 5 times more.
CONFIRM_RUNS = 3
# Grid points confirmed at most, most write IOPS first: all of them (None),
# until one meets the goal. A cap can end the search short of the point
# that holds the goal where the points with more writes met it in their one
# grid run only by luck (seen on /dev/shm). The quick grid's 16 points
# bound the step to ~11 min.
CONFIRM_MAX = None
# Per run: the read P99 of each measured second, and the share of them (%)
# within the goal. The daemon's own test of a goal (docs/tuner.md) is that
# share, at 95% of the seconds; a run's P99 can meet the goal while a
# third of its seconds miss it where the host, not the writes, makes the
# reads' tail (a loop device over /dev/shm).
SECONDS_P99, WITHIN = "read_p99_s", "within_pct"


# Warm-up of every run in the rounds: kyber-tuned starts fresh before each
# one, cuts within ~5 s and then steps writes back up every 3 s while reads
# have room, so 15 s is its convergence, not what is measured (convergence
# from a cold start is measured in the baselines section).
ROUNDS_RAMP_S = 15

def goal_for(none_p99_ns):
    """GOAL_SHARE of none's read P99, in whole µs rounded to two significant
    digits (1 µs at least): (goal in ns, goal text)."""
    us = max(1, round(float(f"{none_p99_ns * GOAL_SHARE / 1e3:.2g}")))
    return us * 1000, f"read-p99={us}us scheduler=kyber"


def point_name(targets):
    return f"kyber {fmt_target(targets[0])}/{fmt_target(targets[1])}"


def confirm_candidates(grid, goal_ns):
    """The grid points whose run met the goal, most write IOPS first."""
    meeting = [(t, r) for t, r in grid.items() if r["read_p99"] <= goal_ns]
    return [t for t, _ in sorted(meeting, key=lambda kv: -kv[1]["write_iops"])]


def confirmed_best(tried, goal_ns):
    """Of the points tried in order ({targets: [figures]}), the first whose
    median read P99 meets the goal; none: the lowest median read P99.
    (targets, confirmed) or (None, False) when nothing was tried."""
    if not tried:
        return None, False
    p99 = {t: statistics.median(r["read_p99"] for r in runs) for t, runs in tried.items()}
    for t in tried:
        if p99[t] <= goal_ns:
            return t, True
    return min(tried, key=lambda t: p99[t]), False


def confirm(candidates, runs, goal_ns, run_one, say=lambda targets, i: None):
    """Run each candidate runs times (run_one(targets, i) -> figures), in
    order, until one's median read P99 meets the goal: {targets: [figures]}
    of those tried."""
    tried = {}
    for targets in candidates:
        tried[targets] = []
        for i in range(runs):
            say(targets, i)
            tried[targets].append(run_one(targets, i))
        if confirmed_best(tried, goal_ns)[1]:
            break
    return tried


# ------------------------------------------------------------ measuring
def measure(dev, cfg, ramp, runtime):
    """One R1+W256 run of cfg (baselines.measure's (name, kind, arg)), with
    the read P99 of each of its measured seconds (fio's histogram log)."""
    with tempfile.TemporaryDirectory(prefix="kt-generalize-") as tmp:
        js = fio.pair(read_extra=fio.hist_log(f"{tmp}/r"))
        out = baselines.measure(dev, cfg, js, ramp, runtime)
        out[SECONDS_P99] = [p for _, p in fio.window_p99(f"{tmp}/r")]
    return out


def mark_seconds_within(entries, goal_ns):
    """Give every try that logged its seconds the share of them (%) whose
    read P99 is within the goal (WITHIN): known only once the goal is."""
    for e in entries:
        seconds = e["figures"].get(SECONDS_P99)
        if seconds:
            e["figures"][WITHIN] = 100 * sum(p <= goal_ns for p in seconds) / len(seconds)


def bench_device(args, dev, key):
    """Goal, grid and rounds on one device: a dict for render_device(),
    with the log of every try."""
    t0 = time.monotonic()
    log = benchlib.Rounds(prefix=f"{key} ")
    none = []
    for i in range(args.goal_runs):
        progress(f"{key} {GOAL_LOG}: none, run {i + 1}/{args.goal_runs}")
        none.append(log.run(lambda: measure(dev, NONE, args.ramp, args.runtime),
                            GOAL_LOG, i + 1, "none"))
    none_p99 = statistics.median(r["read_p99"] for r in none)
    goal_ns, goal = goal_for(none_p99)

    grid = {}
    points = [(r, w) for r in args.grid[0] for w in args.grid[1]]
    for i, targets in enumerate(points):
        progress(f"{key} {GRID_LOG}: {point_name(targets)} ({i + 1}/{len(points)}), goal {goal}")
        grid[targets] = log.run(
            lambda t=targets: measure(dev, ("grid", "static", ("kyber", t)), args.grid_ramp,
                                      args.grid_run),
            GRID_LOG, None, point_name(targets))
    tried = confirm(confirm_candidates(grid, goal_ns)[:args.confirm_max], args.confirm_runs, goal_ns,
                    lambda targets, i: log.run(
                        lambda: measure(dev, ("confirm", "static", ("kyber", targets)),
                                        args.grid_ramp, args.runtime),
                        CONFIRM_LOG, i + 1, point_name(targets)),
                    lambda targets, i: progress(f"{key} {CONFIRM_LOG}: {point_name(targets)}, "
                                                f"run {i + 1}/{args.confirm_runs}"))
    chosen, confirmed = confirmed_best(tried, goal_ns)
    best = (chosen, grid[chosen]) if chosen else None

    configs = [("none", NONE)]
    if best:
        configs.append((BEST, (BEST, "static", ("kyber", best[0]))))
    configs.append((TUNED, (TUNED, "tuned", goal)))
    runs = log.interleaved(configs, args.rounds,
                           lambda cfg: measure(dev, cfg, args.ramp, args.runtime), ROUNDS_LOG)
    set_static(dev, "none")
    mark_seconds_within(log.entries(), goal_ns)
    return {"none_p99": none_p99, "goal_ns": goal_ns, "goal": goal, "grid": grid, "best": best,
            "tried": tried, "confirmed": confirmed, "runs": runs, "log": log,
            "wall": time.monotonic() - t0}


def run(args):
    """{device key: result dict, or a string saying why there is none}."""
    out = {}
    for key, _, make in DEVICES:
        if key not in args.devices:
            continue
        try:
            with make() as dev:
                out[key] = bench_device(args, dev, key)
        except testdev.DeviceUnavailable as e:
            print(f"generalize.py: {key} unavailable, skipped: {e.reason}", file=sys.stderr)
            out[key] = f"device unavailable: {e.reason}"
        except (RuntimeError, OSError) as e:  # fio, the daemon, the device: say so, go on
            print(f"generalize.py: {key} failed: {e}", file=sys.stderr)
            first = str(e).splitlines()[0] if str(e) else type(e).__name__
            out[key] = "failed: " + first.replace("|", "/")  # it goes into a table
    return out


# ------------------------------------------------------------ report
# The tables' columns: fio's figures and the share of seconds within the goal.
WITHIN_METRIC = (WITHIN, "seconds within goal", fmt_pct)
METRICS = LAT_IOPS[:3] + (WITHIN_METRIC,) + LAT_IOPS[3:]
FIGURES = LAT_IOPS_FIGURES + (WITHIN_METRIC,)


def judge(res):
    """[(ok, text)]: the write-IOPS comparison and the goal."""
    runs, goal_ns, best = res["runs"], res["goal_ns"], res["best"]
    tuned_w, tuned_p99 = med(runs, TUNED, "write_iops"), med(runs, TUNED, "read_p99")
    if best:
        bw, bp99 = med(runs, BEST, "write_iops"), med(runs, BEST, "read_p99")
        why = ""
        if not res["confirmed"]:
            why = (f"; none of the {plural(len(res['tried']), 'grid point')} that met the goal "
                   "in the grid met it in its confirmation runs, so this is the closest")
        elif bp99 > goal_ns:
            why = (f"; the best static setting itself measured {fmt_us(bp99)} in the rounds "
                   f"(grid: {fmt_us(best[1]['read_p99'])}), over the goal")
        cmp = (tuned_w >= WRITE_SHARE * bw,
               f"write IOPS ≥ {WRITE_SHARE:.0%} of the best static setting's "
               f"({fmt_target(best[0][0])}/{fmt_target(best[0][1])}), median: "
               f"{fmt_iops(tuned_w)} vs {fmt_iops(bw)} ({tuned_w / bw:.0%})" + why)
    else:
        near = min(res["grid"].items(), key=lambda kv: kv[1]["read_p99"])
        cmp = (False, f"write IOPS ≥ {WRITE_SHARE:.0%} of the best static setting's: no grid "
                      f"point met the goal ({fmt_us(res['goal_ns'])}); the lowest read P99 was "
                      f"{fmt_us(near[1]['read_p99'])} at {fmt_target(near[0][0])}/"
                      f"{fmt_target(near[0][1])}, so there is no static setting to compare with")
    met = (tuned_p99 <= goal_ns,
           f"read P99 ≤ goal ({res['goal']}), median: {fmt_us(tuned_p99)}"
           + (f", over by {fmt_us(tuned_p99 - goal_ns)}" if tuned_p99 > goal_ns else ""))
    return [cmp, met]


def median_within(runs, name):
    """The median share of seconds within the goal over name's runs, or None."""
    vals = [r[WITHIN] for r in runs.get(name, []) if WITHIN in r]
    return statistics.median(vals) if vals else None


def within_text(runs):
    """Each configuration's median share of seconds within the goal."""
    shares = ((name, median_within(runs, name)) for name in runs)
    return (", ".join(f"{name} {fmt_pct(v)}" for name, v in shares if v is not None)
            or "not logged")


def summary_rows(results):
    rows = ["| device | none's read P99 | goal | best static (grid) | kyber-tuned read P99 "
            "| kyber-tuned write IOPS vs best static | write IOPS ≥ 90% | goal met "
            "| seconds within goal, best static / kyber-tuned |",
            "|---|---:|---|---|---:|---:|---|---|---:|"]
    for key, heading, _ in DEVICES:
        res = results.get(key)
        if res is None:
            continue
        if isinstance(res, str):
            rows.append(f"| {heading} | – | – | – | – | – | **MISSED** ({res}) "
                        "| **MISSED** | – |")
            continue
        runs, best = res["runs"], res["best"]
        (ok_w, _), (ok_p, _) = judge(res)
        tw = med(runs, TUNED, "write_iops")
        vs = (f"{fmt_iops(tw)} vs {fmt_iops(med(runs, BEST, 'write_iops'))}" if best
              else f"{fmt_iops(tw)} vs –")
        rows.append(f"| {heading} | {fmt_us(res['none_p99'])} | {res['goal']} | "
                    + (f"{fmt_target(best[0][0])}/{fmt_target(best[0][1])}" if best
                       else "none met it")
                    + f" | {fmt_us(med(runs, TUNED, 'read_p99'))} | {vs} | "
                    f"**{'MET' if ok_w else 'MISSED'}** | **{'MET' if ok_p else 'MISSED'}** | "
                    f"{fmt_pct(median_within(runs, BEST))} / "
                    f"{fmt_pct(median_within(runs, TUNED))} |")
    return rows


def tuned_finals(runs):
    return ", ".join(f"{fmt_target(r['targets'][0])}/{fmt_target(r['targets'][1])}"
                     + (f" ({r['state']})" if r.get("state") else "")
                     for r in runs[TUNED] if "targets" in r) or "–"


def confirm_rows(args, res):
    """The confirmation of the grid points that met the goal: their runs
    and whether each met it."""
    tried, goal_ns = res["tried"], res["goal_ns"]
    if not tried:
        return ["Confirmation: no grid point met the goal, none to confirm."]
    out = [f"Confirmation ({plural(args.confirm_runs, 'run')} per grid point that met the goal "
           f"in the grid, most write IOPS first, {args.grid_ramp:g} s ramp + {args.runtime:g} s "
           "measured; the first whose median read P99 meets the goal is the best static "
           "setting):", "",
           *summary_table({point_name(t): runs for t, runs in tried.items()}, METRICS,
                          first="grid point"), ""]
    for t, runs in tried.items():
        p99 = statistics.median(r["read_p99"] for r in runs)
        out.append(f"- {point_name(t)}: median read P99 {fmt_us(p99)}, "
                   + ("meets the goal" if p99 <= goal_ns else "over the goal"))
    return out


def render_device(args, heading, res):
    out = [f"### {heading}", ""]
    if isinstance(res, str):
        return out + [f"No result: {res}.", "",
                      verdict(False, f"write IOPS ≥ {WRITE_SHARE:.0%} of the best static "
                                     f"setting's: {res}"),
                      verdict(False, f"read P99 ≤ goal: {res}")]
    runs, best, log = res["runs"], res["best"], res["log"]
    out += [f"Goal: half of none's median read P99 over {plural(args.goal_runs, 'run')} "
            f"({fmt_us(res['none_p99'])}): `{res['goal']}`. Best static setting: "
            + (f"{fmt_target(best[0][0])}/{fmt_target(best[0][1])} (read/write target; grid "
               f"{fmt_us(best[1]['read_p99'])} / {fmt_iops(best[1]['write_iops'])} write IOPS; "
               + ("confirmed" if res["confirmed"] else "**not confirmed**, the closest tried")
               + ")." if best else "none, no grid point met the goal.")
            + f" {res['wall'] / 60:.1f} min on this device.", "",
            *summary_table(runs, METRICS), "",
            *confirm_rows(args, res), "",
            f"kyber-tuned's final targets (and state) per round: {tuned_finals(runs)}.", "",
            *[verdict(ok, text) for ok, text in judge(res)],
            f"- Seconds within the goal (the daemon's own test of a goal: 95% of its one-second "
            f"windows, docs/tuner.md; not one of the targets above), median per run: "
            f"{within_text(runs)}.", "",
            *rounds_log(log.entries(GOAL_LOG, CONFIRM_LOG, ROUNDS_LOG), FIGURES,
                        title="The goal's runs, the confirmation runs and every run of every "
                              "round, rejected ones included", label_heading="phase",
                        fold=False), "",
            f"Grid ({len(res['grid'])} points, {args.grid_ramp:g} s ramp + {args.grid_run:g} s "
            "measured each):", "",
            *baselines.grid_table(res["grid"],
                                  [r["targets"] for r in runs[TUNED] if "targets" in r],
                                  res["goal_ns"], rounds_name="round"), "",
            *rounds_log(log.entries(GRID_LOG), FIGURES,
                        title="Every try of the grid, rejected ones included")]
    return out


def render(args, results, wall, command):
    out = [
        "## Generalization: kyber-tuned beside the best static setting on three devices",
        "",
        f"Measured {datetime.datetime.now().astimezone():%Y-%m-%d %H:%M %Z} on {machine()}, "
        f"{wall / 60:.0f} min. Regenerate with `{command}` (root; {args.mode} mode)."
        + benchlib.steal_sentence(),
        "",
        "R1+W256: fio randread iodepth 1 on CPU 0 beside randwrite iodepth 256 on CPU 1, 4 KiB, "
        "io_uring, direct. Per device: scheduler none's median read P99 over "
        f"{plural(args.goal_runs, 'run')} sets the goal (half of it, two significant digits); the quick "
        f"grid of `make bench` ({len(args.grid[0])} read × {len(args.grid[1])} write targets, "
        "each from fresh depths: scheduler none, then kyber, then the targets) finds the points "
        "meeting the goal in one short run each; the best static setting is the first of them, "
        f"most write IOPS first{confirm_cap(args)}, whose median read P99 over "
        f"{plural(args.confirm_runs, 'more run')} meets the goal; then "
        f"{args.rounds} interleaved rounds of none, that setting and kyber-tuned with the goal, "
        "order rotated each round, each run from fresh depths. A confirmation run: "
        f"{args.grid_ramp:g} s ramp, {args.runtime:g} s measured. Every other run outside the "
        f"grid: {args.ramp:g} s ramp, {args.runtime:g} s measured; kyber-tuned is started fresh "
        "(from scheduler none) before fio for each run, so the ramp is its warm-up and "
        "convergence is not what is measured. Cells: median (min–max). Read P99 is fio's "
        "completion latency over the run; seconds within goal is the share of the run's "
        "measured seconds whose read P99 (fio's per-second histogram log) is within the goal, "
        "the daemon's own test of a goal (95% of them). " + benchlib.REJECTION_SENTENCE,
        "",
        f"Targets (issue 11, item 4): kyber-tuned's median write IOPS ≥ {WRITE_SHARE:.0%} of the "
        "best static setting's, and its median read P99 within the goal.",
        "",
        *summary_rows(results),
    ]
    for key, heading, _ in DEVICES:
        if key in results:
            out += ["", *render_device(args, heading, results[key])]
    return "\n".join(out) + "\n"


# ------------------------------------------------------------ main
def confirm_cap(args):
    """How many confirmation candidates were allowed, as the method says it."""
    return "" if args.confirm_max is None else f" (at most {args.confirm_max} tried)"


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--full", action="store_true",
                    help="15 s measured runs and 8 s grid points instead of 10 s and 5 s")
    ap.add_argument("--device", action="append", choices=[d[0] for d in DEVICES],
                    help="only this device (repeatable; default: all three)")
    ap.add_argument("--no-write", action="store_true",
                    help="print only, leave docs/BENCHMARKS.md alone")
    # Tiny runs to check the script itself; never written to the document.
    ap.add_argument("--smoke", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    args.devices = args.device or [d[0] for d in DEVICES]
    args.mode = "smoke" if args.smoke else "full" if args.full else "quick"
    args.grid = baselines.GRID_QUICK
    args.goal_runs, args.rounds = 3, 5
    args.confirm_runs, args.confirm_max = CONFIRM_RUNS, CONFIRM_MAX
    args.ramp, args.runtime = ROUNDS_RAMP_S, (15 if args.full else 10)
    args.grid_ramp, args.grid_run = baselines.GRID_RAMP, (8 if args.full else baselines.GRID_RUN)
    if args.smoke:
        args.no_write = True
        args.grid = ((args.grid[0][0], args.grid[0][-1]), (args.grid[1][0], args.grid[1][-1]))
        args.goal_runs, args.rounds = 1, 2
        args.confirm_runs, args.confirm_max = 1, 2
        args.ramp, args.runtime, args.grid_ramp, args.grid_run = 2, 2, 1, 2
    return args


def preflight():
    benchlib.require_root("generalize.py")
    for path in (KYBER_TUNED, testdev.FLASHSIM):
        if not os.access(path, os.X_OK):
            sys.exit(f"generalize.py: {path} missing: run make (and make deps) first")


def main(argv):
    args = parse_args(argv)
    preflight()
    benchlib.catch_signals()
    t0 = time.monotonic()
    with fio.io_lock(), benchlib.steal_watch():
        results = run(args)
    command = benchlib.regenerate_command("generalize.py", argv,
                                          {(): "make bench-generalize",
                                           ("--full",): "make bench-full"})
    body = render(args, results, time.monotonic() - t0, command)
    benchlib.publish(SECTION, body, not args.no_write)
    return 1 if any(isinstance(r, str) and r.startswith("failed") for r in results.values()) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
