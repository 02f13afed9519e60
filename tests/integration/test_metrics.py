# SPDX-License-Identifier: LGPL-2.1-or-later
"""The Prometheus metrics file (--metrics-file, MetricsFile=; issue 17).

Checked against promtool, Prometheus' own linter (fetched by make deps
into build/promtool without installing Prometheus; skipped with the
reason when it is missing), and against the daemon's own --json lines:
the read histogram's _count must grow by the completions the intervals
counted.
"""

import os
import re
import signal
import subprocess
import time

import pytest

from tests.lib import fio
from tests.lib.daemon import json_lines, wait_for
from tests.lib.paths import BUILD, KYBER_TUNED

PROMTOOL = os.path.join(BUILD, "promtool", "usr", "bin", "promtool")
# Reads and writes long enough for a dozen intervals; the whole test stays
# well under a minute.
FIO_S = 8
INTERVAL = "1s"
# The metrics count every completion the observer saw, the --json lines
# those of the intervals: equal but for completions without a latency
# sample (no start time, ~0), so 1%.
COUNT_TOLERANCE = 0.01

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$')


def parse(text):
    """{series: value} of a metrics file ('name{labels}' as written)."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        assert m, line
        out[m.group(1) + (m.group(2) or "")] = float(m.group(3))
    return out


def read_metrics(path):
    with open(path) as f:
        return f.read()


def read_count(path, dev):
    key = f'kyber_tuned_latency_seconds_count{{device="{dev}",op="read",span="total"}}'
    return parse(read_metrics(path)).get(key)


def idle_lines(d, n):
    """True once the last n --json lines saw no I/O at all."""
    with open(d.stdout_path) as f:
        lines = json_lines(f.read())
    return len(lines) >= n and all(
        all(op["completed"] == 0 for op in l["ops"].values()) for l in lines[-n:])


def test_metrics_file(daemon_factory, device_factory, tmp_path):
    """promtool accepts the file; the read histogram's _count grows by the
    intervals' read completions (--json) within COUNT_TOLERANCE.

    mode=advise: the tuner decides but never writes targets, so there is
    no settle time after a change, which the metrics count (every
    completion) and the --json intervals leave out."""
    path = tmp_path / "kyber-tuned.prom"
    with fio.io_lock():
        dev = device_factory("flashsim", profile="flash")
        dev.set_scheduler("kyber")  # mode=advise never switches
        d = daemon_factory(["--foreground", "--config=", "--json", "--interval", INTERVAL,
                            "--goal", f"{dev.name}:read-p99=2ms,mode=advise,scheduler=kyber",
                            f"--metrics-file={path}"])
        assert d.ready(), d.stderr()
        wait_for(lambda: read_count(path, dev.name) is not None, 10, "the device in the metrics file")
        wait_for(lambda: idle_lines(d, 2), 10, "two idle intervals before fio")
        time.sleep(0.5)  # the file is written after the interval's line
        before = read_metrics(path)
        fio.run(dev.path, fio.pair(read_qd=4, write_qd=16, pinned=False), runtime_s=FIO_S, ramp_s=0)
        wait_for(lambda: idle_lines(d, 2), 15, "two idle intervals after fio")
        time.sleep(0.5)
        after = read_metrics(path)
        assert d.stop(signal.SIGTERM) == 0, d.stderr()
        lines = json_lines(d.communicate())

    if not os.access(PROMTOOL, os.X_OK):
        pytest.skip(f"{PROMTOOL} is missing: make deps fetches it (apt-get download prometheus); "
                    "the count check passed")
    lint = subprocess.run([PROMTOOL, "check", "metrics"], input=after, capture_output=True, text=True)
    assert lint.returncode == 0 and not lint.stdout.strip() and not lint.stderr.strip(), \
        (lint.stdout, lint.stderr)

    m0, m1 = parse(before), parse(after)
    key = f'kyber_tuned_latency_seconds_count{{device="{dev.name}",op="read",span="total"}}'
    grown = m1[key] - m0[key]
    completed = sum(l["ops"]["read"]["completed"] for l in lines)
    print(f"read _count grew by {grown:.0f}; the intervals counted {completed} read completions")
    assert completed > 1000, completed
    assert abs(grown - completed) <= COUNT_TOLERANCE * completed, (grown, completed)

    # Counters never go down; the +Inf bucket is the count.
    for series, v in m0.items():
        if series.split("{")[0].endswith(("_total", "_count", "_bucket", "_sum")):
            assert m1.get(series, -1) >= v, series
    inf = f'kyber_tuned_latency_seconds_bucket{{device="{dev.name}",op="read",span="total",le="+Inf"}}'
    assert m1[inf] == m1[key]
    # One state, the goal, Kyber's targets, the daemon itself.
    states = {s: v for s, v in m1.items() if s.startswith(f'kyber_tuned_state{{device="{dev.name}"')}
    assert sum(states.values()) == 1, states
    now = next(s for s, v in states.items() if v == 1)
    assert re.search(r'state="([^"]*)"', now).group(1) in {l["tuner"]["state"] for l in lines}, now
    assert m1[f'kyber_tuned_goal_seconds{{device="{dev.name}",op="read",percentile="99"}}'] == 0.002
    assert f'kyber_tuned_target_seconds{{device="{dev.name}",op="read"}}' in m1
    assert m1["kyber_tuned_cpu_seconds_total"] > 0 and m1["kyber_tuned_resident_memory_bytes"] > 0
    # Readable by node_exporter's user; no temp file left beside it.
    assert os.stat(path).st_mode & 0o777 == 0o644
    assert os.listdir(tmp_path) == ["kyber-tuned.prom"]


def test_metrics_while_tuning(daemon_factory, device_factory, tmp_path):
    """With targets being changed: promtool still accepts the file, the
    target changes counter agrees with the --json lines, and the read
    _count covers at least what the intervals counted (it also counts the
    settle time after each change, which the intervals leave out)."""
    path = tmp_path / "kyber-tuned.prom"
    with fio.io_lock():
        dev = device_factory("flashsim", profile="flash")
        d = daemon_factory(["--foreground", "--config=", "--json", "--interval", INTERVAL,
                            "--goal", f"{dev.name}:read-p99=2ms,scheduler=kyber", f"--metrics-file={path}"])
        assert d.ready(), d.stderr()
        wait_for(lambda: read_count(path, dev.name) is not None, 10, "the device in the metrics file")
        fio.run(dev.path, fio.pair(), runtime_s=FIO_S, ramp_s=0)
        wait_for(lambda: idle_lines(d, 2), 15, "two idle intervals after fio")
        time.sleep(0.5)
        after = read_metrics(path)
        assert d.stop(signal.SIGTERM) == 0, d.stderr()
        lines = json_lines(d.communicate())

    m = parse(after)
    changes = sum(l["tuner"]["changed"] for l in lines)
    print(f"{changes} target changes in the --json lines")
    assert m[f'kyber_tuned_target_changes_total{{device="{dev.name}"}}'] == changes
    count = m[f'kyber_tuned_latency_seconds_count{{device="{dev.name}",op="read",span="total"}}']
    completed = sum(l["ops"]["read"]["completed"] for l in lines)
    assert count >= completed * (1 - COUNT_TOLERANCE), (count, completed)
    if not os.access(PROMTOOL, os.X_OK):
        pytest.skip(f"{PROMTOOL} is missing: make deps fetches it (apt-get download prometheus)")
    lint = subprocess.run([PROMTOOL, "check", "metrics"], input=after, capture_output=True, text=True)
    assert lint.returncode == 0 and not lint.stdout.strip() and not lint.stderr.strip(), \
        (lint.stdout, lint.stderr)


def test_metrics_bad_paths(daemon_factory, device_factory, tmp_path):
    """A relative path is refused with the reason, on the command line
    (exit 2) and in the configuration (a warning; the daemon runs without
    metrics); a path that cannot be written is said once, not every
    interval, and the daemon keeps running."""
    r = subprocess.run([KYBER_TUNED, "--foreground", "--goal", "loop0:read-p99=1ms",
                        "--metrics-file=kyber-tuned.prom"], capture_output=True, text=True, timeout=10)
    assert r.returncode == 2
    assert "Invalid --metrics-file 'kyber-tuned.prom': the path must be absolute" in r.stderr

    missing = tmp_path / "no-such-dir" / "kyber-tuned.prom"
    conf = tmp_path / "kyber-tuned.conf"
    with fio.io_lock():
        dev = device_factory("shm")
        conf.write_text(f"[Tuner]\nMetricsFile=kyber-tuned.prom\n[Goals]\n{dev.name}=read-p99=1ms\n")
        d = daemon_factory(["--foreground", f"--config={conf}", "--interval", "100ms", "--settle", "20ms"])
        assert d.ready(), d.stderr()
        assert f"{conf}:2: MetricsFile= path is not absolute, ignoring: kyber-tuned.prom" in d.stderr()
        assert d.stop(signal.SIGTERM) == 0, d.stderr()

        d = daemon_factory(["--foreground", "--config=", "--interval", "100ms", "--settle", "20ms",
                            "--goal", f"{dev.name}:read-p99=1ms", f"--metrics-file={missing}"])
        assert d.ready(), d.stderr()
        time.sleep(1.5)  # a dozen intervals
        assert d.proc.poll() is None, d.stderr()
        assert d.stop(signal.SIGTERM) == 0, d.stderr()
    msg = f"Failed to write metrics file {missing}: No such file or directory"
    assert d.stderr().count(msg) == 1, d.stderr()
