# SPDX-License-Identifier: GPL-2.0-or-later
"""Per-model profiles: does a learned starting point converge faster? (issue 17)

Method (root; holds the machine-wide I/O lock from tests/lib/fio.py for the
whole run). Device: flashsim `flash` behind a loop device (model "loop").
Workload: tests.lib.fio.pair(), R1+W256 (4 KiB random, io_uring, direct,
reader on CPU 0, writer on CPU 1). Goal GOAL (scheduler=auto, the default:
the device starts on none and moves to Kyber once reads miss).

1. Learn: kyber-tuned in service mode on a private bus (the tests' bus,
   tests/integration/dbus_helpers.py) with the goal, LEARN_S of the
   workload, then `kyber-tunectl export-profile`: the profile.
2. ROUNDS interleaved rounds of two cold starts: kyber-tuned --foreground
   started fresh from scheduler none (no state, no profile directory) and
   the same with --profile-dir holding only the exported profile. The
   workload starts with the daemon and runs RUN_S.

Convergence time: the start of the first COVERED consecutive 1-s windows
of fio's own read latency histograms whose P99 all meet the goal, in
seconds from the workload's start (fio's clock); a run that never gets
there counts as RUN_S. Every run goes through benchlib.Rounds (a run the
host disturbed is rejected and rerun; every try is listed). Verdict (the
issue's acceptance): the median with the profile lower than without.
Results replace the "profiles" section of docs/BENCHMARKS.md (--no-write:
stdout only).

Run from the repository root: python3 -m bench.profiles (make bench-profiles).
"""

import argparse
import datetime
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

from bench import benchlib
from bench.benchlib import Tuner, machine, plural, progress, rounds_log, set_static, verdict
from tests.integration.dbus_helpers import PrivateBus
from tests.lib import fio, testdev
from tests.lib.daemon import Daemon
from tests.lib.paths import KYBER_TUNECTL, KYBER_TUNED

SECTION = "profiles"
GOAL = "read-p99=2ms"
COVERED = 5          # consecutive 1-s windows meeting the goal: converged
FIGURES = (("convergence_s", "converged after", lambda v: f"{v:g} s"),
           ("windows_met", "1-s windows met", lambda v: f"{v:g}"))


def converged_after(prefix, goal_ns, run_s):
    """Seconds from fio's start to the first COVERED met windows in a row."""
    p99 = [p for _, p in fio.window_p99(prefix)]
    for i in range(len(p99) - COVERED + 1):
        if all(p <= goal_ns for p in p99[i:i + COVERED]):
            return i, sum(p <= goal_ns for p in p99)
    return run_s, sum(p <= goal_ns for p in p99)


def learn(dev, args):
    """The profile kyber-tuned exports after LEARN_S of the workload."""
    bus = PrivateBus()
    tmp = tempfile.mkdtemp(prefix="kt-bench-profile-")
    d = None
    try:
        set_static(dev, "none")
        d = Daemon(["--config=", f"--state-dir={tmp}/state", f"--runtime-dir={tmp}/run", "--profile-dir="],
                   env={"DBUS_SYSTEM_BUS_ADDRESS": bus.address})
        if not d.ready():
            raise RuntimeError(f"kyber-tuned did not start: {d.stderr()}")
        env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=bus.address)
        subprocess.run([KYBER_TUNECTL, "set-goal", dev.name, GOAL], env=env, check=True, timeout=30)
        fio.run(dev.path, fio.pair(), runtime_s=args.learn_s, ramp_s=0)
        res = subprocess.run([KYBER_TUNECTL, "export-profile", dev.name], env=env, capture_output=True,
                             text=True, timeout=30)
        if res.returncode != 0:
            raise RuntimeError(f"export-profile failed: {res.stderr}")
        return res.stdout
    finally:
        if d:
            d.stop(signal.SIGTERM)
            d.close()
        bus.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def cold_start(dev, args, profile_dir):
    """One cold start: {convergence_s, windows_met}."""
    with tempfile.TemporaryDirectory(prefix="kt-bench-conv-") as tmp:
        extra = [f"--profile-dir={profile_dir or ''}"]
        tuner = Tuner([dev], GOAL, extra_args=extra)
        try:
            wall0 = time.time()
            fio.run(dev.path, fio.pair(read_extra=fio.hist_log(f"{tmp}/r")), runtime_s=args.run_s, ramp_s=0)
        finally:
            lines = tuner.stop()
        conv, met = converged_after(f"{tmp}/r", args.goal_ns, args.run_s)
        out = {"convergence_s": conv, "windows_met": met,
               "schedulers": sorted({l.get("scheduler") or "?" for l in lines})}
        stolen = benchlib.steal_pct(wall0)
        if stolen is not None:
            out["steal_pct"] = stolen
        return out


def run(args, dev):
    log = benchlib.Rounds()
    progress(f"learning: {args.learn_s} s of R1+W256 with {GOAL}")
    profile = learn(dev, args)
    pdir = tempfile.mkdtemp(prefix="kt-bench-profiles.d-")
    try:
        with open(os.path.join(pdir, "fleet.profile"), "w") as f:
            f.write(profile)
        configs = [("without a profile", None), ("with the exported profile", pdir)]
        runs = log.interleaved(configs, args.rounds, lambda p: cold_start(dev, args, p), "cold start")
    finally:
        shutil.rmtree(pdir, ignore_errors=True)
    set_static(dev, "none")
    return {"log": log, "profile": profile, "runs": runs}


def render(args, res, wall, command):
    without, with_ = (res["runs"][k] for k in ("without a profile", "with the exported profile"))
    m_without = statistics.median(r["convergence_s"] for r in without)
    m_with = statistics.median(r["convergence_s"] for r in with_)
    rows = ["| configuration | converged after, median (min–max) | 1-s windows met of "
            f"{args.run_s}, median |", "|---|---|---|"]
    for name, runs in res["runs"].items():
        c = [r["convergence_s"] for r in runs]
        rows.append(f"| {name} | {statistics.median(c):g} s ({min(c):g}–{max(c):g}) | "
                    f"{statistics.median(r['windows_met'] for r in runs):g} |")
    return "\n".join([
        "## Per-model profiles: convergence from a cold start",
        "",
        f"Measured {datetime.datetime.now().astimezone():%Y-%m-%d %H:%M %Z} on {machine()}, "
        f"{wall / 60:.0f} min. Regenerate with `{command}` (root)." + benchlib.steal_sentence(),
        "",
        f"flashsim `flash` behind a loop device; fio R1+W256 (4 KiB random, io_uring, direct); goal "
        f"`{GOAL}` (scheduler=auto: none until reads miss). The profile was exported with "
        f"`kyber-tunectl export-profile` after {args.learn_s} s of the same workload; then "
        f"{args.rounds} interleaved rounds of two cold starts ({args.run_s} s each, daemon and workload "
        "started together from scheduler none, no state): without a profile, and with `--profile-dir` "
        "holding the exported one. Converged: the first of "
        f"{COVERED} consecutive 1-s windows whose read P99 (fio's own histograms) meets the goal, in "
        f"seconds from the workload's start; never: {args.run_s} s. " + benchlib.REJECTION_SENTENCE,
        "",
        "The exported profile:",
        "",
        *["    " + l for l in res["profile"].rstrip("\n").split("\n")],
        "",
        *rows, "",
        verdict(m_with < m_without, f"median convergence with the profile lower than without: "
                f"{m_with:g} s vs {m_without:g} s"), "",
        *rounds_log(res["log"].entries(), FIGURES, title="Every run, rejected ones included",
                    label_heading="phase", fold=False),
    ]) + "\n"


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--no-write", action="store_true", help="print only, leave docs/BENCHMARKS.md alone")
    ap.add_argument("--smoke", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    args.rounds, args.learn_s, args.run_s = 5, 40, 30
    args.goal_ns = 2_000_000
    if args.smoke:
        args.no_write = True
        args.rounds, args.learn_s, args.run_s = 1, 25, 12
    return args


def main(argv):
    args = parse_args(argv)
    benchlib.require_root("profiles.py")
    for exe in (KYBER_TUNED, KYBER_TUNECTL):
        if not os.access(exe, os.X_OK):
            sys.exit(f"profiles.py: {exe} missing: run make (and make deps) first")
    benchlib.catch_signals()
    t0 = time.monotonic()
    with fio.io_lock(), benchlib.steal_watch(), testdev.flashsim("flash") as dev:
        res = run(args, dev)
    command = benchlib.regenerate_command("profiles.py", argv, {(): "make bench-profiles"})
    body = render(args, res, time.monotonic() - t0, command)
    benchlib.publish(SECTION, body, not args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
