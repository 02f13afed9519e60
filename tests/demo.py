#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""make demo: kyber-tuned's observer on the built-in flash-model device.

Brings up flashsim (8 dies, 60 us reads, 500 us programs) behind a loop
device, starts `kyber-tuned --observe` on it and runs the study's R1+W256
workload under scheduler none and under a read-protecting Kyber setting,
printing what the observer sees once a second and a summary from fio.
Everything it creates is removed at the end, also on Ctrl-C.
"""

import argparse
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(HERE, "lib"))

import fio  # noqa: E402
import testdev  # noqa: E402

KYBER_TUNED = os.path.join(REPO, "build", "kyber-tuned")


def phase(dev, title, scheduler, targets, runtime):
    print(f"\n=== {title} ===", flush=True)
    dev.set_scheduler(scheduler)
    if targets:
        dev.set_kyber_targets(*targets)
    jobs = [fio.Job("r1", "randread", iodepth=1, cpu=0),
            fio.Job("w256", "randwrite", iodepth=256, cpu=1)]
    res = fio.run(dev.path, jobs, runtime_s=runtime, ramp_s=1)
    return res["r1"].read_clat_ns[99.0], res["w256"].write_iops


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runtime", type=float, default=6, help="seconds per phase (default 6)")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("make demo needs root: it loads BPF and creates a loop device")
    if not os.access(KYBER_TUNED, os.X_OK):
        sys.exit(f"{KYBER_TUNED} is missing: run make first")

    dev = testdev.up_flashsim(profile="flash")
    observer = None
    try:
        print(f"flash-model device: {dev.path} (flashsim, profile flash)")
        observer = subprocess.Popen([KYBER_TUNED, "--observe", dev.name, "--interval", "1s"])
        time.sleep(1)
        rows = []
        with fio.io_lock():
            rows.append(("none", *phase(dev, "scheduler none: R1 + W256", "none", None, args.runtime)))
            rows.append(("kyber 50us/100ms",
                         *phase(dev, "Kyber read 50 us / write 100 ms: R1 + W256", "kyber",
                                (50000, 100000000), args.runtime)))
        time.sleep(1.5)
        print("\n=== summary (fio) ===")
        print(f"{'configuration':<20} {'read P99':>10} {'write IOPS':>11}")
        for name, p99, iops in rows:
            print(f"{name:<20} {p99 / 1e6:>8.2f}ms {iops:>11.0f}")
    finally:
        if observer and observer.poll() is None:
            observer.send_signal(signal.SIGTERM)
            observer.wait(10)
        dev.teardown()


if __name__ == "__main__":
    main()
