# SPDX-License-Identifier: GPL-2.0-or-later
"""Run fio jobs concurrently against one file or device and parse the results.

    from tests.lib import fio
    res = fio.run("/dev/loop3", fio.pair(names=("r1", "w256")), runtime_s=6)
    res["r1"].read_clat_ns[99.0]

fio.pair() and its parts fio.randread()/fio.randwrite() are the study's
jobs, the one definition tests, demo and benchmarks use; fio.Job is any
other job.

Every run holds an exclusive flock on /tmp/kyber-tuned-io.lock: this machine
must never run two I/O benchmarks at once (parallel test sessions would
measure each other). Use io_lock() around any other I/O workload.
"""

import contextlib
import fcntl
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field

from tests.lib.testdev import DeviceUnavailable

LOCK_PATH = "/tmp/kyber-tuned-io.lock"
PERCENTILES = (1, 5, 10, 50, 90, 99, 99.9, 99.99)
# Beyond runtime + ramp: start-up, layout, verify passes, the final drain.
DEFAULT_TIMEOUT_SLACK_S = 120


@dataclass
class Job:
    name: str
    rw: str  # 'randread', 'randwrite', 'write', 'read', 'randrw', ...
    iodepth: int = 1
    bs: str = '4k'
    cpu: int | None = None  # cpus_allowed pin
    extra: dict = field(default_factory=dict)  # any other fio options for this job


@dataclass
class JobResult:
    name: str
    read_iops: float
    write_iops: float
    read_bytes: int
    write_bytes: int
    read_clat_ns: dict[float, int]  # percentile -> ns
    write_clat_ns: dict[float, int]
    read_lat_mean_ns: float
    write_lat_mean_ns: float
    errors: int
    # Completed I/Os (after ramp), for checking against device-side counts.
    read_ios: int = 0
    write_ios: int = 0
    # Total latency (submission + completion) percentiles; filled only when
    # the job ran with lat_percentiles=1.
    read_lat_ns: dict[float, int] = field(default_factory=dict)
    write_lat_ns: dict[float, int] = field(default_factory=dict)
    read_clat_mean_ns: float = 0.0
    write_clat_mean_ns: float = 0.0


class FioError(RuntimeError):
    pass


# ---------------------------------------------------------------- the study's jobs
# As in the Kyber study: 4 KiB random I/O (Job's bs) through io_uring with
# O_DIRECT (run()'s defaults), the latency-sensitive reader pinned to one CPU
# and the writer to the other, so neither waits for the other's CPU.
READ_CPU, WRITE_CPU = 0, 1


def randread(name, iodepth, extra=None, cpu=READ_CPU):
    """Random reads at iodepth, pinned to cpu; extra: any other fio options."""
    return Job(name, "randread", iodepth=iodepth, cpu=cpu, extra=dict(extra or {}))


def randwrite(name, iodepth, extra=None, cpu=WRITE_CPU):
    """Random writes at iodepth, pinned to cpu; extra: any other fio options."""
    return Job(name, "randwrite", iodepth=iodepth, cpu=cpu, extra=dict(extra or {}))


def pair(read_qd=1, write_qd=256, names=("r", "w"), read_extra=None, write_extra=None,
         pinned=True):
    """R<read_qd>+W<write_qd>, by default R1+W256: the study's reader that
    suffers beside a writer that keeps the device full. names: the two
    jobs' names (the keys of run()'s results); pinned=False leaves the CPUs
    to the kernel, for runs that only need some reads and writes."""
    cpus = (READ_CPU, WRITE_CPU) if pinned else (None, None)
    return [randread(names[0], read_qd, read_extra, cpus[0]),
            randwrite(names[1], write_qd, write_extra, cpus[1])]


def hist_log(prefix, msec=1000):
    """Options that make a job log its completion-latency histogram every
    msec to PREFIX_clat_hist.*.log, for hist_windows() and window_p99()."""
    return {"write_hist_log": prefix, "log_hist_msec": msec}


# ---------------------------------------------------------------- the lock
_lock_mutex = threading.RLock()
_lock_depth = 0
_lock_fd = None


@contextlib.contextmanager
def io_lock():
    """Exclusive machine-wide I/O lock; re-entrant within this process
    (a second flock on a new fd of the same process would deadlock)."""
    global _lock_depth, _lock_fd
    with _lock_mutex:
        if _lock_depth == 0:
            fd = os.open(LOCK_PATH, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
            except BaseException:
                os.close(fd)
                raise
            _lock_fd = fd
        _lock_depth += 1
        try:
            yield
        finally:
            _lock_depth -= 1
            if _lock_depth == 0:
                fd, _lock_fd = _lock_fd, None
                fcntl.flock(fd, fcntl.LOCK_UN)
                os.close(fd)


# ---------------------------------------------------------------- helpers
def device_size(filename):
    """Size in bytes of a block device or regular file."""
    fd = os.open(filename, os.O_RDONLY | os.O_CLOEXEC)
    try:
        return os.lseek(fd, 0, os.SEEK_END)
    finally:
        os.close(fd)


def _fmt(value):
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _job_section(job, defaults, global_extra):
    opts = dict(defaults)
    opts.update(global_extra or {})
    opts.update(rw=job.rw, iodepth=job.iodepth, bs=job.bs)
    if job.cpu is not None:
        opts["cpus_allowed"] = job.cpu
    opts.update(job.extra)
    lines = [f"[{job.name}]"]
    for key, value in opts.items():
        # None/False drop an option (e.g. time_based=None for a verify pass).
        if value is None or value is False:
            continue
        if value is True:
            lines.append(key)
        else:
            lines.append(f"{key}={_fmt(value)}")
    return "\n".join(lines) + "\n"


def _percentiles(clat):
    return {float(k): int(v) for k, v in clat.get("percentile", {}).items()}


def _result(job):
    r, w = job["read"], job["write"]
    errors = int(job.get("total_err", 0))
    if job.get("error") and errors == 0:
        errors = 1
    return JobResult(
        name=job["jobname"],
        read_iops=float(r["iops"]), write_iops=float(w["iops"]),
        read_bytes=int(r["io_bytes"]), write_bytes=int(w["io_bytes"]),
        read_clat_ns=_percentiles(r["clat_ns"]), write_clat_ns=_percentiles(w["clat_ns"]),
        read_lat_mean_ns=float(r["lat_ns"]["mean"]),
        write_lat_mean_ns=float(w["lat_ns"]["mean"]),
        errors=errors,
        read_ios=int(r.get("total_ios", 0)), write_ios=int(w.get("total_ios", 0)),
        read_lat_ns=_percentiles(r["lat_ns"]), write_lat_ns=_percentiles(w["lat_ns"]),
        read_clat_mean_ns=float(r["clat_ns"]["mean"]),
        write_clat_mean_ns=float(w["clat_ns"]["mean"]))


def _kill(proc):
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


# ---------------------------------------------------------------- run
def run(filename: str, jobs: list[Job], runtime_s: float = 10, ramp_s: float = 1,
        global_extra: dict | None = None, timeout_s: float | None = None) -> dict[str, JobResult]:
    """Runs all jobs in one fio invocation (concurrently) and returns the
    results by job name. Options: defaults < global_extra < Job fields <
    Job.extra; a value of None or False removes an option."""
    if shutil.which("fio") is None:
        raise DeviceUnavailable("fio is not installed")
    if not jobs:
        raise ValueError("no jobs")
    names = [j.name for j in jobs]
    if len(set(names)) != len(names):
        raise ValueError(f"duplicate job names: {names}")

    defaults = {
        "filename": filename,
        "ioengine": "io_uring",
        "direct": 1,
        "time_based": True,
        "runtime": f"{_fmt(float(runtime_s))}s",
        "ramp_time": f"{_fmt(float(ramp_s))}s",
        "norandommap": 1,
        "randrepeat": 0,
        "percentile_list": ":".join(_fmt(float(p)) for p in PERCENTILES),
        "size": device_size(filename),
    }
    if timeout_s is None:
        timeout_s = runtime_s + ramp_s + DEFAULT_TIMEOUT_SLACK_S

    with tempfile.TemporaryDirectory(prefix="kyber-fio-") as tmp:
        jobfile = os.path.join(tmp, "jobs.fio")
        output = os.path.join(tmp, "out.json")
        with open(jobfile, "w") as f:
            f.write("\n".join(_job_section(j, defaults, global_extra) for j in jobs))
        # cwd=tmp: fio drops files (verify state, logs) into its working directory.
        cmd = ["fio", "--output-format=json", f"--output={output}", jobfile]
        with io_lock():
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True, cwd=tmp,
                                    start_new_session=True)
            start = time.monotonic()
            try:
                out, err = proc.communicate(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                _kill(proc)
                raise FioError(f"fio did not finish within {timeout_s:.0f} s "
                               f"(jobs: {', '.join(names)})")
            except BaseException:
                _kill(proc)
                raise
            elapsed = time.monotonic() - start
        if proc.returncode != 0:
            with open(jobfile) as f:
                jobtext = f.read()
            raise FioError(f"fio failed (exit {proc.returncode}) after {elapsed:.1f} s:\n"
                           f"{err.strip() or out.strip()}\njob file:\n{jobtext}")
        try:
            with open(output) as f:
                data = json.load(f)
        except (OSError, ValueError) as e:
            raise FioError(f"cannot parse fio output {output}: {e}\nstderr: {err.strip()}")

    results = {}
    for job in data.get("jobs", []):
        results[job["jobname"]] = _result(job)
    missing = set(names) - set(results)
    if missing:
        raise FioError(f"fio output lacks jobs {sorted(missing)}")
    return results


# ---------------------------------------------------------------- histogram logs
# fio's latency histogram (stat.h): 29 groups of 64 buckets; the first two
# groups are exact, then every power of two is split in 64.
_PLAT_BITS = 6
_PLAT_VAL = 1 << _PLAT_BITS


def _plat_idx_to_ns(idx):
    if idx < (_PLAT_VAL << 1):
        return idx
    error_bits = (idx >> _PLAT_BITS) - 1
    base = 1 << (error_bits + _PLAT_BITS)
    return base + ((idx % _PLAT_VAL) + 0.5) * (1 << error_bits)


def hist_windows(prefix, direction=0):
    """Per-interval completion-latency histograms that fio wrote for a job
    run with write_hist_log=PREFIX and log_hist_msec=N: a list of
    (end_msec, bins) for one direction (0 read, 1 write)."""
    import glob
    out = []
    for path in sorted(glob.glob(f"{prefix}_clat_hist.*.log")):
        with open(path) as f:
            for line in f:
                fields = [x.strip() for x in line.split(",")]
                if len(fields) < 4 or int(fields[1]) != direction:
                    continue
                out.append((int(fields[0]), [int(x) for x in fields[3:]]))
    out.sort(key=lambda w: w[0])
    return out


def hist_percentile(bins, pct):
    """Latency (ns) below which pct percent of a window's samples lie, or
    None for an empty window."""
    n = sum(bins)
    if n == 0:
        return None
    rank = max(1, -(-n * pct // 100))  # ceil
    seen = 0
    for i, c in enumerate(bins):
        seen += c
        if seen >= rank:
            return _plat_idx_to_ns(i)
    return _plat_idx_to_ns(len(bins) - 1)


def window_p99(prefix, direction=0):
    """[(end_msec, P99 in ns)] of the non-empty windows of a hist_log()."""
    out = []
    for ms, bins in hist_windows(prefix, direction):
        p = hist_percentile(bins, 99)
        if p is not None:
            out.append((ms, p))
    return out
