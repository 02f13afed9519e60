#!/usr/bin/env python3
"""An experiment, not part of any build or test: how the reads' tail and
the writes' rate depend on the write depth alone, with no scheduler in the
way. R1+W<depth> under scheduler none for each depth given, in interleaved
rounds; per run, fio's read P99 over the run, the median and 90th
percentile of its per-second read P99s (the seconds a goal is judged on),
and the write and read IOPS.
Usage: depth-sweep.py DEVICE DEPTHS [ROUNDS] (e.g. rootfs 1,4,16,64,256 2).
DEVICE: rootfs, shm or flashsim[:PROFILE], as for bench.trace_tuned."""
import os
import statistics
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from bench.trace_tuned import open_device  # noqa: E402
from tests.lib import fio  # noqa: E402

RAMP_S = 2
RUN_S = 12

if len(sys.argv) not in (3, 4):
    sys.exit(__doc__)
kind = sys.argv[1]
try:
    depths = [int(d) for d in sys.argv[2].split(",")]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 2
except ValueError:
    sys.exit(f"Invalid DEPTHS or ROUNDS: {' '.join(sys.argv[2:])}\n\n{__doc__}")
if not depths or min(depths) < 1 or rounds < 1:
    sys.exit(f"DEPTHS must be positive integers and ROUNDS at least 1\n\n{__doc__}")
try:
    device = open_device(kind)
except ValueError as e:
    sys.exit(f"{e}\n\n{__doc__}")
with device as dev, tempfile.TemporaryDirectory() as tmp:
    for r in range(rounds):
        for depth in depths:
            prefix = os.path.join(tmp, f"r{depth}-{r}")
            res = fio.run(dev.path, fio.pair(1, depth, read_extra=fio.hist_log(prefix)),
                          runtime_s=RUN_S, ramp_s=RAMP_S)
            seconds = sorted(p / 1000 for _, p in fio.window_p99(prefix))
            p90 = seconds[int(0.9 * (len(seconds) - 1))] if seconds else 0
            print(f"round {r + 1} W{depth:<4} read P99 {res['r'].read_clat_ns[99.0] / 1000:6.0f} us, "
                  f"per second median {statistics.median(seconds) if seconds else 0:6.0f} us, "
                  f"P90 {p90:6.0f} us; writes {res['w'].write_iops:8.0f}/s, reads {res['r'].read_iops:6.0f}/s",
                  flush=True)
