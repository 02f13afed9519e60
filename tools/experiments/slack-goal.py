#!/usr/bin/env python3
"""An experiment, not part of any build or test: kyber-tuned with a goal
within reach, a fraction of scheduler none's read P99 for the same workload.
Prints the daemon's per-second write depth, write IOPS and reason, then
fio's write IOPS and read P99 over the run.
Usage: slack-goal.py READ_QD WRITE_QD FRACTION [DEVICE] (e.g. 1 16 0.5 flash).
DEVICE: a flashsim profile (flash, the default; tlc, gc, ...), or shm or
rootfs for a loop device over a file in /dev/shm or on the root fs."""
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tests.lib import fio, testdev  # noqa: E402
import tunedrun  # noqa: E402

rq, wq, frac = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
kind = sys.argv[4] if len(sys.argv) > 4 else "flash"
device = {"shm": testdev.shm, "rootfs": testdev.rootfs}.get(kind)
with (device() if device else testdev.flashsim(kind)) as dev:
    none = fio.run(dev.path, fio.pair(rq, wq), runtime_s=10, ramp_s=3)
    none_p99 = none["r"].read_clat_ns[99.0]
    goal = f"read-p99={int(frac * none_p99 / 1000)}us"
    print(f"none: read P99 {none_p99 / 1000:.0f} us, writes {none['w'].write_iops:.0f}/s; goal {goal}")
    res, lines, _ = tunedrun.run(dev, goal, rq, wq)
    tunedrun.print_seconds(lines, 160)
    print(f"tuned: read P99 {res['r'].read_clat_ns[99.0] / 1000:.0f} us (goal {goal}), "
          f"writes {res['w'].write_iops:.0f}/s")
