#!/usr/bin/env python3
"""An experiment, not part of any build or test: kyber-tuned on flashsim with an
out-of-reach goal; does its grow pulse take the writes to depth 2?
Usage: pulse-daemon.py READ_QD WRITE_QD GOAL (e.g. 16 16 read-p99=100us)."""
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tests.lib import testdev  # noqa: E402
import tunedrun  # noqa: E402

rq, wq, goal = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
with testdev.flashsim("flash") as dev:
    res, lines, stderr = tunedrun.run(dev, goal, rq, wq)
    tunedrun.print_seconds(lines)
    print("\n".join(x for x in stderr.splitlines() if "pulse" in x or "rror" in x)[-2000:])
    for k, v in res.items():
        print(k, v)
