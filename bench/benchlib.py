# SPDX-License-Identifier: GPL-2.0-or-later
"""What every benchmark script shares: the machine line, MET/MISSED verdicts,
formatting and summary tables, a kyber-tuned process to measure, the host's
CPU steal during each run, rounds with rejection (a run the host disturbed
is rerun, every try logged and listed), signal handling that lets cleanup
finish, and writing one marked section of docs/BENCHMARKS.md (each script
owns its section; the rest is left alone).

The scripts run as modules from the repository root (python3 -m
bench.baselines), so this and tests.lib import by full name."""

import contextlib
import os
import platform
import signal
import statistics
import sys
import time

from tests.lib import hoststeal
from tests.lib.daemon import Daemon, json_lines
from tests.lib.paths import REPO

DOC = os.path.join(REPO, "docs", "BENCHMARKS.md")
CLK_TCK = os.sysconf("SC_CLK_TCK")
DOC_HEADER = ("# kyber-tuned benchmarks\n\n"
              "Everything below is written by the benchmark scripts; do not edit by hand.\n")


def machine():
    model = "unknown CPU"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return f"Linux {platform.release()}, {model}, {os.cpu_count()} CPUs"


_T0 = time.monotonic()


def progress(text):
    """A progress line on stderr, with the minutes and seconds since start."""
    m, sec = divmod(int(time.monotonic() - _T0), 60)
    print(f"[{m:02d}:{sec:02d}] {text}", file=sys.stderr, flush=True)


# ------------------------------------------------------------ host CPU steal
# flashsim and the loop devices run in this VM's CPUs; when the host takes
# them (20-55% of both CPUs for tens of seconds, seen here), every number of
# that run is partly the host's. Each run records the share stolen during
# it, and each section states it for the whole benchmark.
_steal = None          # the hoststeal.Monitor while steal_watch() is open
_steal_whole = None    # share stolen over the whole of the last steal_watch()


@contextlib.contextmanager
def steal_watch():
    """Sample the host's CPU steal while the benchmark runs."""
    global _steal, _steal_whole
    t0 = time.time()
    with hoststeal.Monitor(period=0.5) as m:
        _steal = m
        try:
            yield m
        finally:
            _steal = None
    _steal_whole = m.share(t0, time.time())


def steal_pct(t0, t1=None):
    """Percent of all CPUs stolen by the host from t0 (time.time()) to t1
    (now), or None outside steal_watch()."""
    if _steal is None:
        return None
    return 100 * _steal.share(t0, t1 if t1 is not None else time.time())


def steal_sentence():
    """What the host took over the whole benchmark, for the section header."""
    if _steal_whole is None:
        return ""
    return (f" The host (a shared VM) stole {100 * _steal_whole:.1f}% of both CPUs over the whole "
            "benchmark (/proc/stat steal); the \"host steal\" column gives it per run: runs above "
            f"{100 * hoststeal.DISTURBED_SHARE:.0f}% measure the host as much as the device.")


# ------------------------------------------------------------ rounds with rejection
# A run during which the host took more than STEAL_LIMIT_PCT of the CPUs
# measured the host as much as the device: it is rejected and rerun, at most
# EXTRA_TRIES times; then the least disturbed try is kept and marked so. A
# steal episode lasts tens of seconds, so before a rerun the suite waits (up
# to CALM_WAIT_S) for CALM_WINDOW_S seconds in a row below the limit.
STEAL_LIMIT_PCT = 100 * hoststeal.DISTURBED_SHARE  # 5%
EXTRA_TRIES = 2
CALM_WINDOW_S = 5
CALM_WAIT_S = 30

ACCEPTED, REJECTED, KEPT = "accepted", "rejected", "kept"


REJECTION_SENTENCE = (
    f"A run during which the host stole more than {STEAL_LIMIT_PCT:.0f}% of the CPUs "
    f"(/proc/stat steal, fio's measured window) is rejected and rerun, at most {EXTRA_TRIES} "
    "times per run (the least disturbed try is kept, and marked, when every try was over).")


def wait_calm(limit_pct=STEAL_LIMIT_PCT, window_s=CALM_WINDOW_S, max_wait_s=CALM_WAIT_S):
    """Waits until the last window_s seconds had at most limit_pct steal, at
    most max_wait_s; returns the seconds waited (0 outside steal_watch())."""
    if _steal is None:
        return 0.0
    t0 = time.time()
    while time.time() - t0 < max_wait_s:
        now = time.time()
        if 100 * _steal.share(now - window_s, now) <= limit_pct:
            break
        time.sleep(0.5)
    return time.time() - t0


class Rounds:
    """Rounds with rejection: every run of a benchmark goes through run(),
    which measures the host's CPU steal during it, rejects and reruns a
    disturbed run, and logs every try, accepted or not.

    A run is a callable returning a dict of figures. Its steal is the
    figures' own "steal_pct" when it has one (the callable knows its measured
    window, fio's ramp excluded), else the steal over the whole call; None
    outside steal_watch() (nothing is rejected then). prefix: put before
    the labels in progress lines."""

    def __init__(self, limit_pct=STEAL_LIMIT_PCT, extra_tries=EXTRA_TRIES, steal=None,
                 calm=None, prefix=""):
        self.prefix = prefix
        self.limit_pct = limit_pct
        self.extra_tries = extra_tries
        self._steal = steal or steal_pct
        self._calm = calm or wait_calm
        self.log = []  # every try: {run, label, round, config, try, steal_pct, figures, status}
        self._runs = 0

    def run(self, fn, label="", rnd=None, config=""):
        """The accepted figures of fn(), or the least disturbed try's when
        all 1 + extra_tries were disturbed (then logged as KEPT)."""
        tries = []
        self._runs += 1
        for attempt in range(1 + self.extra_tries):
            if attempt:
                self._calm(self.limit_pct)
            t0 = time.time()
            figures = fn()
            stolen = figures.get("steal_pct")
            if stolen is None:
                stolen = self._steal(t0, time.time())
                if stolen is not None:
                    figures["steal_pct"] = stolen
            entry = {"run": self._runs, "label": label, "round": rnd, "config": config,
                     "try": attempt + 1, "steal_pct": stolen, "figures": figures,
                     "status": ACCEPTED}
            self.log.append(entry)
            tries.append(entry)
            if stolen is None or stolen <= self.limit_pct:
                return figures
            entry["status"] = REJECTED
            then = "rerun" if attempt < self.extra_tries else "rerun cap reached"
            progress(f"{self.prefix}{label}: {config}: host steal {stolen:.0f}% > "
                     f"{self.limit_pct:.0f}%, {then}")
        kept = min(tries, key=lambda e: e["steal_pct"])
        kept["status"] = KEPT
        return kept["figures"]

    def interleaved(self, configs, n, measure, label=""):
        """n rounds, each running every configuration once, the order rotated
        by one per round; configs: [(name, arg)], measure(arg) -> figures.
        {name: [figures of each round]}."""
        runs = {name: [] for name, _ in configs}
        for r in range(n):
            k = r % len(configs)
            for name, arg in configs[k:] + configs[:k]:
                progress(f"{self.prefix}{label}: round {r + 1}/{n}, {name}")
                runs[name].append(self.run(lambda arg=arg: measure(arg), label, r + 1, name))
        return runs

    def entries(self, *labels):
        """The tries of these labels (all without), in the order run."""
        return [e for e in self.log if not labels or e["label"] in labels]


def plural(n, one, many=None):
    return f"{n} {one if n == 1 else many or one + 's'}"


def fmt_pct(v):
    """A percentage to the unit, or a dash when unknown."""
    return "–" if v is None else f"{v:.0f}%"


STATUS_TEXT = {ACCEPTED: "accepted", REJECTED: "**rejected**",
               KEPT: "**kept disturbed** (rerun cap reached)"}


def rounds_table(entries, metrics, label_heading=None):
    """The log of rounds as a markdown table, every try in the order run,
    rejected ones included: (the label under label_heading,) round,
    configuration, try, host steal, the metrics ((key, heading, format)) and
    what became of the try."""
    head = ([label_heading] if label_heading else []) + ["round", "configuration", "try",
                                                         "host steal"] + [m[1] for m in metrics]
    rows = ["| " + " | ".join(head) + " | verdict |",
            "|" + ("---|" if label_heading else "") + "---:|---|---:|---:|"
            + "---:|" * len(metrics) + "---|"]
    for e in entries:
        cells = [e["label"]] if label_heading else []
        cells += ["–" if e["round"] is None else str(e["round"]), e["config"], str(e["try"]),
                  fmt_pct(e["steal_pct"])]
        cells += [fmt(e["figures"][key]) if key in e["figures"] else "–"
                  for key, _, fmt in metrics]
        rows.append("| " + " | ".join(cells + [STATUS_TEXT[e["status"]]]) + " |")
    return rows


def rounds_sentence(entries, limit_pct=STEAL_LIMIT_PCT):
    """How many tries were run, rejected, and kept disturbed after the cap."""
    runs = {e["run"] for e in entries}
    rejected = sum(e["status"] == REJECTED for e in entries)
    kept = [e for e in entries if e["status"] == KEPT]
    text = (f"{plural(len(entries), 'try', 'tries')} for {plural(len(runs), 'run')}; {rejected} "
            f"rejected (host steal over {limit_pct:.0f}%)")
    if kept:
        text += (f"; **{len(kept)} run(s) kept disturbed**, every try over the limit when the "
                 "rerun cap was reached, the least disturbed kept: " + ", ".join(
                     (f"{e['label']} " if e["label"] else "")
                     + ("" if e["round"] is None else f"round {e['round']} ")
                     + f"{e['config']} ({sum(x['run'] == e['run'] for x in entries)} tries, "
                     f"kept {fmt_pct(e['steal_pct'])})" for e in kept))
    else:
        text += "; none kept disturbed"
    return text + "."


def rounds_log(entries, metrics, title="Every run of every round, rejected ones included",
               label_heading=None, fold=True):
    """The sentence, then the table (folded into a <details> block unless
    fold is False)."""
    table = rounds_table(entries, metrics, label_heading)
    if fold:
        return [f"{title}: " + rounds_sentence(entries), "", "<details>",
                f"<summary>{title}</summary>", "",
                *table, "", "</details>"]
    return [f"{title}: " + rounds_sentence(entries), "", *table]


def verdict(ok, text):
    return f"- **{'MET' if ok else 'MISSED'}**: {text}"


def spread(values):
    """(median, min, max) of a non-empty list."""
    return statistics.median(values), min(values), max(values)


def fmt_us(ns):
    return f"{ns / 1e3:,.0f} µs" if ns < 10_000_000 else f"{ns / 1e6:,.1f} ms"


def fmt_target(ns):
    return f"{ns / 1e3:.3g} µs" if ns < 1_000_000 else f"{ns / 1e6:.3g} ms"


def fmt_iops(v):
    return f"{v:,.0f}"


MB = 1_000_000 / 1024  # KiB in a (decimal) megabyte


def summary_table(runs, metrics, first="configuration"):
    """runs: {name: [run dict, ...]}; metrics: (key, heading, format).
    Cells: median (min–max) over the runs that have the key."""
    rows = [f"| {first} | runs | " + " | ".join(m[1] for m in metrics) + " |",
            "|---|---:|" + "---:|" * len(metrics)]
    for name, rs in runs.items():
        cells = []
        for key, _, fmt in metrics:
            vals = [r[key] for r in rs if key in r]
            if not vals:
                cells.append("–")
                continue
            mid, lo, hi = spread(vals)
            cells.append(fmt(mid) if len(vals) == 1 else f"{fmt(mid)} ({fmt(lo)}–{fmt(hi)})")
        rows.append(f"| {name} | {len(rs)} | " + " | ".join(cells) + " |")
    return rows


LAT_IOPS = (("read_p99", "read P99", fmt_us), ("read_iops", "read IOPS", fmt_iops),
            ("write_iops", "write IOPS", fmt_iops),
            ("steal_pct", "host steal", fmt_pct))
LAT_IOPS_FIGURES = LAT_IOPS[:3]  # for rounds_table, which has its own steal column


def med(runs, name, key):
    return statistics.median(r[key] for r in runs[name])


def set_static(dev, sched, targets=None):
    """A scheduler from scratch: none first, so Kyber's depths start fresh."""
    dev.set_scheduler("none")
    if sched != "none":
        dev.set_scheduler(sched)
    if targets:
        dev.set_kyber_targets(*targets)


def offered(dev, configs, scheduler_of):
    """The configurations whose scheduler (scheduler_of(config)) this
    kernel offers the device, and a sentence naming the ones left out (''
    when none is): a benchmark runs what the kernel has and says what it
    could not run."""
    have = dev.schedulers()
    kept = [c for c in configs if scheduler_of(c) in have]
    missing = sorted({scheduler_of(c) for c in configs} - set(have))
    if not missing:
        return kept, ""
    return kept, (f"Not run: {', '.join(missing)}, which this kernel does not have "
                  f"(the device's queue/scheduler offers {', '.join(have)}).")


def proc_cpu_s(pid):
    """CPU time of all threads: schedstat's nanoseconds on the CPU where the
    kernel has them (clock ticks are 10 ms: too coarse for an idle daemon),
    else utime + stime."""
    try:
        with open(f"/proc/{pid}/schedstat") as f:
            return int(f.read().split()[0]) / 1e9
    except (OSError, ValueError, IndexError):
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK


def proc_status_kib(pid, key):
    """A kB field of /proc/PID/status, e.g. VmHWM (peak RSS) or VmRSS."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


class Tuner:
    """kyber-tuned --foreground with one goal on each device (from
    scheduler none), 1 s interval; its CPU time and peak RSS can be read
    while it runs. record: a flight-recorder file."""

    def __init__(self, devs, goal, record=None, extra_args=()):
        args = ["--foreground", "--json", "--interval", "1s", *extra_args]
        for dev in devs:
            set_static(dev, "none")
            args += ["--goal", f"{dev.name}:{goal}"]
        if record:
            args += ["--record", record]
        self.d = Daemon(args)
        if not self.d.ready():
            err = self.d.stderr()
            self.d.close()
            raise RuntimeError(f"kyber-tuned did not start: {err}")
        self.pid = self.d.proc.pid

    def cpu_s(self):
        return proc_cpu_s(self.pid)

    def rss_kib(self):
        """Peak RSS (VmHWM): reached while libbpf loads the kernel's BTF."""
        return proc_status_kib(self.pid, "VmHWM")

    def rss_now_kib(self):
        return proc_status_kib(self.pid, "VmRSS")

    def stop(self):
        """SIGTERM (rollback); its --json lines once the process is gone."""
        self.d.stop()
        try:
            return json_lines(self.d.communicate())
        finally:
            self.d.close()


def write_section(name, body):
    """Replaces the section between <!-- BEGIN name --> and <!-- END name -->
    (appends it when absent); atomic rename, so a crash leaves the old file."""
    begin, end = f"<!-- BEGIN {name} -->", f"<!-- END {name} -->"
    try:
        with open(DOC) as f:
            text = f.read()
    except FileNotFoundError:
        text = DOC_HEADER
    section = f"{begin}\n{body}{end}"
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        text = head + section + rest.split(end, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    os.makedirs(os.path.dirname(DOC), exist_ok=True)
    tmp = DOC + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, DOC)


def regenerate_command(script, argv, make_targets):
    """The command to quote in the document: the make target that runs the
    script with exactly these arguments ({argv tuple: target}), else the
    script run as a module, as make runs it (script: its file name)."""
    module = "bench." + script.removesuffix(".py")
    return make_targets.get(tuple(argv)) or " ".join(["/usr/bin/python3", "-m", module, *argv])


def publish(section, body, write):
    """The section to stdout and, unless --no-write, into the document."""
    print(body)
    if write:
        write_section(section, body)
        print(f"written to {os.path.relpath(DOC, REPO)}", file=sys.stderr)


def _on_signal(signum, frame):
    for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(s, signal.SIG_IGN)  # let the cleanup finish undisturbed
    print(f"{os.path.basename(sys.argv[0])}: {signal.Signals(signum).name}, cleaning up",
          file=sys.stderr)
    raise SystemExit(128 + signum)


def catch_signals():
    """SIGTERM/SIGHUP/SIGINT unwind through the finally blocks (teardown)."""
    for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        if signal.getsignal(s) != signal.SIG_IGN:  # respect nohup and friends
            signal.signal(s, _on_signal)


def require_root(script):
    if os.geteuid() != 0:
        sys.exit(f"{script}: needs root (loads BPF, creates loop devices, switches schedulers)")
