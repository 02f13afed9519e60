# SPDX-License-Identifier: GPL-2.0-or-later
"""kyber-tuned through a workload shift, on ext4, across device kinds, and
what the daemon costs with 1 and 8 tuned devices.

Method (root; holds the machine-wide I/O lock from tests/lib/fio.py for the
whole run). fio jobs as in the Kyber study: 4 KiB random, io_uring, direct,
reads pinned to CPU 0 and writes to CPU 1. Goal read-p99=2ms throughout
(mode=balanced where both jobs are throughput-bound, as the study's G-5).

1. Shift (flashsim `flash`): one fio run, R1 alone -> R1+W256 -> R1 alone
   -> R256+W256, PHASE_S s each; kyber-tuned records every interval with
   --record and the plot is drawn from `kyber-tunectl replay --json`.
2. File system (flashsim `flash`, ext4): the study's section 6, R1-W256 and
   R256-W256 on two preallocated, fully written files, under the four
   extreme configurations (read 50 us / 100 ms x write 20 us / 100 ms) and
   kyber-tuned.
3. Devices: flashsim `flash` and `optane`, loop over /dev/shm, loop over the
   root file system; each of the pairs R1+W1, R1+W256, R256+W1, R256+W256
   under scheduler none, Kyber defaults (--full) and kyber-tuned.
4. Daemon cost: 1 and 8 loop-over-/dev/shm devices, each with a goal and a
   rate-limited mixed job; the daemon's CPU time over the run and its peak
   RSS from /proc.

In 2 and 3 a run the host disturbed (CPU steal over 5%) is rejected and
rerun (benchlib.Rounds); every try is listed in the section.

Results replace the "scenarios" section of docs/BENCHMARKS.md and draw
docs/bench/shift.png (--no-write: stdout only).

Run from the repository root: python3 -m bench.scenarios [--full] (make bench).
"""

import argparse
import contextlib
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from bench import benchlib
from bench.benchlib import (LAT_IOPS, LAT_IOPS_FIGURES, MB, REPO, Tuner, fmt_iops, fmt_target,
                            fmt_us, machine, progress, rounds_log, set_static, summary_table,
                            verdict)
from tests.lib import fio, testdev
from tests.lib.paths import KYBER_TUNECTL, KYBER_TUNED

SECTION = "scenarios"
GOAL_NS = 2_000_000
# The law on Kyber: Kyber always (scheduler=auto is bench/sched_choice.py's).
GOAL = "read-p99=2ms scheduler=kyber"
KYBER_DEFAULTS = (2_000_000, 10_000_000)
EXTREMES = ((50_000, 20_000), (50_000, 100_000_000), (100_000_000, 20_000),
            (100_000_000, 100_000_000))
PAIRS = ((1, 1), (1, 256), (256, 1), (256, 256))
PNG = os.path.join(REPO, "docs", "bench", "shift.png")
PHASES = ("R1", "R1+W256", "R1", "R256+W256")
HOLD = 3  # intervals in a row meeting the goal: it holds again


def goal_for(read_qd, write_qd):
    return GOAL + " mode=balanced" if read_qd > 1 and write_qd > 1 else GOAL


def measure(devs, cfg, js, ramp, runtime, filename):
    """One run: {read_p99, read_iops, write_iops[, targets]}. cfg: (kind,
    arg) with kind 'static' (arg: scheduler, targets) or 'tuned' (arg: goal)."""
    kind, arg = cfg
    tuner = Tuner(devs, arg) if kind == "tuned" else None
    lines = None
    try:
        if kind == "static":
            for dev in devs:
                set_static(dev, *arg)
        wall0 = time.time()
        res = fio.run(filename, js, runtime_s=runtime, ramp_s=ramp)
        stolen = benchlib.steal_pct(wall0 + ramp)
    finally:
        if tuner:
            lines = tuner.stop()
    out = {"read_p99": res["r"].read_clat_ns[99.0], "read_iops": res["r"].read_iops,
           "write_iops": res["w"].write_iops}
    if stolen is not None:
        out["steal_pct"] = stolen
    if lines:
        out["targets"] = (lines[-1]["read_target_ns"], lines[-1]["write_target_ns"])
        out["state"] = lines[-1].get("tuner", {}).get("state", "?")
    for dev in devs:
        set_static(dev, "none")
    return out


# ------------------------------------------------------------ 1. shift
def replay(path):
    out = subprocess.run([KYBER_TUNECTL, "replay", path, "--json"], capture_output=True,
                         text=True, timeout=60)
    if out.returncode != 0:
        raise RuntimeError(f"kyber-tunectl replay {path} failed: {out.stderr.strip()}")
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]


def shift(phase_s):
    """Flight records of one shift run and the phase boundaries (seconds
    from fio's start)."""
    bounds = [i * phase_s for i in range(len(PHASES) + 1)]
    js = [fio.randread("r1", 1, extra={"runtime": f"{bounds[3]}s"}),
          fio.randwrite("w_a", 256,
                        extra={"startdelay": f"{bounds[1]}s", "runtime": f"{phase_s}s"}),
          fio.randread("r256", 256,
                       extra={"startdelay": f"{bounds[3]}s", "runtime": f"{phase_s}s"}),
          fio.randwrite("w_b", 256,
                        extra={"startdelay": f"{bounds[3]}s", "runtime": f"{phase_s}s"})]
    progress(f"shift: {', then '.join(PHASES)}, {phase_s} s each")
    with testdev.flashsim("flash") as dev, tempfile.TemporaryDirectory(prefix="kt-bench-") as tmp:
        rec = os.path.join(tmp, "flight.pb")
        tuner = Tuner([dev], GOAL, record=rec)
        try:
            t0 = time.time()
            fio.run(dev.path, js, runtime_s=bounds[-1], ramp_s=0)
        finally:
            tuner.stop()
        records = replay(rec)
    for r in records:
        r["t"] = r["time_ns"] / 1e9 - t0
    return [r for r in records if 0 < r["t"] <= bounds[-1] + 1], bounds


def meets(record):
    return 0 < record["read"]["p99_ns"] <= GOAL_NS


def shift_summary(records, bounds):
    """Per phase: median read P99 and write IOPS over its settled second
    half, the share of intervals meeting the goal (the daemon's own read
    P99), and when the goal held again: the end of the first interval that
    starts HOLD meeting intervals in a row, in seconds from the phase start."""
    rows = []
    for i, name in enumerate(PHASES):
        lo, hi = bounds[i], bounds[i + 1]
        ph = [r for r in records if lo < r["t"] <= hi]
        half = [r for r in ph if r["t"] > (lo + hi) / 2] or ph
        met = [r for r in ph if meets(r)]
        first = next((ph[k]["t"] - lo for k in range(len(ph) - HOLD + 1)
                      if all(meets(r) for r in ph[k:k + HOLD])), None)
        rows.append({
            "phase": name, "span": (lo, hi),
            "read_p99": statistics.median(r["read"]["p99_ns"] for r in half) if half else 0,
            "write_iops": statistics.median(r["write"]["iops"] for r in half) if half else 0,
            "met_share": len(met) / len(ph) if ph else 0, "first_met": first,
            "states": sorted({r["state"] for r in half}),
            "changes": sum(1 for r in ph if r.get("changed")),
        })
    return rows


def draw_shift(records, bounds, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("scenarios.py: python3-matplotlib missing: no time series plot", file=sys.stderr)
        return None
    t = [r["t"] for r in records]
    fig, axes = plt.subplots(3, 1, figsize=(7.5, 6.4), sharex=True)
    ax = axes[0]
    ax.plot(t, [max(r["read"]["p99_ns"], 1) / 1e3 for r in records], "b.-", label="read P99")
    ax.axhline(GOAL_NS / 1e3, color="g", ls="--", label="goal 2 ms")
    ax.set_yscale("log")
    p99s = [r["read"]["p99_ns"] / 1e3 for r in records if r["read"]["p99_ns"]]
    ticks = [t for t in (20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000)
             if p99s and min(p99s) / 2 <= t <= max(p99s) * 2]
    ax.set_yticks(ticks)
    ax.set_yticklabels([f"{t:g}" for t in ticks])
    ax.minorticks_off()
    ax.set_ylabel("read P99 (µs)")
    ax.legend(loc="upper left", fontsize=8)
    ax = axes[1]
    ax.plot(t, [r["write"]["iops"] for r in records], "r.-", label="write")
    ax.plot(t, [r["read"]["iops"] for r in records], "b.-", label="read")
    ax.set_ylabel("IOPS")
    ax.legend(loc="upper left", fontsize=8)
    ax = axes[2]
    ax.step(t, [r["read_target_ns"] / 1e3 for r in records], "b-", where="post", label="read_lat_nsec")
    ax.step(t, [r["write_target_ns"] / 1e3 for r in records], "r-", where="post",
            label="write_lat_nsec")
    ax.set_yscale("log")
    ax.set_ylabel("target (µs)")
    ax.set_xlabel("seconds since the workload started")
    ax.legend(loc="upper left", fontsize=8)
    for ax in axes:
        for b in bounds[1:-1]:
            ax.axvline(b, color="grey", lw=0.8)
    for i, name in enumerate(PHASES):
        axes[0].text((bounds[i] + bounds[i + 1]) / 2, 1.02, name, ha="center", va="bottom",
                     fontsize=8, transform=axes[0].get_xaxis_transform())
    fig.suptitle("kyber-tuned on flash through a workload shift (flight recorder)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


# ------------------------------------------------------------ 2. ext4
@contextlib.contextmanager
def ext4_files(dev, size_mib):
    """ext4 on dev with two fully written files (reads must hit the device,
    not unwritten extents); unmounted on exit."""
    mnt = tempfile.mkdtemp(prefix="kt-bench-ext4-")
    mounted = False
    try:
        for cmd in (["mkfs.ext4", "-q", "-F", "-E", "nodiscard", dev.path],
                    ["mount", "-t", "ext4", dev.path, mnt]):
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
            if out.returncode != 0:
                raise RuntimeError(f"{' '.join(cmd)} failed: {out.stderr.strip()}")
        mounted = True
        files = [os.path.join(mnt, n) for n in ("read.dat", "write.dat")]
        for path in files:
            with open(path, "wb") as out:
                chunk = os.urandom(1 << 20)
                for _ in range(size_mib):
                    out.write(chunk)
                os.fsync(out.fileno())
        yield files
    finally:
        if mounted:
            out = subprocess.run(["umount", mnt], capture_output=True, text=True, timeout=60)
            if out.returncode != 0:
                print(f"scenarios.py: umount {mnt}: {out.stderr.strip()}", file=sys.stderr)
        with contextlib.suppress(OSError):
            os.rmdir(mnt)



def interleaved(log, devs, configs, js, n, ramp, runtime, filename, label):
    """{config name: [run, ...]}, n rounds, the order rotated each round; a
    run the host disturbed is rerun (benchlib.Rounds, every try in log)."""
    return log.interleaved(configs, n,
                           lambda cfg: measure(devs, cfg, js, ramp, runtime, filename), label)


def fs_label(rq, wq):
    return f"ext4 R{rq}-W{wq}"


def kind_label(kind, rq, wq):
    return f"{kind} R{rq}+W{wq}"


def filesystem(args, log):
    configs = [(f"kyber {fmt_target(r)}/{fmt_target(w)}", ("static", ("kyber", (r, w))))
               for r, w in EXTREMES]
    out = {}
    with testdev.flashsim("flash") as dev, ext4_files(dev, args.fs_file_mib) as files:
        for rq, wq in ((1, 256), (256, 256)):
            goal = goal_for(rq, wq)
            js = fio.pair(rq, wq, read_extra={"filename": files[0]},
                          write_extra={"filename": files[1]})
            out[(rq, wq)] = interleaved(log, [dev],
                                        configs + [(f"kyber-tuned {goal}", ("tuned", goal))],
                                        js, args.rounds, args.ramp, args.runtime, files[0],
                                        fs_label(rq, wq))
    return out


# ------------------------------------------------------------ 3. device kinds
DEVICE_KINDS = (("flashsim flash", lambda: testdev.flashsim("flash")),
                ("flashsim optane", lambda: testdev.flashsim("optane")),
                ("loop over /dev/shm", testdev.shm),
                ("loop over the root fs", testdev.rootfs))


def devices(args, log):
    """{device kind: {(read_qd, write_qd): {config: [run, ...]}}}."""
    out = {}
    for kind, make in DEVICE_KINDS:
        try:
            cm = make()
            dev = cm.__enter__()
        except testdev.DeviceUnavailable as e:
            print(f"scenarios.py: {kind} unavailable, skipped: {e}", file=sys.stderr)
            out[kind] = str(e)
            continue
        try:
            out[kind] = {}
            for rq, wq in PAIRS:
                configs = [("none", ("static", ("none",)))]
                if args.full:
                    configs.append(("kyber defaults", ("static", ("kyber", KYBER_DEFAULTS))))
                configs.append((f"kyber-tuned {goal_for(rq, wq)}", ("tuned", goal_for(rq, wq))))
                out[kind][(rq, wq)] = interleaved(log, [dev], configs, fio.pair(rq, wq),
                                                  args.rounds, args.ramp, args.runtime, dev.path,
                                                  kind_label(kind, rq, wq))
        finally:
            cm.__exit__(None, None, None)
    return out


# ------------------------------------------------------------ 4. daemon cost
def daemon_cost(args):
    """{n devices: {cpu_pct, rss_kib, iops}} with n loop-over-/dev/shm
    devices, each tuned, each with a rate-limited mixed job."""
    out = {}
    for n in (1, 8):
        with contextlib.ExitStack() as stack:
            devs = [stack.enter_context(testdev.shm(64)) for _ in range(n)]
            js = [fio.Job(f"d{i}", "randrw", iodepth=8, cpu=i % 2,
                          extra={"filename": d.path, "rwmixread": 50, "rate_iops": "1000,1000"})
                  for i, d in enumerate(devs)]
            progress(f"daemon cost: {n} device(s)")
            tuner = Tuner(devs, GOAL)
            try:
                cpu0, t0 = tuner.cpu_s(), time.monotonic()
                res = fio.run(devs[0].path, js, runtime_s=args.cost_s, ramp_s=0)
                cpu = tuner.cpu_s() - cpu0
                wall = time.monotonic() - t0
                rss, rss_now = tuner.rss_kib(), tuner.rss_now_kib()
            finally:
                tuner.stop()
            out[n] = {"cpu_pct": 100 * cpu / wall, "rss_kib": rss, "rss_now_kib": rss_now, "wall": wall,
                      "iops": sum(r.read_iops + r.write_iops for r in res.values())}
    return out


# ------------------------------------------------------------ report
def runs_table(runs):
    rows = summary_table(runs, LAT_IOPS)
    rows[0] += " final targets, state |"
    rows[1] += "---|"
    for i, rs in enumerate(runs.values()):
        t = [r for r in rs if "targets" in r]
        rows[2 + i] += (f" {fmt_target(t[-1]['targets'][0])}/{fmt_target(t[-1]['targets'][1])}, "
                        f"{t[-1]['state']} |" if t else " – |")
    return rows


def render_shift(rows, png, phase_s):
    out = ["### Workload shift (flashsim `flash`, goal " + GOAL + ")", "",
           f"One fio run: {', then '.join(PHASES)}, {phase_s} s each (R1 keeps running until the "
           "R256+W256 phase replaces it). From the flight recorder (`kyber-tuned --record`, "
           "`kyber-tunectl replay --json`): the daemon's own read P99 (insert → complete) per "
           f"1-s interval; medians over the second half of each phase. Goal held from: the end of "
           f"the first interval that begins {HOLD} meeting the goal in a row, from the phase "
           "start.", "",
           "| phase | read P99 | write IOPS | intervals meeting the goal | goal held from "
           "| target changes | states (second half) |",
           "|---|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        first = "never" if r["first_met"] is None else f"{r['first_met']:.0f} s"
        out.append(f"| {r['phase']} ({r['span'][0]}–{r['span'][1]} s) | {fmt_us(r['read_p99'])} | "
                   f"{fmt_iops(r['write_iops'])} | {r['met_share']:.0%} | {first} | "
                   f"{r['changes']} | {', '.join(r['states'])} |")
    if png:
        out += ["", f"![shift](bench/{os.path.basename(png)})"]
    return out


def render(args, shift_rows, png, fs, devs, cost, log, command):
    out = [
        "## Scenarios: a workload shift, ext4, device kinds, daemon cost",
        "",
        f"Measured {datetime.datetime.now().astimezone():%Y-%m-%d %H:%M %Z} on {machine()}. "
        f"Regenerate with `{command}` (root; {'full' if args.full else 'quick'} mode)."
        + benchlib.steal_sentence(),
        "",
        "fio: 4 KiB random, io_uring, direct; R = randread on CPU 0, W = randwrite on CPU 1, the "
        f"number is the iodepth. Runs: {args.ramp:g} s ramp, {args.runtime:g} s measured, "
        f"{args.rounds} interleaved round(s); cells: median (min–max). kyber-tuned's goal: "
        f"{GOAL}, or mode=balanced when both jobs are throughput-bound (the study's G-5). "
        + benchlib.REJECTION_SENTENCE + " Below each subsection: every run, rejected ones "
        "included.",
        "",
        *render_shift(shift_rows, png, args.phase_s),
        "",
        "### ext4 on flashsim `flash` (the study's section 6)",
        "",
        f"Two {args.fs_file_mib} MiB files written in full before the runs; R reads one, W "
        "writes the other. The four extreme configurations of the study beside kyber-tuned.",
    ]
    for (rq, wq), runs in fs.items():
        out += ["", f"R{rq}–W{wq}:", "", *runs_table(runs)]
    out += ["", *rounds_log(log.entries(*(fs_label(rq, wq) for rq, wq in fs)), LAT_IOPS_FIGURES,
                            label_heading="scenario")]
    out += ["", "### Device kinds", "",
            "Each job pair under scheduler none"
            + (", Kyber defaults (2 ms / 10 ms)" if args.full else "")
            + " and kyber-tuned. flashsim `optane`: no read/write interference; loop devices "
            "use direct I/O over a 256 MiB file."]
    for kind, pairs in devs.items():
        out += ([] if out[-1] == "" else [""]) + [f"#### {kind}", ""]
        if isinstance(pairs, str):
            out.append(f"Skipped: {pairs}.")
            continue
        for (rq, wq), runs in pairs.items():
            out += [f"R{rq}+W{wq}:", "", *runs_table(runs), ""]
        out += [*rounds_log(log.entries(*(kind_label(kind, rq, wq) for rq, wq in pairs)),
                            LAT_IOPS_FIGURES, label_heading="scenario"), ""]
    out += ["### Daemon cost with 1 and 8 tuned devices", "",
            "Loop devices over 64 MiB files in /dev/shm, each with the goal and its own fio job "
            "(randrw 50/50, iodepth 8, 1,000 read + 1,000 write IOPS); kyber-tuned at a 1 s "
            "interval. CPU: the daemon's utime + stime over the run (BPF programs run in the "
            "I/O's context and are counted in the observer-cost section). Peak RSS: VmHWM, reached "
            "at start while libbpf parses the kernel's BTF; RSS at the end: VmRSS.", "",
            "| devices | run | I/O rate | daemon CPU | daemon peak RSS | RSS at the end |",
            "|---:|---:|---:|---:|---:|---:|"]
    for n, c in cost.items():
        out.append(f"| {n} | {c['wall']:.0f} s | {fmt_iops(c['iops'])} IOPS | {c['cpu_pct']:.2f}% | "
                   f"{c['rss_kib'] / MB:.1f} MB | {c['rss_now_kib'] / MB:.1f} MB |")
    out += ["", "### Targets", ""]
    for n, c in cost.items():
        out.append(verdict(c["cpu_pct"] <= 1, f"daemon ≤ 1% of a CPU with {n} tuned device(s): "
                           f"{c['cpu_pct']:.2f}%"))
        out.append(verdict(c["rss_kib"] <= 16 * MB, f"daemon ≤ 16 MB RSS with {n} tuned "
                           f"device(s): {c['rss_kib'] / MB:.1f} MB"))
    return "\n".join(out) + "\n"


# ------------------------------------------------------------ main
def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--full", action="store_true",
                    help="3 rounds of 10 s runs, Kyber defaults in the device matrix, 60 s cost "
                         "runs (about 50 min) instead of 1 round of 5 s (about 10 min)")
    ap.add_argument("--no-write", action="store_true",
                    help="print only, leave docs/BENCHMARKS.md and docs/bench/ alone")
    args = ap.parse_args(argv)
    args.rounds, args.ramp, args.runtime = (3, 5, 10) if args.full else (1, 3, 5)
    args.phase_s = 20 if args.full else 15
    args.cost_s = 60 if args.full else 20
    args.fs_file_mib = 64
    return args


def preflight():
    benchlib.require_root("scenarios.py")
    for path in (KYBER_TUNED, KYBER_TUNECTL, testdev.FLASHSIM):
        if not os.access(path, os.X_OK):
            sys.exit(f"scenarios.py: {path} missing: run make (and make deps) first")
    for tool in ("mkfs.ext4", "fio"):
        if not shutil.which(tool, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin"):
            sys.exit(f"scenarios.py: {tool} missing: run make deps first")


def main(argv):
    args = parse_args(argv)
    preflight()
    benchlib.catch_signals()
    log = benchlib.Rounds()
    with fio.io_lock(), benchlib.steal_watch():
        records, bounds = shift(args.phase_s)
        fs = filesystem(args, log)
        devs = devices(args, log)
        cost = daemon_cost(args)
    png = None
    if not args.no_write:
        os.makedirs(os.path.dirname(PNG), exist_ok=True)
        png = draw_shift(records, bounds, PNG)
    command = benchlib.regenerate_command("scenarios.py", argv,
                                          {(): "make bench", ("--full",): "make bench-full"})
    body = render(args, shift_summary(records, bounds), png, fs, devs, cost, log, command)
    benchlib.publish(SECTION, body, not args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
