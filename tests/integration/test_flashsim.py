# SPDX-License-Identifier: GPL-2.0-or-later
"""Self-tests of the flash-model test device (build/flashsim + tests/lib).

Run as root:  /usr/bin/python3 -m pytest -p no:cacheprovider -ra -s tests/integration/test_flashsim.py
Every comparison is a ratio of numbers measured in the same test: absolute
times on these shared 2-CPU machines vary by 30-45%.
"""

import os
import signal
import subprocess
import sys
import time

import pytest

from tests.lib import fio, hoststeal, testdev

PHASE_S = 5     # measured seconds per fio phase
RAMP_S = 1

R1 = fio.randread("r1", 1)
W256 = fio.randwrite("w256", 256)
# Below the loop driver's 128 tags: see test_optane_no_interference.
W64 = fio.randwrite("w64", 64)


def us(ns):
    return f"{ns / 1000:.0f} us"


@pytest.fixture
def make_dev():
    """Factory for flashsim devices, all torn down by the finalizer."""
    devs = []

    def make(profile="flash", **overrides):
        try:
            testdev.check_fio()
            dev = testdev.up_flashsim(profile, **overrides)
        except testdev.DeviceUnavailable as e:
            pytest.skip(e.reason)
        devs.append(dev)
        return dev

    yield make
    errors = []
    for dev in devs:
        try:
            dev.teardown()
        except testdev.DeviceError as e:
            errors.append(str(e))
    assert not errors, errors


def run(dev, *jobs, runtime_s=PHASE_S, ramp_s=RAMP_S, **kw):
    return fio.run(dev.path, list(jobs), runtime_s=runtime_s, ramp_s=ramp_s, **kw)


def read_p99(dev, *jobs):
    res = run(dev, R1, *jobs)
    r1 = res["r1"]
    assert r1.errors == 0
    for name, r in res.items():
        print(f"    {name}: read {r.read_iops:.0f} IOPS p50 {us(r.read_clat_ns.get(50.0, 0))} "
              f"p99 {us(r.read_clat_ns.get(99.0, 0))}; write {r.write_iops:.0f} IOPS "
              f"p99 {us(r.write_clat_ns.get(99.0, 0))}")
    return r1.read_clat_ns[99.0], res


# ------------------------------------------------------------------ 1
VERIFY_SIZE = "64m"


@pytest.mark.parametrize("profile", ["flash", "buffered"])
def test_data_integrity(make_dev, profile):
    dev = make_dev(profile)
    once = {"time_based": None, "runtime": None, "ramp_time": None,
            "size": VERIFY_SIZE, "verify": "crc32c", "verify_fatal": 1,
            "verify_state_save": 0}
    # Every block written once (random map on), then read back in the job.
    res = run(dev, fio.Job("write", "randwrite", iodepth=32,
                           extra=dict(once, norandommap=None, do_verify=1)))
    w = res["write"]
    assert w.errors == 0
    assert w.write_bytes == 64 << 20
    # A separate pass: the data must still be there for a new reader.
    res = run(dev, fio.Job("reread", "read", iodepth=16, extra=once))
    r = res["reread"]
    assert r.errors == 0
    assert r.read_bytes == 64 << 20
    print(f"\n  {profile}: wrote+verified {w.write_bytes >> 20} MiB at "
          f"{w.write_iops:.0f} IOPS, re-read verified at {r.read_iops:.0f} IOPS")


# ------------------------------------------------------------------ 2
def test_flash_interference(make_dev):
    dev = make_dev("flash")
    print()
    print("  flash, scheduler none: R1 alone")
    alone, _ = read_p99(dev)
    print("  flash, scheduler none: R1 + W256")
    mixed, _ = read_p99(dev, W256)
    print(f"  flash R1 P99 alone {us(alone)}, under W256 {us(mixed)}: x{mixed / alone:.1f}")
    assert mixed >= 5 * alone


# ------------------------------------------------------------------ 3
def test_flash_kyber_helps_reads(make_dev):
    dev = make_dev("flash")
    print()
    print("  flash R1 + W256, scheduler none")
    none_p99, none_res = read_p99(dev, W256)
    dev.set_scheduler("kyber")
    # Switching to kyber resets the targets: set them afterwards.
    dev.set_kyber_targets(50_000, 100_000_000)
    assert dev.kyber_targets() == (50_000, 100_000_000)
    print("  flash R1 + W256, kyber read 50 us / write 100 ms")
    kyber_p99, kyber_res = read_p99(dev, W256)
    dev.set_scheduler("none")
    print(f"  flash R1+W256 read P99 none {us(none_p99)}, kyber {us(kyber_p99)}: "
          f"x{kyber_p99 / none_p99:.2f}; write IOPS {none_res['w256'].write_iops:.0f} -> "
          f"{kyber_res['w256'].write_iops:.0f}")
    assert kyber_p99 <= 0.5 * none_p99


# ------------------------------------------------------------------ 4
# x R1's P99 alone: what the host path adds under W64 on this 2-CPU VM
# (2.4x measured at 0% steal), with margin; a model interference is 10x+.
OPTANE_HOST_FACTOR = 4


def test_optane_no_interference(make_dev):
    """Reads never wait for writes inside the optane model.

    The writer runs at depth 64: W256 keeps all 128 tags of the loop device
    busy, and with scheduler none R1 then queues for a tag behind W256's
    waiters, however the device serves reads (measured: R1 P99 1-4 ms at
    16K write IOPS, 50 ms at 4K). That is the host's interference, which
    Kyber exists to fix, not the device's; W256 is measured and printed too.

    The model runs in this VM's CPUs: a pair of runs in which the host stole
    more than 5% of the CPUs (tests/lib/hoststeal.py) is measured again (3
    tries; skipped if none was undisturbed). Even undisturbed, the FUSE
    daemon serving 16K writes a second takes CPU time from the reader's
    completions: R1's P99 grew 2.4x under W64 at 0% steal (132 -> 313 us),
    so the bound is OPTANE_HOST_FACTOR. Reads that waited for writes in the
    model would grow it 10x and more (flash: behind programs of 500 us and
    more on 40-100 us reads). That the model itself never makes a read wait
    is checked exactly in test-flashsim-model (test_optane_reads_independent).
    """
    dev = make_dev("optane")

    def pair():
        print()
        print("  optane, scheduler none: R1 alone")
        alone, _ = read_p99(dev)
        print("  optane, scheduler none: R1 + W64")
        return alone, *read_p99(dev, W64)

    with hoststeal.Monitor() as steal:
        (alone, mixed, res), share = steal.calm_run(pair, "optane R1 alone and beside W64")
    print(f"  host CPU steal during the pair: {share:.1%}")
    print("  optane, scheduler none: R1 + W256 (host tag starvation, not asserted)")
    mixed256, _ = read_p99(dev, W256)
    print(f"  optane R1 P99 alone {us(alone)}, under W64 {us(mixed)}: x{mixed / alone:.2f}; "
          f"under W256 {us(mixed256)}: x{mixed256 / alone:.2f}")
    # The writer did write hard enough to matter.
    assert res["w64"].write_iops > 5000
    assert mixed <= OPTANE_HOST_FACTOR * alone


# ------------------------------------------------------------------ 4b
# Write rate of W256 under none each model gives (page programs or requests
# per second): tlc 4 dies / 1.5 ms; gc 8 dies x 16 programs per
# (16 x 500 us + 2 ms); qdlat 128 tags in the device / (100 us + 127 x 60 us).
NEW_PROFILE_W256_IOPS = {"tlc": 2667, "gc": 12800, "qdlat": 16400}


@pytest.mark.parametrize("profile", sorted(NEW_PROFILE_W256_IOPS))
def test_new_profile_interference(make_dev, profile):
    """Each newer profile interferes: R1's P99 next to W256 is many times
    its P99 alone (measured 50-300x), and W256 runs at the model's rate.
    The FUSE path keeps up (at most ~16K requests/s); host noise can only
    lower the rate, so its upper bound is tight and its lower bound loose."""
    dev = make_dev(profile)
    stats = dev.stats()
    assert stats["profile"] == profile
    print()
    print(f"  {profile}, scheduler none: R1 alone")
    alone, _ = read_p99(dev)
    print(f"  {profile}, scheduler none: R1 + W256")
    mixed, res = read_p99(dev, W256)
    expected = NEW_PROFILE_W256_IOPS[profile]
    w = res["w256"].write_iops
    print(f"  {profile} R1 P99 alone {us(alone)}, under W256 {us(mixed)}: x{mixed / alone:.1f}; "
          f"W256 {w:.0f} IOPS (model {expected})")
    assert mixed >= 5 * alone
    assert 0.7 * expected <= w <= 1.05 * expected


def test_storm_signal(make_dev):
    """SIGUSR2 toggles a GC storm: on flash (no GC otherwise) dies then
    stall 3 ms after every 4th program, and a writer slows down. Whether
    the storm is on is exact (the model's stall count); the writer's rates
    are the host's as well: runs in which it stole more than 5% of the
    CPUs are made again (3 tries; skipped if none was undisturbed; one
    CI run's `after` came out at 76% of `calm` at 6.7% steal)."""
    dev = make_dev("flash")
    w16 = fio.randwrite("w16", 16)

    def toggle(want):
        os.kill(dev.pid, signal.SIGUSR2)
        deadline = time.monotonic() + 5
        while dev.stats()["storm"] != want:
            assert time.monotonic() < deadline, "SIGUSR2 did not toggle the storm"
            time.sleep(0.05)

    def calm_storm_after():
        assert dev.stats()["storm"] is False
        before = dev.stats()["gc_stalls"]
        calm = run(dev, w16, runtime_s=2, ramp_s=0)["w16"].write_iops
        assert dev.stats()["gc_stalls"] == before
        toggle(True)
        stormy = run(dev, w16, runtime_s=2, ramp_s=0)["w16"].write_iops
        stalls = dev.stats()["gc_stalls"] - before
        toggle(False)
        after = run(dev, w16, runtime_s=2, ramp_s=0)["w16"].write_iops
        print(f"\n  flash W16: {calm:.0f} IOPS, in a storm {stormy:.0f} ({stalls} GC stalls), "
              f"after {after:.0f}")
        assert stalls > 0
        assert dev.stats()["gc_stalls"] - before == stalls
        return calm, stormy, after

    with hoststeal.Monitor() as steal:
        (calm, stormy, after), share = steal.calm_run(calm_storm_after, "flash W16 calm, in a storm, after")
    print(f"  host CPU steal {share:.1%}")
    # 8 dies x 4 programs per (4 x 500 us + 3 ms): 6.4K against 16K.
    assert stormy <= 0.6 * calm
    assert after >= 0.8 * calm


# ------------------------------------------------------------------ 5
def test_stats_match_fio(make_dev):
    dev = make_dev("flash")
    before = dev.stats()
    assert before["profile"] == "flash"
    assert before["params"]["dies"] == 8
    res = run(dev, R1, fio.randwrite("w16", 16), ramp_s=0)
    after = dev.stats()
    fio_reads = res["r1"].read_ios
    fio_writes = res["w16"].write_ios
    dev_reads = after["ops"]["read"]["requests"] - before["ops"]["read"]["requests"]
    dev_writes = after["ops"]["write"]["requests"] - before["ops"]["write"]["requests"]
    late = after["lateness_ns"]
    print(f"\n  fio issued {fio_reads} reads, {fio_writes} writes; flashsim served "
          f"{dev_reads} reads, {dev_writes} writes")
    print(f"  lateness: mean {late['mean'] / 1000:.1f} us, p50 {late['p50'] / 1000:.1f} us, "
          f"p99 {late['p99'] / 1000:.1f} us, max {late['max'] / 1000:.1f} us")
    print(f"  model latency: read mean {after['ops']['read']['model_lat_mean_ns'] / 1000:.0f} us, "
          f"write mean {after['ops']['write']['model_lat_mean_ns'] / 1000:.0f} us")
    assert fio_reads > 0 and fio_writes > 0
    assert dev_reads >= 0.9 * fio_reads
    assert dev_writes >= 0.9 * fio_writes
    # Not wildly more either: nothing else uses this device.
    assert dev_reads <= 1.1 * fio_reads + 100
    assert dev_writes <= 1.1 * fio_writes + 100
    assert isinstance(late["p99"], (int, float)) and late["p99"] >= 0
    assert late["count"] >= dev_reads + dev_writes
    # SIGUSR1 prints the same object to stderr (the daemon's log).
    os.kill(dev.pid, signal.SIGUSR1)
    deadline = time.monotonic() + 5
    while '"lateness_ns"' not in dev.daemon_log():
        assert time.monotonic() < deadline, "no stats on SIGUSR1"
        time.sleep(0.05)


# ------------------------------------------------------------------ 6
def _losetup_backing():
    out = subprocess.run(["losetup", "-a"], stdout=subprocess.PIPE, text=True,
                         check=True).stdout
    return out


def _assert_gone(state):
    losetup = _losetup_backing()
    for key in ("mountpoint", "file", "tmpdir"):
        if state.get(key):
            assert state[key] not in losetup, f"{state[key]} still in losetup -a"
    with open("/proc/mounts") as f:
        mounts = f.read()
    if state.get("mountpoint"):
        assert state["mountpoint"] not in mounts
    if state.get("pid"):
        assert not os.path.exists(f"/proc/{state['pid']}") or \
            testdev._proc_starttime(state["pid"]) != state["pid_starttime"]
    for key in ("file", "tmpdir"):
        if state.get(key):
            assert not os.path.exists(state[key]), f"{state[key]} left behind"


class Boom(Exception):
    pass


@pytest.mark.parametrize("kind", ["flashsim", "shm"])
@pytest.mark.parametrize("fail", [False, True], ids=["clean-exit", "exception"])
def test_teardown_cleans(kind, fail):
    try:
        cm = testdev.flashsim("flash") if kind == "flashsim" else testdev.shm(size_mib=16)
    except testdev.DeviceUnavailable as e:
        pytest.skip(e.reason)
    seen = {}
    try:
        with cm as dev:
            seen = dict(dev.state)
            seen["pid"] = dev.pid
            assert os.path.exists(dev.path)
            assert dev.scheduler() == "none"
            dev.set_scheduler("kyber")
            if kind == "flashsim":
                assert dev.mountpoint in open("/proc/mounts").read()
            if fail:
                raise Boom()
    except Boom:
        pass
    _assert_gone(seen)
    # The loop number is free for others now; if nobody took it, it is back on none.
    name = seen["name"]
    try:
        backing = open(f"/sys/block/{name}/loop/backing_file").read()
    except OSError:
        backing = ""
    if not backing:
        sched = open(f"/sys/block/{name}/queue/scheduler").read()
        assert "[none]" in sched


def test_cli_up_down(tmp_path):
    try:
        testdev.check_fuse()
    except testdev.DeviceUnavailable as e:
        pytest.skip(e.reason)
    state = tmp_path / "dev.json"
    cli = [sys.executable, os.path.join(os.path.dirname(testdev.__file__), "testdev.py")]
    up = subprocess.run(cli + ["up", "flashsim", "--profile", "optane", "--opt", "read-us=20",
                               "--state", str(state)],
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert up.returncode == 0, up.stderr
    path = up.stdout.strip()
    try:
        assert path.startswith("/dev/loop") and os.path.exists(path)
        import json
        saved = json.loads(state.read_text())
        dev = testdev.TestDevice(saved)
        assert dev.stats()["params"]["read_ns"] == 20000
    finally:
        down = subprocess.run(cli + ["down", "--state", str(state)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert down.returncode == 0, down.stderr
    assert not state.exists()
    _assert_gone(saved)
    # Idempotent: a second down is a no-op.
    assert subprocess.run(cli + ["down", "--state", str(state)]).returncode == 0


# ------------------------------------------------------------------ 7
@pytest.mark.parametrize("args,option", [
    (["--profile", "nosuch"], "--profile"),
    (["--dies", "0"], "--dies"),
    (["--read-us", "-5"], "--read-us"),
    (["--size", "1000"], "--size"),
    (["--program-us", "abc"], "--program-us"),
    (["--profile", "gc", "--gc-pages", "0"], "--gc-pages"),
    (["--gc-pages", "-1"], "--gc-pages"),
    (["--gc-us", "0"], "--gc-us"),
    (["--profile", "qdlat", "--contention-us", "0"], "--contention-us"),
    (["--storm-gc-pages", "0"], "--storm-gc-pages"),
    (["--storm-slowdown", "1001"], "--storm-slowdown"),
])
def test_bad_options(args, option, tmp_path):
    if not os.access(testdev.FLASHSIM, os.X_OK):
        pytest.fail(f"{testdev.FLASHSIM} is not built: run 'make build/flashsim'")
    res = subprocess.run([testdev.FLASHSIM] + args + [str(tmp_path)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=10)
    assert res.returncode == 2
    assert option in res.stderr
    print(f"\n  {' '.join(args)}: {res.stderr.strip()}")


def test_help():
    if not os.access(testdev.FLASHSIM, os.X_OK):
        pytest.fail(f"{testdev.FLASHSIM} is not built: run 'make build/flashsim'")
    res = subprocess.run([testdev.FLASHSIM, "--help"], stdout=subprocess.PIPE, text=True,
                         timeout=10)
    assert res.returncode == 0
    for word in ("--profile", "optane", "buffered", "--write-iops", "--buffer-pages",
                 "--spin-us", "stats", "tlc", "gc", "qdlat", "--gc-pages", "--gc-us",
                 "--contention-us", "--storm-gc-pages", "--storm-slowdown", "SIGUSR2"):
        assert word in res.stdout
