# SPDX-License-Identifier: LGPL-2.1-or-later
"""make demo: kyber-tuned on the built-in flash-model device.

Brings up flashsim (8 dies, 60 us reads, 500 us programs: reads wait behind
programs, like a flash SSD) behind a loop device and runs the study's
R1+W256 workload (one latency-sensitive reader, a writer with 256 requests
outstanding) three times: under scheduler none, under Kyber's defaults, and
under kyber-tuned with the goal read-p99=2ms. It prints the tuner's
decisions as they happen and a table measured in this run. Everything it
creates is removed at the end, also on Ctrl-C.

Run from the repository root: python3 -m tests.demo [--runtime S] (root).
"""

import argparse
import os
import signal
import subprocess
import sys
import time

from tests.lib import fio, testdev
from tests.lib.paths import KYBER_TUNED

GOAL = "read-p99=2ms"


def r1_w256(dev, runtime, ramp):
    res = fio.run(dev.path, fio.pair(names=("r1", "w256")), runtime_s=runtime, ramp_s=ramp)
    return res["r1"].read_clat_ns[99.0], res["w256"].write_iops


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runtime", type=float, default=8, help="seconds measured per configuration (8)")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("make demo needs root: it loads BPF and creates a loop device")
    if not os.access(KYBER_TUNED, os.X_OK):
        sys.exit(f"{KYBER_TUNED} is missing: run make first")

    dev = testdev.up_flashsim(profile="flash")
    tuner = None
    rows = []
    try:
        print(f"flash-model device {dev.path}; workload R1+W256 (4 KiB random, io_uring, direct)\n")
        with fio.io_lock():
            print("1/3 scheduler none ...", flush=True)
            dev.set_scheduler("none")
            rows.append(("none", *r1_w256(dev, args.runtime, 1)))
            print("2/3 Kyber, default targets (read 2 ms, write 10 ms) ...", flush=True)
            dev.set_scheduler("kyber")
            rows.append(("Kyber defaults", *r1_w256(dev, args.runtime, 1)))
            dev.set_scheduler("none")
            print(f"3/3 kyber-tuned --goal {dev.name}:{GOAL}; its decisions:\n", flush=True)
            tuner = subprocess.Popen([KYBER_TUNED, "--foreground", "--goal", f"{dev.name}:{GOAL}"])
            time.sleep(1.5)
            # The tuner converges in a few seconds; measure after that.
            rows.append((f"kyber-tuned {GOAL}", *r1_w256(dev, args.runtime, 6)))
            tuner.send_signal(signal.SIGTERM)
            tuner.wait(15)
        print(f"\n{'configuration':<28} {'read P99':>10} {'write IOPS':>11}")
        for name, p99, iops in rows:
            print(f"{name:<28} {p99 / 1e6:>8.2f}ms {iops:>11.0f}")
        none_p99 = rows[0][1]
        print(f"\nkyber-tuned: read P99 {none_p99 / rows[2][1]:.1f}x lower than scheduler none, "
              f"{rows[2][2] / rows[0][2]:.0%} of its write IOPS (measured above, fio's own numbers).")
    finally:
        if tuner and tuner.poll() is None:
            tuner.send_signal(signal.SIGTERM)
            tuner.wait(15)
        dev.teardown()


if __name__ == "__main__":
    main()
