# SPDX-License-Identifier: LGPL-2.1-or-later
"""What survives the daemon (issue 4): crash recovery of the originals, the
state file and its corruption, configuration reload on SIGHUP, and the
capabilities left after start-up. Real daemon, real loop devices."""

import errno
import fcntl
import os
import shutil
import subprocess
import signal
import tempfile
import time

import pytest

from tests.lib import fio
from tests.lib.daemon import json_lines, wait_for

# A goal no shm loop device can meet: the tuner tightens at once, so the
# targets it leaves behind differ from the originals.
TIGHT = "read-p99=1us scheduler=kyber"
CAP_PERFMON = 38
CAP_BPF = 39


def read(path):
    with open(path) as f:
        return f.read().strip()


@pytest.fixture
def dirs():
    with tempfile.TemporaryDirectory(prefix="kt-persist-") as tmp:
        state, runtime = f"{tmp}/state", f"{tmp}/run"
        os.mkdir(state)
        os.mkdir(runtime)
        yield tmp, state, runtime


def start(daemon_factory, dirs, *args):
    _, state, runtime = dirs
    d = daemon_factory(["--foreground", "--json", "--interval", "200ms", "--settle", "50ms",
                        "--config=", "--state-dir", state, "--runtime-dir", runtime, *args])
    assert d.ready(), d.stderr()
    return d


def expected_caps():
    """The exact set the daemon keeps (docs/security.md): nothing where
    bpf(2) map commands need no capability on an open map (Linux 6.5 on),
    or where unprivileged BPF is allowed; CAP_BPF otherwise."""
    major, minor = (int(x) for x in os.uname().release.split(".")[:2])
    if (major, minor) >= (6, 5) or read("/proc/sys/kernel/unprivileged_bpf_disabled") == "0":
        return 0
    return 1 << CAP_BPF


def caps(pid):
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("CapEff", "CapPrm", "CapBnd", "CapInh", "CapAmb"):
                out[k] = int(v.strip(), 16)
    return out


def test_capabilities_dropped_and_still_tuning(daemon_factory, device_factory, dirs):
    """After READY=1 the daemon holds exactly the expected capabilities in
    its effective, permitted and bounding sets (none on this kernel), and
    keeps observing and writing targets without the rest."""
    dev = device_factory("shm", size_mib=64)
    d = start(daemon_factory, dirs, "--goal", f"{dev.name}:{TIGHT}")
    c = caps(d.proc.pid)
    print(f"\ncapabilities after start-up: { {k: hex(v) for k, v in c.items()} }")
    want = expected_caps()
    assert c["CapEff"] == want and c["CapPrm"] == want and c["CapBnd"] == want, c
    assert c["CapAmb"] == 0 and c["CapInh"] == 0
    original = dev.kyber_targets()
    with fio.io_lock():
        fio.run(dev.path, fio.pair(write_qd=32, pinned=False), runtime_s=3, ramp_s=0)
    tuned = dev.kyber_targets()
    assert d.stop() == 0, d.stderr()
    lines = json_lines(d.communicate())
    assert "Failed" not in d.stderr(), d.stderr()
    with_io = [l for l in lines if l["ops"]["read"]["iops"] > 0]
    # Observation works without the capabilities: intervals saw the reads,
    # and the targets were written (the goal cannot be met, so they move).
    assert len(with_io) >= 5, d.stderr()
    assert tuned != original, (original, tuned)
    assert dev.scheduler() == "none"


def test_capabilities_under_unit_bounding_set(daemon_factory, device_factory, dirs):
    """Under the unit's CapabilityBoundingSet=CAP_BPF CAP_PERFMON (no
    CAP_SETPCAP to narrow the bounding set further) the daemon starts,
    drops its effective and permitted sets and tunes."""
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv (util-linux) is not installed")
    dev = device_factory("shm", size_mib=16)
    _, state, runtime = dirs
    d = daemon_factory(["--foreground", "--interval", "200ms", "--settle", "50ms", "--config=",
                        "--state-dir", state, "--runtime-dir", runtime,
                        "--goal", f"{dev.name}:read-p99=2ms scheduler=kyber"],
                       wrapper=["setpriv", "--bounding-set", "-all,+bpf,+perfmon", "--"])
    assert d.ready(), d.stderr()
    c = caps(d.proc.pid)
    assert c["CapEff"] == expected_caps() and c["CapPrm"] == expected_caps(), c
    assert c["CapBnd"] == (1 << CAP_BPF) | (1 << CAP_PERFMON), c
    assert dev.scheduler() == "kyber"
    assert d.stop() == 0, d.stderr()
    assert dev.scheduler() == "none"


@pytest.mark.parametrize("original", ["none", "kyber"])
def test_crash_restores_originals(daemon_factory, device_factory, dirs, original):
    """SIGKILL leaves the tuned settings on the device; the next start puts
    back the scheduler and targets from before the first one, although it
    tunes another device only."""
    dev = device_factory("shm", size_mib=64)
    other = device_factory("shm", size_mib=16)
    if original == "kyber":
        dev.set_scheduler("kyber")
        dev.set_kyber_targets(3_000_000, 20_000_000)
    before = (dev.scheduler(), dev.kyber_targets() if original == "kyber" else None)
    d = start(daemon_factory, dirs, "--goal", f"{dev.name}:{TIGHT}")
    with fio.io_lock():
        fio.run(dev.path, fio.pair(write_qd=32, pinned=False), runtime_s=2, ramp_s=0)
    d.stop(signal.SIGKILL)
    assert dev.scheduler() == "kyber"
    left = dev.kyber_targets()
    print(f"\noriginal {before}; left behind by the killed daemon: kyber {left}")
    if original == "kyber":
        assert left != before[1], "the tuner never changed the targets"

    d2 = start(daemon_factory, dirs, "--goal", f"{other.name}:read-p99=2ms scheduler=kyber")
    assert dev.scheduler() == before[0], d2.stderr()
    if original == "kyber":
        assert dev.kyber_targets() == before[1]
    assert "restor" in d2.stderr().lower(), d2.stderr()
    assert d2.stop() == 0, d2.stderr()
    assert other.scheduler() == "none"


def test_clean_exit_forgets_originals(daemon_factory, device_factory, dirs):
    """After a clean stop nothing is left to recover: a device changed by
    hand since is not touched by the next start."""
    dev = device_factory("shm", size_mib=64)
    other = device_factory("shm", size_mib=16)
    d = start(daemon_factory, dirs, "--goal", f"{dev.name}:read-p99=2ms scheduler=kyber")
    assert d.stop() == 0, d.stderr()
    dev.set_scheduler("kyber")
    dev.set_kyber_targets(4_000_000, 40_000_000)
    d2 = start(daemon_factory, dirs, "--goal", f"{other.name}:read-p99=2ms scheduler=kyber")
    assert d2.stop() == 0, d2.stderr()
    assert dev.scheduler() == "kyber" and dev.kyber_targets() == (4_000_000, 40_000_000)


@pytest.mark.parametrize("name", ["state.pb", "originals.pb"])
def test_corrupt_file_set_aside(daemon_factory, device_factory, dirs, name):
    """A corrupt state or originals file is a warning naming it, is kept
    aside as NAME.corrupt, and the daemon starts clean."""
    dev = device_factory("shm", size_mib=16)
    _, state, runtime = dirs
    path = os.path.join(state if name == "state.pb" else runtime, name)
    garbage = b"\x0a\xff\xff\xff\xff\x0fnot a protobuf message"
    with open(path, "wb") as f:
        f.write(garbage)
    d = start(daemon_factory, dirs, "--goal", f"{dev.name}:read-p99=2ms scheduler=kyber")
    err = d.stderr()
    assert path in err and "corrupt" in err, err
    with open(path + ".corrupt", "rb") as f:
        assert f.read() == garbage
    assert d.stop() == 0, d.stderr()


def test_state_dir_unusable_fails_start(daemon_factory, device_factory, dirs):
    """A state directory that cannot be created stops the start with an
    error naming it, before any device is touched."""
    dev = device_factory("shm", size_mib=16)
    tmp, _, runtime = dirs
    blocker = f"{tmp}/file"
    open(blocker, "w").close()
    d = daemon_factory(["--foreground", "--interval", "200ms", "--settle", "50ms",
                        "--config=", "--state-dir", f"{blocker}/state", "--runtime-dir", runtime,
                        "--goal", f"{dev.name}:read-p99=2ms scheduler=kyber"])
    assert not d.ready()
    assert d.proc.wait(10) != 0
    assert f"{blocker}/state" in d.stderr() and "Not a directory" in d.stderr(), d.stderr()
    assert dev.scheduler() == "none"


LOOP_CTL_REMOVE = 0x4C81


def remove_loop(dev):
    """Detach a loop device and delete it: its /sys/class/block entry goes,
    as a hot-unplugged disk's does."""
    subprocess.run(["losetup", "-d", dev.path], check=True)
    number = int(dev.name[len("loop"):])
    fd = os.open("/dev/loop-control", os.O_RDWR)
    try:
        for _ in range(50):  # the detach completes asynchronously
            try:
                fcntl.ioctl(fd, LOOP_CTL_REMOVE, number)
                return
            except OSError as e:
                if e.errno != errno.EBUSY:
                    raise
                time.sleep(0.1)
        raise AssertionError(f"{dev.name} stayed busy")
    finally:
        os.close(fd)


def test_disk_going_away(daemon_factory, device_factory, dirs):
    """A tuned disk that disappears is dropped with a notice; the other
    devices keep being tuned; --foreground exits once no device is left.
    (The detach comes first: its queue gets its scheduler back, as on any
    stop; test_hotplug.py has the rest of what follows.)"""
    a = device_factory("shm", size_mib=16)
    b = device_factory("shm", size_mib=16)
    d = start(daemon_factory, dirs, "--goal", f"{a.name}:read-p99=2ms scheduler=kyber", "--goal", f"{b.name}:read-p99=2ms scheduler=kyber")
    remove_loop(a)
    wait_for(lambda: f"{a.name}: its medium went away" in d.stderr() or f"{a.name}: the disk went away" in d.stderr(),
             what="removal notice")
    assert d.proc.poll() is None, d.stderr()
    assert b.scheduler() == "kyber"

    def lines():
        # Only whole lines: the daemon may be writing the next one.
        return json_lines(open(d.stdout_path).read().rpartition("\n")[0])
    # The remaining device's intervals go on; none for the one removed.
    seen = len(lines())
    wait_for(lambda: sum(l["device"] == b.name for l in lines()[seen:]) >= 2,
             what=f"two more intervals of {b.name}")
    assert all(l["device"] == b.name for l in lines()[seen:]), lines()[seen:]
    remove_loop(b)
    assert d.proc.wait(10) == 0, d.stderr()
    assert "No device left to tune" in d.stderr()
    assert "Failed" not in d.stderr(), d.stderr()


def write_conf(path, goals, extra=""):
    with open(path, "w") as f:
        f.write("[Tuner]\n" + extra + "\n[Goals]\n")
        for dev, goal in goals.items():
            f.write(f"{dev}={goal}\n")


def test_sighup_reload(daemon_factory, device_factory, dirs):
    """SIGHUP rereads the configuration and its conf.d drop-ins: a goal
    added starts tuning, one removed rolls its device back, a changed one
    replaces the goal; a broken line is a warning naming FILE:LINE and
    loses nothing else."""
    a = device_factory("shm", size_mib=16)
    b = device_factory("shm", size_mib=16)
    tmp, state, runtime = dirs
    conf = f"{tmp}/kyber-tuned.conf"
    write_conf(conf, {a.name: "read-p99=2ms scheduler=kyber"})
    d = daemon_factory(["--foreground", "--interval", "200ms", "--settle", "50ms", "--config", conf,
                        "--state-dir", state, "--runtime-dir", runtime])
    assert d.ready(), d.stderr()
    assert a.scheduler() == "kyber" and b.scheduler() == "none"

    # The goal moves from the main file to a drop-in.
    write_conf(conf, {})
    os.mkdir(f"{tmp}/conf.d")
    dropin = f"{tmp}/conf.d/50-b.conf"
    write_conf(dropin, {b.name: "read-p99=3ms scheduler=kyber"})
    d.proc.send_signal(signal.SIGHUP)
    wait_for(lambda: b.scheduler() == "kyber" and a.scheduler() == "none", what="reload")

    write_conf(dropin, {b.name: "read-p99=5ms scheduler=kyber", "nosuchdisk": "read-p99=2ms scheduler=kyber",
                        a.name: "read-p99=oops"})
    d.proc.send_signal(signal.SIGHUP)
    # The parser warns first, the goals apply after: wait for the end of
    # this (second) reload.
    wait_for(lambda: d.stderr().count("Configuration reloaded") >= 2, what="second reload")
    err = d.stderr()
    assert f"{dropin}:6: Invalid goal for {a.name}" in err, err
    # A disk that is not here is not a mistake: its goal waits for it.
    assert "nosuchdisk is not here (or has no medium); its goal read-p99=2ms mode=latency scheduler=kyber applies when it " \
           "appears" in err, err
    assert "Configuration reloaded, 1 warning(s)" in err, err
    assert "goal now read-p99=5ms" in err, err
    assert "nosuchdisk" in err, err
    assert d.proc.poll() is None
    assert b.scheduler() == "kyber" and a.scheduler() == "none"
    assert d.stop() == 0, d.stderr()
    assert b.scheduler() == "none"
