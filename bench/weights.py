# SPDX-License-Identifier: GPL-2.0-or-later
"""Cgroups sharing a disk by weight (issue 15): kyber-tuned beside none, Kyber alone and BFQ

Method (root; holds the machine-wide I/O lock from tests/lib/fio.py for the
whole run). Device: flashsim `flash` behind a loop device. Four cgroups of
the io controller's hierarchy (cgroup v1's blkio on these machines) with
weights 1000:500:250:100, each running one fio job of 4 KiB random I/O at
iodepth 32 (io_uring, direct; fio's cgroup= puts the job there), in three
workloads: all random reads, all random writes, 50/50 random reads and
writes. Per workload ROUNDS interleaved rounds of four configurations, each
from scheduler none and fresh depths, RUN_S seconds:

- none: scheduler none, no weights;
- Kyber alone: scheduler kyber at its default targets, no weights;
- BFQ with weights: scheduler bfq, the weights as blkio.bfq.weight (BFQ
  takes 1-1000, so these weights as they are);
- kyber-tuned: the daemon on a private bus (the tests' bus), the weights
  set with kyber-tunectl set-weight (the disk has no goal: tuned for its
  weights alone, on scheduler none).

Figures from fio's own per-second IOPS logs, over the seconds after the
first SETTLE_S: each tenant's mean IOPS, their total, and the weighted Jain
fairness index (sum x_i/w_i)^2 / (n sum (x_i/w_i)^2). Then, on kyber-tuned
alone: work conservation (two tenants stop at 12 s and come back at 22 s:
the two left against what the four did, from 3 s after the stop; the
Jain index from 3 s after the return) and a reader with weight 1000 beside
a writer with weight 100 (the reader against its weighted share of what it
does alone). Every run goes through benchlib.Rounds (a run the host
disturbed is rejected and rerun; every try is listed). Verdicts (the
issue's acceptance, medians): Jain >= 0.95 and total >= 90% of none's, per
workload; two tenants >= 90% of four within 3 s and Jain >= 0.95 within 3 s
of the return; the reader >= 80% of its weighted share. Results replace the
"weights" section of docs/BENCHMARKS.md (--no-write: stdout only).

Run from the repository root: python3 -m bench.weights (make bench-weights).
"""

import argparse
import datetime
import glob
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

from bench import benchlib
from bench.benchlib import machine, progress, rounds_log, set_static, verdict
from tests.integration.dbus_helpers import PrivateBus
from tests.lib import cgroups, fio, testdev
from tests.lib.daemon import Daemon
from tests.lib.paths import KYBER_TUNECTL, KYBER_TUNED

SECTION = "weights"
WEIGHTS = {"a": 1000, "b": 500, "c": 250, "d": 100}
QUEUE_DEPTH = 32
SETTLE_S = 3
WORKLOADS = (("random reads", "randread"), ("random writes", "randwrite"),
             ("50/50 random reads and writes", "randrw"))
JAIN_MIN, TOTAL_SHARE_MIN, READER_SHARE_MIN = 0.95, 0.90, 0.80
FIGURES = (("total", "total IOPS", benchlib.fmt_iops), ("jain", "weighted Jain", lambda v: f"{v:.3f}"))


def jain(x, w):
    v = [xi / wi for xi, wi in zip(x, w)]
    return sum(v) ** 2 / (len(v) * sum(t * t for t in v)) if any(v) else 0.0


def per_second(prefix):
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


def job(t, name, rw, log=None, extra=None):
    opts = dict(t.fio_options(name))
    if rw == "randrw":
        opts["rwmixread"] = 50
    if log:
        opts.update({"write_iops_log": log, "log_avg_msec": 1000})
    opts.update(extra or {})
    return fio.Job(name, rw, iodepth=QUEUE_DEPTH, extra=opts)


class Service:
    """kyber-tuned on a private bus, with weights set."""

    def __init__(self, dev, t, weights):
        self.bus = PrivateBus()
        self.tmp = tempfile.mkdtemp(prefix="kt-bench-weights-")
        self.d = Daemon(["--config=", f"--state-dir={self.tmp}/state", f"--runtime-dir={self.tmp}/run"],
                        env={"DBUS_SYSTEM_BUS_ADDRESS": self.bus.address})
        if not self.d.ready():
            self.stop()
            raise RuntimeError(f"kyber-tuned did not start: {self.d.stderr()}")
        env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=self.bus.address)
        for name, w in weights.items():
            subprocess.run([KYBER_TUNECTL, "set-weight", dev.name, t.rel(name), str(w)], env=env, check=True,
                           timeout=30)

    def stop(self):
        self.d.stop(signal.SIGTERM)
        self.d.close()
        self.bus.stop()
        subprocess.run(["rm", "-rf", self.tmp], check=False)


def set_bfq_weights(t, weights):
    for name, w in weights.items():
        with open(os.path.join(t.abs(name), "blkio.bfq.weight"), "w") as f:
            f.write(str(w))


def set_all_limits(t, dev, value):
    st = os.stat(dev.path)
    for name in WEIGHTS:
        for key in ("read_iops", "write_iops"):
            t.set_limit(name, os.major(st.st_rdev), os.minor(st.st_rdev), key, value)


def one_run(dev, t, rw, config, run_s):
    """One run of the four tenants: per-tenant means after SETTLE_S, total, Jain."""
    with tempfile.TemporaryDirectory(prefix="kt-bench-w-") as tmp:
        svc = None
        set_static(dev, SCHEDULER[config])
        if config == "bfq":
            set_bfq_weights(t, WEIGHTS)
        if config == "throttle":
            set_all_limits(t, dev, NEVER_BINDS)
        try:
            if config == "tuned":
                svc = Service(dev, t, WEIGHTS)
            wall0 = time.time()
            fio.run(dev.path, [job(t, n, rw, f"{tmp}/{n}") for n in WEIGHTS], runtime_s=run_s, ramp_s=0)
        finally:
            if svc:
                svc.stop()
            if config == "bfq":
                set_bfq_weights(t, dict.fromkeys(WEIGHTS, 100))
            if config == "throttle":
                set_all_limits(t, dev, 0)
            set_static(dev, "none")
        # fio's last second is logged for some jobs and not others: left out.
        late = [mean_over(per_second(f"{tmp}/{n}"), SETTLE_S + 1, run_s - 1) for n in WEIGHTS]
        out = {"total": sum(late), "jain": jain(late, list(WEIGHTS.values())),
               **{f"iops_{n}": v for n, v in zip(WEIGHTS, late)}}
        stolen = benchlib.steal_pct(wall0)
        if stolen is not None:
            out["steal_pct"] = stolen
        return out


def work_conservation(dev, t):
    """Two tenants stop at 12 s and come back at 22 s (32 s in all)."""
    with tempfile.TemporaryDirectory(prefix="kt-bench-wc-") as tmp:
        os.makedirs(f"{tmp}/back")
        svc = Service(dev, t, WEIGHTS)
        try:
            wall0 = time.time()
            jobs = [job(t, n, "randrw", f"{tmp}/{n}", {"runtime": "32s"}) for n in ("a", "b")]
            jobs += [job(t, n, "randrw", f"{tmp}/{n}", {"runtime": "12s"}) for n in ("c", "d")]
            for n in ("c", "d"):
                j = job(t, n, "randrw", f"{tmp}/back/{n}", {"startdelay": "22s", "runtime": "10s"})
                j.name = f"{n}2"
                jobs.append(j)
            fio.run(dev.path, jobs, runtime_s=32, ramp_s=0)
        finally:
            svc.stop()
        secs = {n: per_second(f"{tmp}/{n}") for n in WEIGHTS}
        for n in ("c", "d"):
            for s, v in per_second(f"{tmp}/back/{n}").items():
                secs[n][s + 22] = secs[n].get(s + 22, 0.0) + v
        four = sum(mean_over(secs[n], SETTLE_S + 1, 11) for n in WEIGHTS)
        two = mean_over(secs["a"], 16, 21) + mean_over(secs["b"], 16, 21)
        back = [mean_over(secs[n], 26, 31) for n in WEIGHTS]
        out = {"four": four, "two": two, "two_share": two / four if four else 0,
               "jain_back": jain(back, list(WEIGHTS.values()))}
        stolen = benchlib.steal_pct(wall0)
        if stolen is not None:
            out["steal_pct"] = stolen
        return out


def reader_writer(dev, run_s):
    """A reader (1000) beside a writer (100) under kyber-tuned, against the
    reader alone; judged from 10 s on."""
    with cgroups.tenants(["r", "w"]) as t, tempfile.TemporaryDirectory(prefix="kt-bench-rw-") as tmp:
        set_static(dev, "none")
        wall0 = time.time()
        alone = fio.run(dev.path, [job(t, "r", "randread")], runtime_s=10, ramp_s=0)["r"].read_iops
        svc = Service(dev, t, {"r": 1000, "w": 100})
        try:
            fio.run(dev.path, [job(t, "r", "randread", f"{tmp}/r"), job(t, "w", "randwrite", f"{tmp}/w")],
                    runtime_s=run_s, ramp_s=0)
        finally:
            svc.stop()
        reads = mean_over(per_second(f"{tmp}/r"), 11, run_s)
        writes = mean_over(per_second(f"{tmp}/w"), 11, run_s)
        share = 1000 / 1100 * alone
        out = {"alone": alone, "reads": reads, "writes": writes, "reader_share": reads / share}
        stolen = benchlib.steal_pct(wall0)
        if stolen is not None:
            out["steal_pct"] = stolen
        return out


CONFIGS = (("none", "none"), ("Kyber alone", "kyber"), ("BFQ with weights", "bfq"),
           ("blk-throttle limits that never bind", "throttle"), ("kyber-tuned with weights", "tuned"))
# The scheduler each configuration runs on (kyber-tuned with weights only
# sets cgroup limits: the disk has no goal and stays on none).
SCHEDULER = {"none": "none", "kyber": "kyber", "bfq": "bfq", "tuned": "none", "throttle": "none"}
# A read and write IOPS limit per cgroup far above what the device does:
# what blk-throttle costs by itself, the floor under kyber-tuned's limits.
NEVER_BINDS = 10_000_000


def run(args, dev):
    log = benchlib.Rounds()
    configs, not_run = benchlib.offered(dev, CONFIGS, lambda c: SCHEDULER[c[1]])
    res = {"log": log, "workloads": {}, "not_run": not_run}
    with cgroups.tenants(list(WEIGHTS)) as t:
        for title, rw in WORKLOADS:
            res["workloads"][title] = log.interleaved(
                configs, args.rounds, lambda c, rw=rw: one_run(dev, t, rw, c, args.run_s), title)
        res["wc"] = [log.run(lambda: work_conservation(dev, t), "work conservation", r + 1,
                             "kyber-tuned with weights") for r in range(args.rounds)]
    res["rw"] = [log.run(lambda: reader_writer(dev, 20), "reader beside writer", r + 1, "kyber-tuned")
                 for r in range(args.rounds)]
    return res


def render(args, res, wall, command):
    lines = [
        "## Weights: cgroups sharing a disk (the Kyber-fairness design)",
        "",
        f"Measured {datetime.datetime.now().astimezone():%Y-%m-%d %H:%M %Z} on {machine()}, "
        f"{wall / 60:.0f} min. Regenerate with `{command}` (root)." + benchlib.steal_sentence(),
        "",
        "flashsim `flash` behind a loop device. Four cgroups (cgroup v1 blkio) with weights "
        "1000:500:250:100, each running fio 4 KiB random I/O at iodepth 32 (io_uring, direct), "
        f"{args.rounds} interleaved rounds of {args.run_s} s runs per workload and configuration: none, "
        "Kyber at its defaults, BFQ with the weights (`blkio.bfq.weight`), blk-throttle read and write "
        f"IOPS limits of {NEVER_BINDS:,} on every cgroup (they never bind: what the kernel's throttling "
        "costs by itself, the floor under kyber-tuned's limits), and kyber-tuned with the weights "
        "(`kyber-tunectl set-weight`; the disk has no goal, so it stays on none). Figures over "
        f"the seconds after the first {SETTLE_S} but the last, from fio's per-second IOPS logs; "
        "weighted Jain index "
        "(sum x_i/w_i)^2 / (n sum (x_i/w_i)^2), 1 when throughput follows the weights exactly, 0.60 "
        "for equal throughput at these weights. Cells: median (min–max). " + benchlib.REJECTION_SENTENCE,
        "",
        *([res["not_run"], ""] if res.get("not_run") else []),
    ]
    verdicts = []
    for title, runs in res["workloads"].items():
        lines += [f"### {title}", "",
                  *benchlib.summary_table(runs, (
                      ("total", "total IOPS", benchlib.fmt_iops),
                      ("jain", "weighted Jain", lambda v: f"{v:.3f}"),
                      *[(f"iops_{n}", f"IOPS {n} ({w})", benchlib.fmt_iops) for n, w in WEIGHTS.items()],
                      ("steal_pct", "host steal", lambda v: f"{v:.0f}%"))), ""]
        tuned = runs["kyber-tuned with weights"]
        none_total = statistics.median(r["total"] for r in runs["none"])
        bfq = runs.get("BFQ with weights")
        bfq_total = statistics.median(r["total"] for r in bfq) if bfq else None
        j = statistics.median(r["jain"] for r in tuned)
        tot = statistics.median(r["total"] for r in tuned)
        floor = statistics.median(r["total"] for r in runs["blk-throttle limits that never bind"])
        beside_bfq = (f"{tot / bfq_total:.2f}x BFQ's; BFQ {bfq_total / none_total:.0%} of none's; "
                      if bfq_total else "")
        lines.append(f"kyber-tuned: {tot / none_total:.0%} of none's total, {beside_bfq}blk-throttle "
                     f"with limits that never bind {floor / none_total:.0%} of none's.")
        lines.append("")
        verdicts.append(verdict(j >= JAIN_MIN, f"{title}: weighted Jain >= {JAIN_MIN}, median: {j:.3f}"))
        verdicts.append(verdict(tot >= TOTAL_SHARE_MIN * none_total,
                                f"{title}: total >= {TOTAL_SHARE_MIN:.0%} of none's, median: "
                                f"{tot:,.0f} vs {none_total:,.0f} ({tot / none_total:.0%})"))
    wc = res["wc"]
    two = statistics.median(r["two_share"] for r in wc)
    jb = statistics.median(r["jain_back"] for r in wc)
    rw = res["rw"]
    rs = statistics.median(r["reader_share"] for r in rw)
    lines += [
        "### Work conservation (50/50 reads and writes, kyber-tuned)",
        "",
        "Tenants c and d stop at 12 s and come back at 22 s. The two left, from 3 s after the stop "
        "(16-21 s), against what the four did (4-11 s); the weighted Jain index of the four from 3 s "
        "after the return (26-31 s).",
        "",
        *benchlib.summary_table({"kyber-tuned with weights": wc}, (
            ("four", "four, total IOPS", benchlib.fmt_iops), ("two", "two left, total IOPS", benchlib.fmt_iops),
            ("two_share", "two / four", lambda v: f"{v:.0%}"), ("jain_back", "Jain after the return",
                                                               lambda v: f"{v:.3f}"),
            ("steal_pct", "host steal", lambda v: f"{v:.0f}%"))),
        "",
        "### A reader (weight 1000) beside a writer (weight 100)",
        "",
        "Random reads at iodepth 32 alone under none, then beside random writes at iodepth 32 under "
        "kyber-tuned with the weights (20 s, judged from 10 s on): the reader against its weighted "
        "share, 1000/1100 of what it does alone. A write costs its service time in reads.",
        "",
        *benchlib.summary_table({"kyber-tuned": rw}, (
            ("alone", "reader alone, IOPS", benchlib.fmt_iops), ("reads", "reader beside the writer",
                                                                benchlib.fmt_iops),
            ("writes", "writer", benchlib.fmt_iops), ("reader_share", "of its weighted share",
                                                      lambda v: f"{v:.0%}"),
            ("steal_pct", "host steal", lambda v: f"{v:.0f}%"))),
        "",
        *verdicts,
        verdict(two >= 0.9, f"work conservation: two tenants >= 90% of four within 3 s, median: {two:.0%}"),
        verdict(jb >= JAIN_MIN, f"work conservation: weighted Jain >= {JAIN_MIN} within 3 s of the return, "
                f"median: {jb:.3f}"),
        verdict(rs >= READER_SHARE_MIN, f"reader beside a writer: >= {READER_SHARE_MIN:.0%} of its weighted "
                f"share, median: {rs:.0%}"),
        "",
        *rounds_log(res["log"].entries(), FIGURES, title="Every run, rejected ones included",
                    label_heading="workload", fold=True),
    ]
    return "\n".join(lines) + "\n"


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--no-write", action="store_true", help="print only, leave docs/BENCHMARKS.md alone")
    ap.add_argument("--smoke", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    args.rounds, args.run_s = 3, 20
    if args.smoke:
        args.no_write = True
        args.rounds, args.run_s = 1, 10
    return args


def main(argv):
    args = parse_args(argv)
    benchlib.require_root("weights.py")
    for exe in (KYBER_TUNED, KYBER_TUNECTL):
        if not os.access(exe, os.X_OK):
            sys.exit(f"weights.py: {exe} missing: run make (and make deps) first")
    try:
        cgroups.io_hierarchy()
    except testdev.DeviceUnavailable as e:
        sys.exit(f"weights.py: {e}")
    benchlib.catch_signals()
    t0 = time.monotonic()
    with fio.io_lock(), benchlib.steal_watch(), testdev.flashsim("flash") as dev:
        res = run(args, dev)
    command = benchlib.regenerate_command("weights.py", argv, {(): "make bench-weights"})
    body = render(args, res, time.monotonic() - t0, command)
    benchlib.publish(SECTION, body, not args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
