# SPDX-License-Identifier: LGPL-2.1-or-later
"""Observer bookkeeping on the real kernel: no per-request entry outlives
its request (merges, mixed ops, flushes, discards), the raw_tp fallback
measures like tp_btf, Kyber's own view shows up, and every failure names
its cause."""

import glob
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import tempfile
import time

import pytest

from tests.integration.dbus_helpers import tunectl
from tests.lib import fio, hoststeal
from tests.lib.daemon import json_lines
from tests.lib.paths import KYBER_TUNED
from tests.lib.require import require_root


def map_entries(pid, name):
    """Entries of the BPF map `name` held by process pid, read with bpftool
    through the map id in /proc/PID/fdinfo: independent of the daemon."""
    for info in glob.glob(f"/proc/{pid}/fdinfo/*"):
        try:
            text = open(info).read()
        except OSError:
            continue
        m = re.search(r"^map_id:\s*(\d+)", text, re.M)
        if not m:
            continue
        show = json.loads(subprocess.check_output(["bpftool", "-j", "map", "show", "id", m.group(1)]))
        if show.get("name") == name:
            return json.loads(subprocess.check_output(["bpftool", "-j", "map", "dump", "id", m.group(1)]))
    raise AssertionError(f"process {pid} holds no BPF map named {name}")


def run_fio(dev, jobs, runtime=3):
    return fio.run(dev.path, jobs, runtime_s=runtime, ramp_s=0)


def kernel_completions(dev):
    """Completed requests per op by the kernel's own accounting
    (/sys/block/DEV/stat). An empty flush (fsync) counts there as a write
    and as a flush; the observer sees one flush request ("other")."""
    f = [int(x) for x in open(f"{dev.sysfs}/stat").read().split()]
    return {"read": f[0], "write": f[4] - f[15], "discard": f[11], "other": f[15]}


# On 6.18 the kernel runs neither block_rq_complete nor block_io_done
# programs for about 1 in 10^4..10^5 requests (measured: 0-0.008%, and up
# to 0.044% when the host takes the CPUs, also in runs with at most 5%
# steal; recursion_misses 0; docs/observer.md). Their entries are
# reclaimed when the request is reused (stale) or when the device goes
# idle (expired). The bound: twice the worst seen, and some margin.
LOST_BOUND = 1e-3


def test_no_leaks_after_merges_mixed_flush_discard(daemon_factory, device_factory):
    """Per-request entries all end: merged-away requests, sequential writes,
    reads and writes mixed, flushes (fsync), discards. Checked in the map
    itself once the device has been idle for an interval, and against the
    kernel's own completion counts."""
    dev = device_factory("shm", size_mib=256)
    # mq-deadline merges requests at insert; Kyber and none do not.
    dev.set_scheduler("mq-deadline")
    d = daemon_factory(["--observe", dev.name, "--json", "--interval", "1s"])
    assert d.ready(), d.stderr()
    before = kernel_completions(dev)
    with fio.io_lock(), hoststeal.Monitor() as steal:
        t0 = time.time()
        run_fio(dev, [fio.Job("seq", "write", iodepth=32, extra={"iodepth_batch_submit": 16})])
        # 64 writes into a 256 KiB window submitted at once: neighbours end up
        # in separate requests that merge when inserted (block_rq_merge).
        run_fio(dev, [fio.Job("cluster", "randwrite", iodepth=64,
                              extra={"size": "256k", "iodepth_batch_submit": 64,
                                     "iodepth_batch_complete_min": 64})])
        run_fio(dev, [fio.Job("mixed", "randrw", iodepth=32, extra={"rwmixread": 50})])
        run_fio(dev, [fio.Job("fsync", "randwrite", iodepth=1, extra={"fsync": 1})])
        run_fio(dev, [fio.Job("trim", "randtrim", iodepth=8)])
        share = steal.share(t0, time.time())
    # One interval still holds the tail of the I/O, the next one is idle:
    # by then everything is counted and nothing may be pending.
    time.sleep(2.5)
    after = kernel_completions(dev)
    entries = map_entries(d.proc.pid, "requests")
    d.stop()
    lines = json_lines(d.communicate())
    assert entries == [], f"{len(entries)} request entries leaked: {entries[:3]}"
    keys = ("completed", "stale", "dropped", "expired", "merged")
    total = {op: {k: sum(l["ops"][op][k] for l in lines) for k in keys}
             for op in ("read", "write", "discard", "other")}
    last = lines[-1]["ops"]
    print(json.dumps(total), {op: after[op] - before[op] for op in after})
    for op in ("read", "write", "discard", "other"):
        assert last[op]["inflight"] == 0 and last[op]["queued"] == 0, (op, last[op])
        assert total[op]["dropped"] == 0, (op, total[op])
        lost = total[op]["stale"] + total[op]["expired"]
        if lost > max(5, LOST_BOUND * total[op]["completed"]) and share > hoststeal.DISTURBED_SHARE:
            hoststeal.skip(f"{op}: {lost} of {total[op]['completed']} completions lost while the "
                           f"host stole {share:.0%} of the CPUs; the bound holds for undisturbed "
                           "runs (docs/observer.md), and no entry was left in the map")
        assert lost <= max(5, LOST_BOUND * total[op]["completed"]), (op, total[op])
    for op in ("read", "write", "discard", "other"):
        kernel = after[op] - before[op]
        if abs(kernel - total[op]["completed"]) > max(5, LOST_BOUND * kernel) \
                and share > hoststeal.DISTURBED_SHARE:
            hoststeal.skip(f"{op}: observer {total[op]['completed']}, kernel {kernel} completions "
                           f"while the host stole {share:.0%} of the CPUs; the bound holds for "
                           "undisturbed runs (docs/observer.md)")
        assert abs(kernel - total[op]["completed"]) <= max(5, LOST_BOUND * kernel), \
            (op, kernel, total[op]["completed"])
        assert total[op]["completed"] > 0, f"no {op} reached the device"
    assert total["write"]["merged"] > 0, "no request merges: the merge path went untested"


def test_raw_tp_fallback_matches_tp_btf(daemon_factory, device_factory):
    """--attach=raw_tp loads the fallback programs; they count the same I/O."""
    dev = device_factory("shm", size_mib=64)
    got = {}
    for mode in ("raw_tp", "tp_btf"):
        with fio.io_lock():
            d = daemon_factory(["--observe", dev.name, "--json", "--interval", "6s", "--count", "1",
                                "--attach", mode])
            assert d.ready(), d.stderr()
            res = run_fio(dev, [fio.Job("r", "randread", iodepth=4)], runtime=3)["r"]
            got[mode] = (json_lines(d.communicate())[0]["ops"]["read"], res.read_ios)
    for mode, (o, ios) in got.items():
        assert abs(o["completed"] - ios) <= max(50, ios * 0.001), (mode, o["completed"], ios)
        # One interval, the first: every completion timed (no sampling yet).
        assert o["total"]["count"] == o["completed"] and o["unsampled"] == 0


def test_kyber_view(daemon_factory, device_factory):
    """Under Kyber with a tight read target and R1+W256 on the flash model,
    Kyber throttles writes: the observer sees the depth fall and throttling."""
    dev = device_factory("flashsim", profile="flash")
    dev.set_scheduler("kyber")
    dev.set_kyber_targets(50000, 100000000)
    d = daemon_factory(["--observe", dev.name, "--json", "--interval", "1s"])
    assert d.ready(), d.stderr()
    with fio.io_lock():
        run_fio(dev, fio.pair(names=("r1", "w256")), runtime=4)
    d.stop()
    lines = json_lines(d.communicate())
    depths = [l["kyber_depth"]["write"] for l in lines if l["kyber_depth"]["write"]]
    throttled = sum(l["ops"]["write"]["kyber_throttled"] for l in lines)
    assert lines[-1]["scheduler"] == "kyber"
    assert lines[-1]["read_target_ns"] == 50000 and lines[-1]["write_target_ns"] == 100000000
    assert depths and min(depths) < 128, depths
    assert throttled > 0


def test_text_output(daemon_factory, device_factory):
    dev = device_factory("shm", size_mib=64)
    dev.set_scheduler("kyber")
    d = daemon_factory(["--observe", dev.path, "--interval", "500ms", "--count", "3"])
    assert d.ready(), d.stderr()
    with fio.io_lock():
        run_fio(dev, [fio.Job("r", "randread", iodepth=2)], runtime=1)
    lines = [l for l in d.communicate().splitlines() if not l.startswith("#")]
    assert len(lines) == 3
    assert any(re.search(r"read [0-9.]+k? IOPS dev=[0-9.]+(ns|us|ms)/", l) for l in lines), lines
    assert all(f"{dev.name} kyber[2.00ms/10.0ms]" in l for l in lines), lines


def write_mbr(path, size_mib):
    """An image with one primary partition (MBR) for partition tests.
    Returns the partition's first sector and its length in sectors."""
    start, sectors = 2048, ((size_mib << 20) >> 9) - 2048
    with open(path, "wb") as f:
        f.truncate(size_mib << 20)
        entry = struct.pack("<B3sB3sII", 0, b"\0\0\0", 0x83, b"\0\0\0", start, sectors)
        f.seek(446)
        f.write(entry)
        f.seek(510)
        f.write(b"\x55\xaa")
    return start, sectors


def run_observe(args, pre=()):
    return subprocess.run([*pre, KYBER_TUNED, "--observe", *args, "--count", "1"],
                          capture_output=True, text=True, timeout=60)


class TestErrors:
    """Every failure exits non-zero with one line that names the cause."""

    def setup_method(self):
        require_root()

    def test_missing_device(self):
        r = run_observe(["nosuchdisk9"])
        assert r.returncode == 1 and "No such block device: nosuchdisk9" in r.stderr

    def test_not_a_block_device(self):
        r = run_observe(["/dev/null"])
        assert r.returncode == 1 and "/dev/null is not a block device" in r.stderr

    def test_not_blk_mq(self):
        bio_based = [p.split("/")[3] for p in glob.glob("/sys/block/*/")
                     if not os.path.exists(p + "mq")]
        if not bio_based:
            pytest.skip("no bio-based block device (zram, brd) on this machine")
        r = run_observe([bio_based[0]])
        assert r.returncode == 1 and f"{bio_based[0]} is not a blk-mq device" in r.stderr

    def test_partition(self):
        with tempfile.TemporaryDirectory() as tmp:
            img = os.path.join(tmp, "disk.img")
            start, sectors = write_mbr(img, 16)
            loop = subprocess.check_output(["losetup", "-f", "--show", "-P", img], text=True).strip()
            try:
                name = os.path.basename(loop)
                part = f"{name}p1"
                # losetup -P scans the table before it returns, where the
                # kernel has a parser for it (CONFIG_MSDOS_PARTITION); where
                # it has none, the partition is added by hand (BLKPG ioctl).
                if not os.path.exists(f"/sys/class/block/{part}"):
                    subprocess.run(["addpart", loop, "1", str(start), str(sectors)], check=True)
                assert os.path.exists(f"/sys/class/block/{part}")
                r = run_observe([part])
                assert r.returncode == 1
                assert f"{part} is a partition; I/O schedulers are set per disk (use {name})" in r.stderr
            finally:
                subprocess.run(["losetup", "-d", loop])

    def test_bad_options(self):
        for args, msg in ((["loop0", "--interval", "5"], "Invalid --interval '5'"),
                          (["loop0", "--interval", "1ms"], "Invalid --interval '1ms'"),
                          (["loop0", "--attach", "kprobe"], "Invalid --attach 'kprobe'")):
            r = run_observe(args)
            assert r.returncode == 2 and msg in r.stderr, r.stderr

    def test_bpf_not_permitted(self, device_factory):
        dev = device_factory("shm", size_mib=16)
        if not os.path.exists("/usr/sbin/capsh"):
            pytest.skip("capsh (libcap2-bin) is not installed")
        r = run_observe([dev.name], pre=["capsh", "--drop=cap_bpf,cap_perfmon,cap_sys_admin",
                                          "--", "-c", 'exec "$@"', "sh"])
        assert r.returncode == 1
        assert "BPF not permitted: missing CAP_BPF and CAP_PERFMON" in r.stderr, r.stderr

    def test_btf_missing(self, device_factory):
        dev = device_factory("shm", size_mib=16)
        # A private mount namespace where /sys/kernel/btf is empty.
        r = run_observe([dev.name], pre=["unshare", "-m", "sh", "-c",
                                          'mount -t tmpfs none /sys/kernel/btf && exec "$@"', "sh"])
        assert r.returncode == 1
        assert "Kernel BTF is missing (/sys/kernel/btf/vmlinux" in r.stderr, r.stderr


def completed_reads(d, name):
    """Reads the daemon's --json intervals of device `name` saw complete."""
    d.stdout_file.flush()
    with open(d.stdout_path) as f:
        return sum(o["ops"]["read"]["completed"] for o in json_lines(f.read()) if o.get("device") == name)


def test_reused_slot_counts_only_its_device(bus, daemon_factory, device_factory):
    """A completion finds its device's statistics through a hint per request
    queue, checked against the device named in the slot (bpf/observer-abi.h,
    KT_QUEUE_HINTS). After A leaves and B takes A's slot, A's I/O (its queue
    still hinting at that slot) must not count for B, and B's own must."""
    a, b = device_factory("shm", size_mib=64), device_factory("shm", size_mib=64)
    tmp = tempfile.mkdtemp(prefix="kt-slot-")
    try:
        d = daemon_factory(["--json", "--config=", "--interval=500ms", f"--state-dir={tmp}/state",
                            f"--runtime-dir={tmp}/run"], env={"DBUS_SYSTEM_BUS_ADDRESS": bus.address})
        assert d.ready(), d.stderr()
        goal = ["read-p99=50ms", "scheduler=auto"]
        for verb, dev in (("set-goal", a), ("clear-goal", a), ("set-goal", b)):
            if verb == "clear-goal":
                with fio.io_lock():
                    run_fio(a, [fio.randread("r", 4)], runtime=1)  # A's queue hints at its slot
            res = tunectl(bus, verb, dev.name, *(goal if verb == "set-goal" else []))
            assert res.returncode == 0, res.stderr
        before = kernel_completions(b)["read"]
        with fio.io_lock():
            run_fio(a, [fio.randread("r", 4)], runtime=1)
            time.sleep(1.2)  # two of B's intervals after A's I/O
            idle = completed_reads(d, b.name)
            run_fio(b, [fio.randread("r", 4)], runtime=1)
        time.sleep(1.2)
        d.stop(signal.SIGTERM)
        own = kernel_completions(b)["read"] - before
        seen = completed_reads(d, b.name)
        assert idle == 0, f"{idle} of A's reads counted for B, which took A's slot"
        assert own > 1000 and abs(seen - own) <= max(2, own * LOST_BOUND), \
            f"B's reads: observer {seen}, kernel {own}"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
