#!/usr/bin/env python3
"""An experiment, not part of any build or test: does a grow pulse take Kyber's write
depth from 1 to 2 on the real kernel, as in the simulator?

flashsim `flash`, fio R<rq>+W<wq>. Phases: writes cut to depth 1 (read
target 25 us: congested; write target 1 s); then uncongested at depth 1
(read target 100 ms); then either a single target at P99/2 ("single") or
P99/2 until the depth changes and then P99/1.2 ("pulse").
Prints Kyber's write depth (its kyber_adjust events, through a tracefs
instance of its own) and the writes and reads (/sys/block/DEV/stat) per
second. POLL_S: how often the pulse looks at the depth (default 10 ms).
Usage: pulse_kernel.py pulse|single READ_QD WRITE_QD
"""
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from tests.lib import fio, testdev  # noqa: E402

MODE = sys.argv[1] if len(sys.argv) > 1 else "pulse"
POLL_S = float(os.environ.get("POLL_S", "0.01"))
RQ, WQ = (int(x) for x in (sys.argv[2:4] if len(sys.argv) > 3 else ("16", "16")))


INSTANCE = "/sys/kernel/tracing/instances/kt-pulse"
WRITE_DEPTH = [128]     # Kyber's cap until it reports a change


def follow_adjust(stop):
    """kyber_adjust events of the write domain (one device only here)."""
    with open(os.path.join(INSTANCE, "trace_pipe")) as f:
        while not stop.is_set():
            line = f.readline()
            if "kyber_adjust" in line and " WRITE " in line.upper() + " ":
                try:
                    WRITE_DEPTH[0] = int(line.split()[-1])
                except ValueError:
                    pass


def depth(dev):
    return WRITE_DEPTH[0]


def writes_done(dev):
    with open(f"/sys/block/{dev.name}/stat") as f:
        return int(f.read().split()[4])


def reads_and_ticks(dev):
    with open(f"/sys/block/{dev.name}/stat") as f:
        v = f.read().split()
    return int(v[0]), int(v[3])


def sample(dev, label, seconds):
    rates = []
    for _ in range(seconds):
        w0 = writes_done(dev)
        r0, t0 = reads_and_ticks(dev)
        time.sleep(1)
        rate = writes_done(dev) - w0
        r1, t1 = reads_and_ticks(dev)
        rates.append(rate)
        mean_ms = (t1 - t0) / max(r1 - r0, 1)
        print(f"{label:8s} depth {depth(dev):3d} writes/s {rate:6d} reads/s {r1 - r0:6d} "
              f"read mean {mean_ms:.2f} ms", flush=True)
    return rates


def main():
    mounted = False
    if not os.path.isdir("/sys/kernel/tracing/instances"):
        subprocess.run(["mount", "-t", "tracefs", "nodev", "/sys/kernel/tracing"], check=True)
        mounted = True
    os.makedirs(INSTANCE, exist_ok=True)
    with open(os.path.join(INSTANCE, "events/kyber/kyber_adjust/enable"), "w") as f:
        f.write("1")
    stop = threading.Event()
    threading.Thread(target=follow_adjust, args=(stop,), daemon=True).start()
    try:
        with testdev.flashsim("flash") as dev:
            dev.set_scheduler("kyber")
            t = threading.Thread(target=fio.run, args=(dev.path, fio.pair(RQ, WQ)),
                                 kwargs={"runtime_s": 40, "ramp_s": 0})
            t.start()
            time.sleep(1)
            dev.set_kyber_targets(25_000, 1_000_000_000)
            sample(dev, "cut", 6)
            dev.set_kyber_targets(100_000_000, 1_000_000_000)
            r1 = sample(dev, "depth1", 6)
            iops = sorted(r1)[len(r1) // 2]
            p99 = int(1.1 * WQ / max(iops, 1) * 1e9)  # Little's law, all queued in Kyber
            print(f"depth 1: {iops} writes/s, P99 estimate {p99 / 1e6:.2f} ms", flush=True)
            d0 = depth(dev)
            dev.set_kyber_targets(100_000_000, p99 // 2)
            if MODE == "pulse":
                start = time.monotonic()
                while depth(dev) == d0 and time.monotonic() - start < 1.0:
                    time.sleep(POLL_S)
                print(f"grew to {depth(dev)} after {1000 * (time.monotonic() - start):.0f} ms",
                      flush=True)
                dev.set_kyber_targets(100_000_000, int(p99 / 1.2))
            sample(dev, MODE, 15)
            t.join()
            dev.set_scheduler("none")
    finally:
        stop.set()
        with open(os.path.join(INSTANCE, "events/kyber/kyber_adjust/enable"), "w") as f:
            f.write("0")
        time.sleep(0.2)
        try:
            os.rmdir(INSTANCE)
        except OSError as e:
            print(f"cannot remove {INSTANCE}: {e}", file=sys.stderr)
        if mounted:
            subprocess.run(["umount", "/sys/kernel/tracing"], check=False)


if __name__ == "__main__":
    main()
