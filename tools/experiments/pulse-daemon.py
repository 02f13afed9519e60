#!/usr/bin/env python3
"""An experiment, not part of any build or test: kyber-tuned on flashsim with an
out-of-reach goal; does its grow pulse take the writes to depth 2?
Usage: pulse-daemon.py READ_QD WRITE_QD GOAL (e.g. 16 16 read-p99=100us)."""
import os
import signal
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from tests.lib import fio, testdev  # noqa: E402
from tests.lib.daemon import Daemon, json_lines  # noqa: E402

rq, wq, goal = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
with testdev.flashsim("flash") as dev:
    dev.set_scheduler("kyber")
    d = Daemon(["--foreground", "--goal", f"{dev.name}:{goal} scheduler=kyber", "--json", "--interval", "1s"])
    try:
        assert d.ready(), d.stderr()
        res = fio.run(dev.path, fio.pair(rq, wq), runtime_s=40, ramp_s=0)
        d.stop(signal.SIGTERM)
        lines = json_lines(d.communicate())
        for l in lines:
            t = l.get("tuner", {})
            print(l.get("kyber_depth", {}).get("write"), round(l.get("write", {}).get("iops", 0) or 0),
                  t.get("state"), (t.get("reason") or "")[:150])
        print("\n".join(x for x in d.stderr().splitlines() if "pulse" in x or "rror" in x)[-2000:])
        for k, v in res.items():
            print(k, v)
    finally:
        d.close()
    dev.set_scheduler("none")
