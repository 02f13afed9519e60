# SPDX-License-Identifier: GPL-2.0-or-later
"""What does kyber-tuned's BPF observer cost? Compared with biolatency.

Method (root; holds the machine-wide I/O lock from tests/lib/fio.py for the
whole run, so no other I/O benchmark overlaps it):

Device: loop with direct I/O over a 256 MiB file in /dev/shm (fast, no real
hardware in the way, so BPF overhead is as visible as it gets). Workload R256:
fio randread, 4 KiB, iodepth 256, io_uring, direct, pinned to CPU 0.

1. Per-event cost. With kernel.bpf_stats_enabled=1, start the tool
   (`kyber-tuned --observe DEV`, or Debian's libbpf-tools `biolatency -d DEV`,
   and `biolatency -Q -d DEV`, which also hooks insert as kyber-tuned does),
   find its programs through /proc/PID/fdinfo ("prog_id:" lines, so only
   programs of that very process count; ours are also matched by name),
   snapshot run_cnt/run_time_ns (bpftool -j prog show) and the device's
   completed I/Os, run R256, snapshot again. ns/event = delta run_time_ns /
   delta run_cnt per program; ns per I/O = sum over programs / completed I/Os.
   Once with scheduler none (the test device's default) and once with kyber
   (which adds the insert and Kyber tracepoints). The counts include the
   programs' early exits for other devices' I/O (negligible when idle).
2. IOPS loss, under none and under kyber. bpf_stats off (the statistics cost
   time themselves). Rounds of baseline, kyber-tuned, baseline, biolatency,
   the order rotated by one each round; each run is R256 with ramp, the tool
   started (and attached) before fio and stopped after it. Reported: median IOPS and min-max per
   configuration, loss = 1 - median(with) / median(baseline). A run the
   host disturbed (CPU steal over 5%) is rejected and rerun
   (benchlib.Rounds); every try is listed.
3. Memory. The per-CPU maps kyber-tuned holds (fdinfo: type, value size):
   what they take per CPU at the default MaxDevices (preallocated).

The results go to stdout and replace the observer-cost section of
docs/BENCHMARKS.md (--no-write: stdout only). bpf_stats_enabled, the daemons
and the device are restored/stopped/torn down on every exit, also on SIGTERM.

Run from the repository root: python3 -m bench.observer_cost (make bench-observer).
"""

import argparse
import contextlib
import datetime
import functools
import glob
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

from bench import benchlib
from bench.benchlib import machine, verdict
from tests.lib import fio, testdev
from tests.lib.daemon import Daemon
from tests.lib.paths import KYBER_TUNED

BIOLATENCY = "/usr/sbin/biolatency"
SECTION = "observer-cost"
STATS_SYSCTL = "/proc/sys/kernel/bpf_stats_enabled"
OUR_PROGS = ("btf_rq_insert", "btf_rq_issue", "btf_rq_requeue", "btf_rq_merge",
             "btf_rq_complete", "btf_kyber_adjust",
             "btf_kyber_throttled", "btf_sched_waking", "btf_sched_switch")
# The per-CPU maps with a value per device (sized for --observe's one
# device, scaled to MaxDevices below); the others have a fixed size.
PER_DEVICE_MAPS = ("dev_stats",)
SCHEDULERS = ("none", "kyber")
ROUND = ("baseline", "kyber-tuned", "baseline", "biolatency")
# Issue 2's acceptance targets for the observer: at most 150 ns of BPF
# time per event for each program (bpf_stats run_time_ns / run_cnt) and
# at most 3% R256 IOPS loss on the /dev/shm loop under none (Kyber's
# bound, from issue 16, is below).  A program that ran only a few times
# is judged too, on its mean; its line gives its events per I/O, which is
# what weighs its cost in the cost per I/O below.
TARGET_NS_PER_EVENT = 150
TARGET_LOSS = 0.03
# Issue 16: half of biolatency's BPF time per I/O under kyber (where Kyber
# stamps every request), no more than it under none; at most 5% IOPS loss
# under kyber; at most 256 KiB of per-CPU maps at the default 16 devices.
TARGET_KYBER_VS_PEER = 0.5
TARGET_KYBER_LOSS = 0.05
TARGET_PERCPU_BYTES = 256 * 1024
DEFAULT_MAX_DEVICES = 16  # kyber-tuned.conf(5) MaxDevices=
PERCPU_MAP_TYPES = {5: "percpu_hash", 6: "percpu_array", 10: "lru_percpu_hash"}
DEVICE_MIB = 256
ATTACH_TIMEOUT_S = 20


# ------------------------------------------------------------ the tools
def fdinfo(pid):
    """The fields of every fd of a process (/proc/PID/fdinfo), one dict each."""
    for path in glob.glob(f"/proc/{pid}/fdinfo/*"):
        try:
            with open(path) as f:
                yield dict(line.split(":", 1) for line in f if ":" in line)
        except OSError:
            continue  # fd closed meanwhile


def fdinfo_prog_ids(pid):
    """BPF programs a process holds: {prog_id: attached?} from its fdinfo."""
    progs = {}
    for fields in fdinfo(pid):
        if "prog_id" in fields:
            prog_id = int(fields["prog_id"])
            progs[prog_id] = progs.get(prog_id, False) or "link_id" in fields
    return progs


@contextlib.contextmanager
def run_observer(dev):
    """kyber-tuned --observe DEV, yields its PID once it notified READY=1."""
    d = Daemon(["--observe", dev.name, "--interval", "1s"], stdout=subprocess.DEVNULL)
    try:
        if not d.ready(ATTACH_TIMEOUT_S):
            raise RuntimeError(f"kyber-tuned exited: {d.stderr().strip()}")
        yield d.proc.pid
    finally:
        d.stop()
        d.close()


@contextlib.contextmanager
def run_biolatency(dev, queued=False):
    """biolatency -d DEV 60 (-Q: from insert, queue time included, as
    kyber-tuned's total latency), yields its PID once all its programs are
    attached (a link fd for every program fd)."""
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen([BIOLATENCY, *(["-Q"] if queued else []), "-d", dev.name, "60"],
                                stdout=subprocess.DEVNULL, stderr=err)
        try:
            deadline = time.monotonic() + ATTACH_TIMEOUT_S
            while True:
                progs = fdinfo_prog_ids(proc.pid)
                if progs and all(progs.values()):
                    break
                if proc.poll() is not None or time.monotonic() > deadline:
                    err.seek(0)
                    raise RuntimeError(f"biolatency did not attach: {err.read().strip()}")
                time.sleep(0.05)
            yield proc.pid
        finally:
            stop_process(proc)


def stop_process(proc):
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)  # biolatency's clean exit
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


TOOLS = {"kyber-tuned": run_observer, "biolatency": run_biolatency,
         "biolatency -Q": functools.partial(run_biolatency, queued=True)}


# ------------------------------------------------------------ measuring
def r256(dev, runtime_s, ramp_s):
    job = fio.randread("r256", 256)
    return fio.run(dev.path, [job], runtime_s=runtime_s, ramp_s=ramp_s)["r256"]


def prog_stats(ids):
    """{id: (name, run_cnt, run_time_ns)} for the given program ids."""
    out = subprocess.run(["bpftool", "-j", "prog", "show"], check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    return {p["id"]: (p.get("name", "?"), p.get("run_cnt", 0), p.get("run_time_ns", 0))
            for p in json.loads(out) if p["id"] in ids}


def completed_ios(dev):
    with open(f"{dev.sysfs}/stat") as f:
        fields = f.read().split()
    return int(fields[0]) + int(fields[4])  # reads + writes completed


def percpu_maps(pid):
    """[(map name, value size in bytes)] of the per-CPU maps a process holds."""
    sizes = {int(f["map_id"]): int(f["value_size"]) for f in fdinfo(pid)
             if int(f.get("map_type", -1)) in PERCPU_MAP_TYPES}
    out = subprocess.run(["bpftool", "-j", "map", "show"], check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    names = {m["id"]: m.get("name", "?") for m in json.loads(out)}
    return [(names.get(i, "?"), v) for i, v in sorted(sizes.items())]


def measure_memory(dev):
    with run_observer(dev) as pid:
        return percpu_maps(pid)


def tool_programs(tool, pid):
    ids = set(fdinfo_prog_ids(pid))
    if tool != "kyber-tuned":
        return ids
    ours = {i for i, (name, _, _) in prog_stats(ids).items() if name in OUR_PROGS}
    if len(ours) != len(OUR_PROGS):
        raise RuntimeError(f"kyber-tuned (PID {pid}) holds {len(ours)} of the "
                           f"{len(OUR_PROGS)} expected programs")
    return ours


def measure_cost(dev, tool, runtime_s, ramp_s):
    """Per-program events and ns/event of one tool during one R256 run."""
    with TOOLS[tool](dev) as pid:
        ids = tool_programs(tool, pid)
        before, ios0 = prog_stats(ids), completed_ios(dev)
        r256(dev, runtime_s, ramp_s)
        after, ios1 = prog_stats(ids), completed_ios(dev)
    progs = []
    for i in sorted(ids):
        name, cnt, ns = after[i]
        progs.append((name, cnt - before[i][1], ns - before[i][2]))
    return {"tool": tool, "scheduler": dev.scheduler(), "progs": progs, "ios": ios1 - ios0}


def set_stats(value):
    with open(STATS_SYSCTL, "w") as f:
        f.write(str(value))


def measure_iops(dev, log, rounds, runtime_s, ramp_s):
    """{configuration: [IOPS of each run]} and {configuration: [host steal %
    of each run]}, runs interleaved and rotated; a run the host disturbed is
    rerun (benchlib.Rounds, every try in log)."""
    def one(name):
        tool = TOOLS.get(name)
        with tool(dev) if tool else contextlib.nullcontext():
            t0 = time.time()
            out = {"iops": r256(dev, runtime_s, ramp_s).read_iops}
            stolen = benchlib.steal_pct(t0 + ramp_s)
        if stolen is not None:
            out["steal_pct"] = stolen
        print(f"  {name:12} {out['iops']:10.0f} IOPS", file=sys.stderr)
        return out

    runs = log.interleaved([(name, name) for name in ROUND], rounds, one,
                           f"IOPS, scheduler {dev.scheduler()}")
    iops = {name: [r["iops"] for r in rs] for name, rs in runs.items()}
    steal = {name: [r["steal_pct"] for r in rs if "steal_pct" in r] for name, rs in runs.items()}
    return iops, steal


# ------------------------------------------------------------ reporting
def ns_per_event(cnt, ns):
    return ns / cnt if cnt else None


def fmt_ns(v):
    return "–" if v is None else f"{v:.0f}"


def cost_table(costs):
    rows = ["| tool | scheduler | program | events | events per I/O | ns/event |",
            "|---|---|---|---:|---:|---:|"]
    for c in costs:
        ios = max(c["ios"], 1)
        for name, cnt, ns in c["progs"]:
            rows.append(f"| {c['tool']} | {c['scheduler']} | {name} | {cnt} | "
                        f"{cnt / ios:.2f} | {fmt_ns(ns_per_event(cnt, ns))} |")
        cnt = sum(p[1] for p in c["progs"])
        ns = sum(p[2] for p in c["progs"])
        rows.append(f"| {c['tool']} | {c['scheduler']} | **all, per I/O** ({c['ios']} I/Os) "
                    f"| {cnt} | {cnt / ios:.2f} | **{ns / ios:.0f} ns/I/O** |")
    return rows


def iops_summary(iops):
    base = statistics.median(iops["baseline"])
    out = {}
    for name, runs in iops.items():
        med = statistics.median(runs)
        out[name] = (med, min(runs), max(runs), 1 - med / base)
    return out


def iops_table(iops, summary, steal):
    rows = ["| configuration | runs | median IOPS | min–max IOPS | loss vs baseline "
            "| host steal (median, max) |",
            "|---|---:|---:|---:|---:|---:|"]
    for name, (med, lo, hi, loss) in summary.items():
        loss_s = "–" if name == "baseline" else f"{loss * 100:.2f}%"
        st = steal.get(name)
        st_s = f"{statistics.median(st):.0f}%, {max(st):.0f}%" if st else "–"
        rows.append(f"| {name} | {len(iops[name])} | {med:.0f} | {lo:.0f}–{hi:.0f} | {loss_s} "
                    f"| {st_s} |")
    return rows


def per_io_ns(costs, tool, scheduler):
    c = next(c for c in costs if c["tool"] == tool and c["scheduler"] == scheduler)
    return sum(p[2] for p in c["progs"]) / max(c["ios"], 1)


def loss_lines(summary):
    """IOPS-loss verdicts, per scheduler: against biolatency, and the
    absolute bounds (the older 3% under none, issue 16's 5% under kyber)."""
    lines = []
    for sched, bound in (("none", TARGET_LOSS), ("kyber", TARGET_KYBER_LOSS)):
        sm = summary[sched]
        loss, peer_loss = sm["kyber-tuned"][3], sm["biolatency"][3]
        med, lo, hi, _ = sm["baseline"]
        lines.append(verdict(loss <= bound, f"≤ {bound * 100:.0f}% IOPS loss ({sched}): "
                             f"kyber-tuned {loss * 100:.2f}%" +
                             (f", over by {(loss - bound) * 100:.2f} points" if loss > bound else "")))
        lines.append(verdict(loss <= peer_loss, f"no more than biolatency, IOPS loss ({sched}): "
                             f"kyber-tuned {loss * 100:.2f}%, biolatency {peer_loss * 100:.2f}%" +
                             (f", over by {(loss - peer_loss) * 100:.2f} points" if loss > peer_loss else "")
                             + f" (the baseline's min–max spread is {(hi - lo) / med * 100:.1f}% of "
                             "its median: smaller differences are within noise)"))
    return lines


def memory_lines(memory):
    """The per-CPU maps of `--observe DEV`, those per device (sized for its
    one device) scaled to the daemon's default MaxDevices."""
    # The kernel rounds per-CPU values to 8 bytes.
    total = sum((v + 7) // 8 * 8 * (DEFAULT_MAX_DEVICES if name in PER_DEVICE_MAPS else 1)
                for name, v in memory)
    parts = ", ".join(f"{name}: {v} B" + (" per device" if name in PER_DEVICE_MAPS else "")
                      for name, v in memory) or "none"
    return [verdict(total <= TARGET_PERCPU_BYTES,
                    f"≤ {TARGET_PERCPU_BYTES // 1024} KiB of per-CPU maps per CPU at the default "
                    f"MaxDevices={DEFAULT_MAX_DEVICES}: {total / 1024:.1f} KiB "
                    f"({parts}, preallocated for every device the maps are sized for)")]


def target_lines(costs, summary, memory):
    ours = [(ns_per_event(cnt, ns), name, c["scheduler"], cnt / max(c["ios"], 1))
            for c in costs if c["tool"] == "kyber-tuned" for name, cnt, ns in c["progs"] if cnt]
    worst = max(ours)
    over = [f"{n} ({s}, {per_io:.2g}/I/O) {v:.0f} ns" for v, n, s, per_io in sorted(ours, reverse=True)
            if v > TARGET_NS_PER_EVENT]
    lines = [verdict(not over, f"≤ {TARGET_NS_PER_EVENT} ns per event for every kyber-tuned "
                     f"program: worst {worst[1]} ({worst[2]}) {worst[0]:.0f} ns" +
                     (f", over by {worst[0] - TARGET_NS_PER_EVENT:.0f} ns. Over target: "
                      + ", ".join(over) if over else ""))]
    for sched, factor in (("kyber", TARGET_KYBER_VS_PEER), ("none", 1.0)):
        ours_ns = per_io_ns(costs, "kyber-tuned", sched)
        peer_ns = per_io_ns(costs, "biolatency", sched)
        what = "half of biolatency's" if factor < 1 else "no more than biolatency's"
        lines.append(verdict(ours_ns <= factor * peer_ns, f"{what} BPF time per I/O ({sched}): "
                             f"kyber-tuned {ours_ns:.0f} ns, biolatency {peer_ns:.0f} ns "
                             f"({ours_ns / peer_ns:.2f}×)"))
        peer_q = per_io_ns(costs, "biolatency -Q", sched)
        lines.append(verdict(ours_ns <= peer_q, f"no more than biolatency -Q, BPF time per I/O "
                             f"({sched}): kyber-tuned {ours_ns:.0f} ns, biolatency -Q {peer_q:.0f} ns"))
    lines += loss_lines(summary)
    lines += memory_lines(memory)
    peer = sorted((ns_per_event(cnt, ns), name, c["tool"], c["scheduler"]) for c in costs
                  if c["tool"].startswith("biolatency") for name, cnt, ns in c["progs"] if cnt > 1000)
    if peer:
        lo, hi = peer[0], peer[-1]
        # biolatency -Q's issue program returns at once when the queue has
        # an elevator (the insert program took the timestamp): the cost of
        # running any program on this machine, bpf_stats included.
        floor = (f" The cheapest, {lo[2]}'s {lo[1]} with {lo[3]} ({lo[0]:.0f} ns), only reads the "
                 "request and returns: what running any program costs here."
                 if lo[2] == "biolatency -Q" and lo[1].startswith("block_rq_issue")
                 and lo[3] != "none" else "")
        lines += ["", f"On this machine biolatency's own programs take {lo[0]:.0f}–{hi[0]:.0f} ns "
                  "per event in the same run."
                  + floor + " What one event costs varies with the host's CPU and its "
                  "virtualization, so the comparison that carries to other machines is the one "
                  "with biolatency above."]
    return lines


def biolatency_version():
    res = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "libbpf-tools"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return res.stdout.strip() or "unknown version"


def render(args, costs, iops, steal, log, memory, command):
    summary = {sched: iops_summary(iops[sched]) for sched in SCHEDULERS}
    iops_sections = []
    for sched in SCHEDULERS:
        iops_sections += [
            f"### IOPS (scheduler {sched}, bpf_stats off; {args.rounds} rounds of "
            f"{' → '.join(ROUND)}, order rotated each round; {args.runtime:g} s runs after "
            f"{args.ramp:g} s ramp)",
            "",
            *iops_table(iops[sched], summary[sched], steal[sched]),
            "",
        ]
    return "\n".join([
        "## Observer cost",
        "",
        f"Measured {datetime.datetime.now().astimezone():%Y-%m-%d %H:%M %Z} on {machine()}. "
        f"Regenerate with `{command}` (root)." + benchlib.steal_sentence(),
        "",
        f"Device: loop (direct I/O) over a {DEVICE_MIB} MiB file in /dev/shm. Workload R256: "
        "fio randread, 4 KiB, iodepth 256, io_uring, direct, pinned to CPU 0. "
        f"Peer: Debian libbpf-tools {biolatency_version()}, `biolatency -d DEV 60`. "
        "kyber-tuned: `kyber-tuned --observe DEV`.",
        "",
        f"### Per-event cost (bpf_stats run_time_ns / run_cnt; one {args.runtime:g} s R256 run "
        f"after {args.ramp:g} s ramp per tool and scheduler)",
        "",
        *cost_table(costs),
        "",
        *iops_sections,
        benchlib.REJECTION_SENTENCE,
        "",
        *benchlib.rounds_log(log.entries(), (("iops", "IOPS", lambda v: f"{v:.0f}"),),
                             label_heading="measurement"),
        "",
        "### Targets",
        "",
        *target_lines(costs, summary, memory),
    ]) + "\n"


# ------------------------------------------------------------ main
def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5, help="IOPS rounds (default 5)")
    ap.add_argument("--runtime", type=float, default=8, help="seconds per fio run (default 8)")
    ap.add_argument("--quick", action="store_true",
                    help="smoke check: 2 rounds of 2 s runs, 1 s ramp")
    ap.add_argument("--no-write", action="store_true",
                    help="print only, leave docs/BENCHMARKS.md alone")
    args = ap.parse_args(argv)
    args.ramp = 2.0
    if args.quick:
        args.rounds, args.runtime, args.ramp = min(args.rounds, 2), min(args.runtime, 2), 1.0
    if args.rounds < 1 or args.runtime <= 0:
        ap.error("--rounds must be ≥ 1 and --runtime > 0")
    return args


def preflight():
    benchlib.require_root("observer_cost.py")
    for path in (KYBER_TUNED, BIOLATENCY):
        if not os.access(path, os.X_OK):
            sys.exit(f"observer_cost.py: {path} missing: run make (and make deps) first")


def run(args):
    costs, dev = [], None
    prev_stats = open(STATS_SYSCTL).read().strip()
    try:
        dev = testdev.up_shm(size_mib=DEVICE_MIB)
        set_stats(1)
        for sched in SCHEDULERS:
            dev.set_scheduler(sched)
            for tool in TOOLS:
                print(f"per-event cost: {tool}, scheduler {sched}", file=sys.stderr)
                costs.append(measure_cost(dev, tool, args.runtime, args.ramp))
        set_stats(0)
        log, iops, steal = benchlib.Rounds(), {}, {}
        for sched in SCHEDULERS:
            dev.set_scheduler(sched)
            print(f"IOPS, scheduler {sched}, bpf_stats off", file=sys.stderr)
            iops[sched], steal[sched] = measure_iops(dev, log, args.rounds, args.runtime, args.ramp)
        dev.set_scheduler("none")
        memory = measure_memory(dev)
    finally:
        set_stats(prev_stats)
        if dev:
            dev.teardown()
    return costs, iops, steal, log, memory


def main(argv):
    args = parse_args(argv)
    preflight()
    benchlib.catch_signals()
    with fio.io_lock(), benchlib.steal_watch():
        costs, iops, steal, log, memory = run(args)
    command = benchlib.regenerate_command("observer_cost.py", argv, {(): "make bench-observer"})
    body = render(args, costs, iops, steal, log, memory, command)
    benchlib.publish(SECTION, body, not args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
