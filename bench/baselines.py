# SPDX-License-Identifier: GPL-2.0-or-later
"""kyber-tuned beside every alternative, on the flash-model device.

Method (root; holds the machine-wide I/O lock from tests/lib/fio.py for the
whole run, so no other I/O benchmark overlaps it). fio jobs as in the Kyber
study: 4 KiB random, io_uring, direct, each job pinned to its own CPU.

1. Grid (flashsim `flash`, R1+W256): every pair of the study's read x write
   targets (quick: 4 x 4, full: 10 x 10 log-spaced over read 50 us..10 ms and
   write 20 us..100 ms); per point scheduler none -> kyber (fresh depths),
   the targets, GRID_RAMP s ramp, GRID_RUN s measured. The best static
   configuration is the one with the most write IOPS among those whose read
   P99 meets the goal. Its wall time is the cost of finding it by search.
2. Baselines (flashsim `flash`, R1+W256, goal read-p99=2ms): none,
   mq-deadline, bfq (where the kernel has them; the section says which it
   could not run), Kyber defaults, the grid's best, kyber-tuned. Rounds
   interleave the configurations (order rotated each round); every run has
   the same ramp and length; kyber-tuned starts before fio's ramp (it
   converges during it) and its CPU time and peak RSS are read from /proc.
   A run the host disturbed (CPU steal over 5%) is rejected and rerun
   (benchlib.Rounds); every try is listed below its table.
3. Convergence: kyber-tuned from a cold start (Kyber's defaults, fresh
   depths) under R1+W256, fio's per-second read histograms: the end of the
   first 1-s window whose P99 meets the goal.
4. Balanced (flash, R256+W256, mode=balanced) and optane (R1+W256,
   read-p99=2ms): none against kyber-tuned, interleaved rounds, disturbed
   runs rerun as in 2.

Results go to stdout, replace the "baselines" section of docs/BENCHMARKS.md
and draw docs/bench/grid-*.png (--no-write: stdout only). Devices, daemons
and schedulers are torn down/restored on every exit, also on SIGTERM.

Run from the repository root: python3 -m bench.baselines [--full] (make bench).
"""

import argparse
import datetime
import math
import os
import statistics
import sys
import tempfile
import time

from bench import benchlib
from bench.benchlib import (LAT_IOPS, LAT_IOPS_FIGURES, MB, REPO, Tuner, fmt_target, fmt_us,
                            machine, med, progress, rounds_log, set_static, summary_table, verdict)
from tests.lib import fio, testdev
from tests.lib.paths import KYBER_TUNED

SECTION = "baselines"
GOAL_NS = 2_000_000
# The law on Kyber, against static Kyber settings: Kyber always.
GOAL = "read-p99=2ms scheduler=kyber"
KYBER_DEFAULTS = (2_000_000, 10_000_000)  # read_lat_nsec, write_lat_nsec
GRID_QUICK = ((50_000, 300_000, 1_000_000, 10_000_000),
              (20_000, 2_000_000, 20_000_000, 100_000_000))
GRID_RAMP, GRID_RUN = 4, 5
CONVERGE_RUN = 15
CONVERGE_GOAL_S = 5  # the target: goal met within 5 s of a cold start
PNG_DIR = os.path.join(REPO, "docs", "bench")
# The flash profile (tools/flashsim/model.c): every read holds one of the
# dies for FLASH_READ_US, every write for FLASH_PROGRAM_US.
FLASH_DIES, FLASH_READ_US, FLASH_PROGRAM_US = 8, 60, 500


def log_space(lo, hi, n):
    return tuple(round(lo * (hi / lo) ** (i / (n - 1)), -3) for i in range(n))


GRID_FULL = (log_space(50_000, 10_000_000, 10), log_space(20_000, 100_000_000, 10))


# ------------------------------------------------------------ configurations
def measure(dev, cfg, js, ramp, runtime):
    """One run of a configuration: {metric: value}."""
    name, kind, arg = cfg
    tuner = Tuner([dev], arg) if kind == "tuned" else None
    try:
        if kind == "static":
            set_static(dev, *arg)
        cpu0, t0 = (tuner.cpu_s(), time.monotonic()) if tuner else (0, 0)
        wall0 = time.time()
        res = fio.run(dev.path, js, runtime_s=runtime, ramp_s=ramp)
        out = {"read_p99": res["r"].read_clat_ns[99.0], "read_iops": res["r"].read_iops,
               "write_iops": res["w"].write_iops}
        stolen = benchlib.steal_pct(wall0 + ramp)
        if stolen is not None:
            out["steal_pct"] = stolen
        if tuner:
            out["cpu_pct"] = 100 * (tuner.cpu_s() - cpu0) / (time.monotonic() - t0)
            out["rss_kib"] = tuner.rss_kib()
            out["rss_now_kib"] = tuner.rss_now_kib()
    finally:
        lines = tuner.stop() if tuner else None
    if lines:
        out["targets"] = (lines[-1]["read_target_ns"], lines[-1]["write_target_ns"])
        out["state"] = lines[-1].get("tuner", {}).get("state", "?")
        # Every scheduler the device ran while measured (scheduler=auto may switch).
        out["schedulers"] = sorted({l.get("scheduler") or "?" for l in lines})
        # The block layer's CPU per I/O the daemon sampled, last known of each.
        for key in ("original_cpu_per_io_ns", "kyber_cpu_per_io_ns"):
            seen = [l.get("tuner", {}).get(key) for l in lines]
            seen = [v for v in seen if v]
            if seen:
                out[key] = seen[-1]
    return out


def rounds(log, dev, configs, js, n, ramp, runtime, label):
    """Interleaved: each round runs every configuration, the order rotated
    by one per round; a run the host disturbed is rerun (benchlib.Rounds,
    every try in log). {config name: [run, ...]}."""
    runs = log.interleaved([(cfg[0], cfg) for cfg in configs], n,
                           lambda cfg: measure(dev, cfg, js, ramp, runtime), label)
    set_static(dev, "none")
    return runs


def grid_search(dev, grid):
    """{(read_ns, write_ns): run} and the wall time it took."""
    t0 = time.monotonic()
    out = {}
    for i, r_ns in enumerate(grid[0]):
        for w_ns in grid[1]:
            progress(f"grid: read {fmt_target(r_ns)} write {fmt_target(w_ns)} "
                     f"({len(out) + 1}/{len(grid[0]) * len(grid[1])})")
            out[(r_ns, w_ns)] = measure(dev, ("grid", "static", ("kyber", (r_ns, w_ns))),
                                        fio.pair(), GRID_RAMP, GRID_RUN)
    set_static(dev, "none")
    return out, time.monotonic() - t0


def best_static(grid, goal_ns=GOAL_NS):
    """((read_ns, write_ns), run) of the point with the most write IOPS
    among those whose read P99 meets the goal, or None."""
    meeting = {k: v for k, v in grid.items() if v["read_p99"] <= goal_ns}
    if not meeting:
        return None
    return max(meeting.items(), key=lambda kv: kv[1]["write_iops"])


def convergence(dev, n):
    """Seconds to the end of the first 1-s window meeting the goal (None:
    never), one cold start per round; and the host's CPU steal (%) in the
    first CONVERGE_GOAL_S + 1 seconds of each."""
    out, steal = [], []
    for r in range(n):
        progress(f"convergence: run {r + 1}/{n}")
        with tempfile.TemporaryDirectory(prefix="kt-bench-") as tmp:
            tuner = Tuner([dev], GOAL)
            try:
                t0 = time.time()
                fio.run(dev.path, fio.pair(read_extra=fio.hist_log(f"{tmp}/r")),
                        runtime_s=CONVERGE_RUN, ramp_s=0)
                steal.append(benchlib.steal_pct(t0, t0 + CONVERGE_GOAL_S + 1))
            finally:
                tuner.stop()
            first = None
            for ms, bins in fio.hist_windows(f"{tmp}/r", 0):
                p = fio.hist_percentile(bins, 99)
                if p is not None and p <= GOAL_NS:
                    first = ms / 1e3
                    break
            out.append(first)
    set_static(dev, "none")
    return out, steal


# ------------------------------------------------------------ report
def grid_table(grid, tuned_targets, goal_ns=GOAL_NS, rounds_name="baseline round"):
    reads, writes = sorted({k[0] for k in grid}), sorted({k[1] for k in grid})
    rows = ["| read target \\ write target | " + " | ".join(fmt_target(w) for w in writes) + " |",
            "|---|" + "---:|" * len(writes)]
    for r in reads:
        cells = []
        for w in writes:
            v = grid[(r, w)]
            mark = "**" if v["read_p99"] <= goal_ns else ""
            cells.append(f"{mark}{v['read_p99'] / 1e3:,.0f} µs / {v['write_iops']:,.0f}{mark}")
        rows.append(f"| {fmt_target(r)} | " + " | ".join(cells) + " |")
    rows += ["", "Each cell: read P99 / write IOPS; **bold** meets the goal. kyber-tuned's "
             f"final targets per {rounds_name}: " +
             ", ".join(f"{fmt_target(r)}/{fmt_target(w)}" for r, w in tuned_targets) + "."]
    return rows


def grid_steal(grid):
    """A sentence on the host's CPU steal during the grid's points."""
    vals = [v["steal_pct"] for v in grid.values() if "steal_pct" in v]
    if not vals:
        return []
    mid, _, hi = benchlib.spread(vals)
    over = sum(v > 100 * benchlib.hoststeal.DISTURBED_SHARE for v in vals)
    return ["", f"Host CPU steal per point: median {mid:.0f}%, max {hi:.0f}%; {over} of "
            f"{len(vals)} points above {100 * benchlib.hoststeal.DISTURBED_SHARE:.0f}%."]


def draw_grid(grid, tuned_targets, path_prefix):
    """Two heatmaps (read P99, write IOPS) on log axes, each cell labelled
    with its value, the cells meeting the goal outlined, kyber-tuned's final
    targets marked. Returns the PNG paths, or [] without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.colors import LogNorm
        from matplotlib.patches import Rectangle
        from matplotlib.patheffects import withStroke
    except ImportError:
        print("baselines.py: python3-matplotlib missing: no heatmaps", file=sys.stderr)
        return []
    reads, writes = sorted({k[0] for k in grid}), sorted({k[1] for k in grid})

    def edges(v):
        lg = [math.log10(x) for x in v]
        mid = [(a + b) / 2 for a, b in zip(lg, lg[1:])]
        step0 = (lg[1] - lg[0]) / 2 if len(lg) > 1 else 0.5
        step1 = (lg[-1] - lg[-2]) / 2 if len(lg) > 1 else 0.5
        return [10 ** x / 1e3 for x in [lg[0] - step0] + mid + [lg[-1] + step1]]

    xe, ye = edges(writes), edges(reads)
    small = len(writes) > 6
    paths = []
    for key, title, scale, fmt, norm in (
            ("read_p99", "read P99 (ms)", 1e6, "{:.2g}", LogNorm()),
            ("write_iops", "write kIOPS", 1e3, "{:.3g}", None)):
        z = [[grid[(r, w)][key] / scale for w in writes] for r in reads]
        fig, ax = plt.subplots(figsize=(7.2, 5.4))
        mesh = ax.pcolormesh(xe, ye, z, norm=norm, cmap="viridis", shading="flat")
        cbar = fig.colorbar(mesh, ax=ax, label=title)
        if norm is not None:
            cbar.set_ticks([t for t in (0.2, 0.5, 1, 2, 5, 10, 20, 50, 100)
                            if mesh.norm.vmin <= t <= mesh.norm.vmax])
            cbar.set_ticklabels([f"{t:g}" for t in cbar.get_ticks()])
        for i, r in enumerate(reads):
            for j, w in enumerate(writes):
                v = grid[(r, w)]
                ax.text(math.sqrt(xe[j] * xe[j + 1]), math.sqrt(ye[i] * ye[i + 1]),
                        fmt.format(v[key] / scale), ha="center", va="center",
                        fontsize=6 if small else 8, color="black",
                        path_effects=[withStroke(linewidth=2, foreground="white")])
                if v["read_p99"] <= GOAL_NS:
                    ax.add_patch(Rectangle((xe[j], ye[i]), xe[j + 1] - xe[j], ye[i + 1] - ye[i],
                                           fill=False, edgecolor="orange", lw=2))
        if tuned_targets:
            ax.plot([w / 1e3 for _, w in tuned_targets], [r / 1e3 for r, _ in tuned_targets], "rx",
                    markersize=10, mew=2, label="kyber-tuned (final targets)")
            ax.legend(loc="lower left", fontsize=8)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("write_lat_nsec (µs)")
        ax.set_ylabel("read_lat_nsec (µs)")
        ax.set_title(f"flash R1+W256: {title}; orange: read P99 ≤ 2 ms", fontsize=10)
        path = f"{path_prefix}-{key.replace('_', '-')}.png"
        fig.tight_layout()
        fig.savefig(path, dpi=90)
        plt.close(fig)
        paths.append(path)
    return paths


def fmt_conv(conv):
    return ", ".join("never" if c is None else f"{c:.1f} s" for c in conv)


def cost_of_finding(conv, grid, grid_wall):
    """Time to a configuration meeting the goal: the tuner against the grid."""
    reached = [c for c in conv if c is not None]
    if not reached or len(reached) < len(conv):
        return ["Cost of finding a configuration: kyber-tuned did not reach the goal in every "
                "cold start; no comparison."]
    worst = max(reached)
    return [f"Cost of finding a configuration that meets the goal: kyber-tuned {worst:.1f} s "
            f"(worst cold start), online, while the workload runs; the grid search "
            f"{grid_wall / 60:.1f} min of exclusive use of the device for {len(grid)} points "
            f"({grid_wall / worst:,.0f}× longer), and it must be redone when the workload changes. "
            "The study ran every grid point for 12 minutes (6 warm-up, 6 measured) and five "
            "times on its flash SSD."]


def write_ceiling(read_iops):
    """Writes per second the flash profile's dies can still program while
    they serve read_iops reads."""
    return max(0.0, FLASH_DIES - read_iops * FLASH_READ_US / 1e6) * 1e6 / FLASH_PROGRAM_US


def read_room(write_iops):
    """Reads per second the flash profile's dies can serve beside
    write_iops writes."""
    return max(0.0, FLASH_DIES - write_iops * FLASH_PROGRAM_US / 1e6) * 1e6 / FLASH_READ_US


def balanced_budget(balanced):
    """Why balanced mode's write share is what it is: the dies' time split
    between the two classes, from the medians of this run."""
    t_r, t_w = med(balanced, "kyber-tuned", "read_iops"), med(balanced, "kyber-tuned", "write_iops")
    n_r, n_w = med(balanced, "none", "read_iops"), med(balanced, "none", "write_iops")
    ceiling, room = write_ceiling(t_r), read_room(0.9 * n_w)
    text = (f"The dies' time budget ({FLASH_DIES} dies, {FLASH_READ_US} µs per read, "
            f"{FLASH_PROGRAM_US} µs per program): kyber-tuned's {t_r:,.0f} reads/s leave time for "
            f"{ceiling:,.0f} programs/s, and writes reached {t_w:,.0f} ({t_w / ceiling:.0%} of "
            f"that). Writes at 90% of none ({0.9 * n_w:,.0f}/s) leave time for {room:,.0f} "
            f"reads/s ({room / n_r:.0%} of none's {n_r:,.0f})")
    if room >= 0.9 * n_r:
        text += (", so one split meets both targets. Balanced mode keeps both targets open, "
                 "where Kyber's read domain (256 tokens against the writes' 128) takes what it "
                 "can; holding writes at 90% would need it to trim the read depth, which it "
                 "does not do.")
    else:
        text += ", so no split of this device meets both targets."
    return [text]


def steal_note(conv, conv_steal):
    """Which cold starts over the goal ran while the host took the CPUs."""
    limit = 100 * benchlib.hoststeal.DISTURBED_SHARE
    slow = [(c, st) for c, st in zip(conv, conv_steal)
            if (c is None or c > CONVERGE_GOAL_S + 0.1) and st is not None]
    if not slow:
        return ""
    hit = [st for _, st in slow if st > limit]
    return (f"; of the {len(slow)} run(s) over {CONVERGE_GOAL_S} s, {len(hit)} had more than "
            f"{limit:.0f}% host CPU steal in their first {CONVERGE_GOAL_S + 1} s")


def target_lines(flash, best, conv, conv_steal, grid_wall, n_grid, balanced, optane):
    lines = []
    tuned_p99, none_p99 = med(flash, "kyber-tuned", "read_p99"), med(flash, "none", "read_p99")
    tuned_w = med(flash, "kyber-tuned", "write_iops")
    lines.append(verdict(tuned_p99 <= GOAL_NS, f"R1+W256 on flash, read P99 ≤ 2 ms: median "
                         f"{fmt_us(tuned_p99)}" + (f", over by {fmt_us(tuned_p99 - GOAL_NS)}"
                                                   if tuned_p99 > GOAL_NS else "")))
    if best:
        bw = med(flash, "kyber best static", "write_iops")
        bp99 = med(flash, "kyber best static", "read_p99")
        why = ""
        if bp99 > GOAL_NS:
            # The grid found the point under one host, the rounds ran under
            # another: the comparison is between unequal devices.
            st = [r["steal_pct"] for r in flash["kyber best static"] if "steal_pct" in r]
            stolen = statistics.median(st) if st else None
            why = (f"; the best static point itself measured {fmt_us(bp99)} in the rounds (grid: "
                   f"{fmt_us(best[1]['read_p99'])}), over the goal: the device was slower than "
                   "during the grid"
                   + (f" (the host stole {stolen:.0f}% of the CPUs in the median run)"
                      if stolen is not None and stolen > 100 * benchlib.hoststeal.DISTURBED_SHARE
                      else "")
                   + ", and the tuner, holding the goal, throttled writes further")
        lines.append(verdict(tuned_w >= 0.9 * bw, f"write IOPS ≥ 90% of the best static "
                             f"configuration meeting the goal ({fmt_target(best[0][0])}/"
                             f"{fmt_target(best[0][1])}): {tuned_w:,.0f} vs {bw:,.0f} "
                             f"({tuned_w / bw:.0%})" + why))
    else:
        lines.append(verdict(False, "write IOPS ≥ 90% of the best static configuration: no grid "
                             "point met the goal on this run"))
    lines.append(verdict(none_p99 >= 5 * tuned_p99, f"read P99 ≥ 5× lower than scheduler none: "
                         f"{fmt_us(none_p99)} vs {fmt_us(tuned_p99)} ({none_p99 / tuned_p99:.1f}×)"))
    for key, what in (("read_iops", "read"), ("write_iops", "write")):
        t, n = med(balanced, "kyber-tuned", key), med(balanced, "none", key)
        lines.append(verdict(t >= 0.9 * n, f"R256+W256 mode=balanced, {what} IOPS ≥ 90% of none: "
                             f"{t:,.0f} vs {n:,.0f} ({t / n:.0%})"))
    t, n = med(optane, "kyber-tuned", "write_iops"), med(optane, "none", "write_iops")
    lines.append(verdict(abs(t - n) <= 0.05 * n, f"optane, write IOPS within 5% of none: "
                         f"{t:,.0f} vs {n:,.0f} ({t / n - 1:+.1%})"))
    reached = [c for c in conv if c is not None]
    worst = max(reached) if len(reached) == len(conv) else None
    # fio's 1-s windows end a few ms after each whole second: the window
    # ending at 5.004 s is the fifth second (the tests allow 5.1 s too).
    lines.append(verdict(worst is not None and worst <= CONVERGE_GOAL_S + 0.1 and n_grid >= 90,
                         f"convergence ≤ {CONVERGE_GOAL_S} s against a grid of ≥ 90 configurations: "
                         f"{'never in one run' if worst is None else f'worst {worst:.1f} s'} "
                         f"(runs: {fmt_conv(conv)}); "
                         f"the grid here had {n_grid} points and took {grid_wall / 60:.1f} min"
                         + ("" if n_grid >= 90 else " (quick mode; `make bench-full` runs 100)")
                         + steal_note(conv, conv_steal)))
    cpu = max(r["cpu_pct"] for rs in (flash, balanced, optane) for r in rs["kyber-tuned"])
    rss = max(r["rss_kib"] for rs in (flash, balanced, optane) for r in rs["kyber-tuned"])
    lines.append(verdict(cpu <= 1, f"daemon ≤ 1% of a CPU at a 1 s interval, one device: worst "
                         f"run {cpu:.2f}%"))
    lines.append(verdict(rss <= 16 * MB, f"daemon ≤ 16 MB RSS: peak {rss / MB:.1f} MB"))
    return lines


def render(args, grid, grid_wall, best, flash, conv, conv_steal, balanced, optane, log, pngs,
           command, not_run=""):
    tuned_targets = [r["targets"] for r in flash["kyber-tuned"] if "targets" in r]
    wall_s = GRID_RAMP + GRID_RUN
    out = [
        "## Baselines: kyber-tuned beside the alternatives",
        "",
        f"Measured {datetime.datetime.now().astimezone():%Y-%m-%d %H:%M %Z} on {machine()}. "
        f"Regenerate with `{command}` (root; {'full' if args.full else 'quick'} mode)."
        + benchlib.steal_sentence(),
        "",
        "Device: flashsim (tools/flashsim, FUSE + loop with direct I/O), profile `flash` "
        f"({FLASH_DIES} dies, {FLASH_READ_US} µs read, {FLASH_PROGRAM_US} µs program, reads wait "
        "behind programs) unless noted. fio: 4 KiB random, "
        "io_uring, direct; R = randread job on CPU 0, W = randwrite job on CPU 1, the number is "
        f"the iodepth. Every run: {args.ramp:g} s ramp, {args.runtime:g} s measured; "
        f"{args.rounds} interleaved rounds, order rotated each round. Cells: median (min–max). "
        "Read P99 is fio's completion latency. " + benchlib.REJECTION_SENTENCE
        + " Below each table: every run, rejected ones included.",
        "",
        f"### R1+W256, goal {GOAL}",
        "",
        *([not_run, ""] if not_run else []),
        *summary_table(flash, LAT_IOPS),
        "",
        *rounds_log(log.entries("R1+W256"), LAT_IOPS_FIGURES),
        "",
        f"Kyber defaults: {fmt_target(KYBER_DEFAULTS[0])}/{fmt_target(KYBER_DEFAULTS[1])}. "
        "Best static: the grid point below with the most write IOPS among those meeting the goal"
        + (f" ({fmt_target(best[0][0])}/{fmt_target(best[0][1])})." if best else " (none met it)."),
        "",
        f"### Grid: the study's read × write targets ({len(grid)} points, {wall_s} s each "
        f"incl. {GRID_RAMP} s ramp, {grid_wall / 60:.1f} min)",
        "",
        *grid_table(grid, tuned_targets),
        *grid_steal(grid),
        "",
        *[f"![{os.path.basename(p)}](bench/{os.path.basename(p)})" for p in pngs],
        "",
        "### Convergence from a cold start (R1+W256, Kyber defaults, fresh depths)",
        "",
        "End of the first 1-s window (fio's read histograms) whose P99 meets the goal: "
        f"{fmt_conv(conv)}"
        + (f" (host CPU steal in the first {CONVERGE_GOAL_S + 1} s of each run: "
           + ", ".join(f"{v:.0f}%" for v in conv_steal) + ")" if all(
               v is not None for v in conv_steal) else "") + ".",
        "",
        *cost_of_finding(conv, grid, grid_wall),
        "",
        "### R256+W256, mode=balanced",
        "",
        *summary_table(balanced, LAT_IOPS),
        "",
        *rounds_log(log.entries("R256+W256 balanced"), LAT_IOPS_FIGURES),
        "",
        *balanced_budget(balanced),
        "",
        f"### optane profile (no read/write interference), R1+W256, goal {GOAL}",
        "",
        *summary_table(optane, LAT_IOPS),
        "",
        *rounds_log(log.entries("optane R1+W256"), LAT_IOPS_FIGURES),
        "",
        "### Daemon cost (one device, 1 s interval, during the kyber-tuned runs above)",
        "",
        *summary_table({"kyber-tuned": flash["kyber-tuned"] + balanced["kyber-tuned"]
                        + optane["kyber-tuned"]},
                       (("cpu_pct", "CPU %", lambda v: f"{v:.2f}"),
                        ("rss_kib", "peak RSS", lambda v: f"{v / MB:.1f} MB"),
                        ("rss_now_kib", "RSS at the end", lambda v: f"{v / MB:.1f} MB"))),
        "",
        "### Targets",
        "",
        *target_lines(flash, best, conv, conv_steal, grid_wall, len(grid), balanced, optane),
    ]
    return "\n".join(out) + "\n"


# ------------------------------------------------------------ main
def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--full", action="store_true",
                    help="10 x 10 grid and 5 rounds (about 45 min) instead of 4 x 4 and 3 (about 15)")
    ap.add_argument("--rounds", type=int, help="interleaved rounds (default 3, --full 5)")
    ap.add_argument("--runtime", type=float, help="measured seconds per run (default 8, --full 10)")
    ap.add_argument("--no-write", action="store_true",
                    help="print only, leave docs/BENCHMARKS.md and docs/bench/ alone")
    args = ap.parse_args(argv)
    if args.rounds is None:
        args.rounds = 5 if args.full else 3
    if args.runtime is None:
        args.runtime = 10 if args.full else 8
    args.ramp = 5.0  # kyber-tuned converges within it (see Convergence)
    if args.rounds < 1 or args.runtime <= 0:
        ap.error("--rounds must be ≥ 1 and --runtime > 0")
    return args


def preflight():
    benchlib.require_root("baselines.py")
    for path in (KYBER_TUNED, testdev.FLASHSIM):
        if not os.access(path, os.X_OK):
            sys.exit(f"baselines.py: {path} missing: run make (and make deps) first")


def run(args):
    grid_points = GRID_FULL if args.full else GRID_QUICK
    ramp, runtime, n = args.ramp, args.runtime, args.rounds
    log = benchlib.Rounds()
    with testdev.flashsim("flash") as dev:
        grid, grid_wall = grid_search(dev, grid_points)
        best = best_static(grid)
        configs = [("none", "static", ("none",)), ("mq-deadline", "static", ("mq-deadline",)),
                   ("bfq", "static", ("bfq",)), ("kyber defaults", "static", ("kyber", KYBER_DEFAULTS))]
        if best:
            configs.append(("kyber best static", "static", ("kyber", best[0])))
        configs.append(("kyber-tuned", "tuned", GOAL))
        configs, not_run = benchlib.offered(dev, configs,
                                            lambda c: c[2][0] if c[1] == "static" else "kyber")
        flash = rounds(log, dev, configs, fio.pair(), n, ramp, runtime, "R1+W256")
        conv, conv_steal = convergence(dev, n)
        balanced = rounds(log, dev, [("none", "static", ("none",)),
                                     ("kyber-tuned", "tuned", GOAL + " mode=balanced")],
                          fio.pair(read_qd=256), n, ramp, runtime, "R256+W256 balanced")
    with testdev.flashsim("optane") as dev:
        optane = rounds(log, dev, [("none", "static", ("none",)), ("kyber-tuned", "tuned", GOAL)],
                        fio.pair(), n, ramp, runtime, "optane R1+W256")
    return grid, grid_wall, best, flash, (conv, conv_steal), balanced, optane, log, not_run


def main(argv):
    args = parse_args(argv)
    preflight()
    benchlib.catch_signals()
    with fio.io_lock(), benchlib.steal_watch():
        grid, grid_wall, best, flash, (conv, conv_steal), balanced, optane, log, not_run = run(args)
    pngs = []
    tuned_targets = [r["targets"] for r in flash["kyber-tuned"] if "targets" in r]
    if not args.no_write:
        os.makedirs(PNG_DIR, exist_ok=True)
        pngs = draw_grid(grid, tuned_targets, os.path.join(PNG_DIR, "grid"))
    command = benchlib.regenerate_command("baselines.py", argv,
                                          {(): "make bench", ("--full",): "make bench-full"})
    body = render(args, grid, grid_wall, best, flash, conv, conv_steal, balanced, optane, log, pngs,
                  command, not_run)
    benchlib.publish(SECTION, body, not args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
