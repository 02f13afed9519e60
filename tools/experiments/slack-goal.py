#!/usr/bin/env python3
"""An experiment, not part of any build or test: kyber-tuned on flashsim with a
goal within reach, a fraction of scheduler none's read P99 for the same
workload. Prints the daemon's per-second write depth, write IOPS and reason,
then fio's write IOPS and read P99 over the run.
Usage: slack-goal.py READ_QD WRITE_QD FRACTION [DEVICE] (e.g. 1 16 0.5 flash).
DEVICE: a flashsim profile (flash, the default; tlc, gc, ...), or shm or
rootfs for a loop device over a file in /dev/shm or on the root fs."""
import os
import signal
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from tests.lib import fio, testdev  # noqa: E402
from tests.lib.daemon import Daemon, json_lines  # noqa: E402

rq, wq, frac = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
kind = sys.argv[4] if len(sys.argv) > 4 else "flash"
device = {"shm": testdev.shm, "rootfs": testdev.rootfs}.get(kind)
with (device() if device else testdev.flashsim(kind)) as dev:
    none = fio.run(dev.path, fio.pair(rq, wq), runtime_s=10, ramp_s=3)
    none_p99 = none["r"].read_clat_ns[99.0]
    goal = f"read-p99={int(frac * none_p99 / 1000)}us"
    print(f"none: read P99 {none_p99 / 1000:.0f} us, writes {none['w'].write_iops:.0f}/s; goal {goal}")
    dev.set_scheduler("kyber")
    d = Daemon(["--foreground", "--goal", f"{dev.name}:{goal} scheduler=kyber", "--json", "--interval", "1s"])
    try:
        assert d.ready(), d.stderr()
        res = fio.run(dev.path, fio.pair(rq, wq), runtime_s=40, ramp_s=0)
        d.stop(signal.SIGTERM)
        for line in json_lines(d.communicate()):
            t = line.get("tuner", {})
            print(line.get("kyber_depth", {}).get("write"), round(line.get("write", {}).get("iops", 0) or 0),
                  t.get("state"), (t.get("reason") or "")[:160])
        print(f"tuned: read P99 {res['r'].read_clat_ns[99.0] / 1000:.0f} us (goal {goal}), "
              f"writes {res['w'].write_iops:.0f}/s")
    finally:
        d.close()
    dev.set_scheduler("none")
