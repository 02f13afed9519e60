# SPDX-License-Identifier: GPL-2.0-or-later
"""Does timing requests by the kernel's stamps agree with timing them by the
observer's own clock? (docs/observer.md, "Stamps against the observer's own
clock".)

On one device under Kyber, R4 + W16 (4 KiB, io_uring, direct) runs with
`kyber-tuned --observe DEV --json` (the stamps) and with `--track-requests`
(insert/issue timed by bpf_ktime_get_ns()), alternated for --rounds rounds,
the order flipped every round. Printed: per op and way, the medians over the
1 s intervals of the total mean, P50 and P99, and of the queue mean. Runs
are compared, not the same I/Os: the tracked runs carry the tracking's own
cost per I/O.

Run from the repository root as root: python3 -m bench.stamps_check [flash|shm]
"""

import argparse
import json
import statistics
import subprocess
import sys
import time

from bench import benchlib
from tests.lib import fio, testdev
from tests.lib.paths import KYBER_TUNED

MODES = ("stamps", "tracked")
RUNTIME_S = 5
MIN_COMPLETIONS = 100  # an interval with fewer is an edge of a run


def one_run(dev, mode):
    args = [KYBER_TUNED, "--observe", dev.name, "--json", "--interval", "1s"]
    if mode == "tracked":
        args.append("--track-requests")
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
    try:
        time.sleep(1.5)  # attached, and one interval to settle how devices are timed
        fio.run(dev.path, [fio.randread("r4", 4), fio.randwrite("w16", 16)], runtime_s=RUNTIME_S,
                ramp_s=0)
        time.sleep(1.2)
    finally:
        proc.terminate()
        out = proc.communicate(timeout=10)[0]
    rows = []
    for line in out.splitlines():
        o = json.loads(line)
        for op in ("read", "write"):
            r = o["ops"][op]
            if r["completed"] >= MIN_COMPLETIONS:
                rows.append((op, r["completed"], r["stamped"], r["total"], r["queue"]))
    return rows


def median_of(rows, span, key):
    vals = [r[span][key] for r in rows if r[span] and r[span][key] is not None]
    return statistics.median(vals) / 1e3 if vals else float("nan")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("kind", choices=("flash", "shm"), nargs="?", default="flash")
    ap.add_argument("--rounds", type=int, default=4)
    args = ap.parse_args(argv)
    benchlib.require_root("stamps_check.py")
    benchlib.catch_signals()
    res = {m: [] for m in MODES}
    with fio.io_lock():
        cm = testdev.shm(size_mib=256) if args.kind == "shm" else testdev.flashsim(profile="flash")
        with cm as dev:
            dev.set_scheduler("kyber")
            try:
                for rnd in range(args.rounds):
                    for mode in MODES if rnd % 2 == 0 else reversed(MODES):
                        res[mode] += one_run(dev, mode)
            finally:
                dev.set_scheduler("none")
    print("| device | op | timed by | intervals | stamped share | total mean / P50 / P99 (us) "
          "| queue mean (us) |")
    print("|---|---|---|---:|---:|---|---:|")
    for op in ("read", "write"):
        for mode in MODES:
            rows = [r[1:] for r in res[mode] if r[0] == op]
            rows = [dict(completed=c, stamped=s, total=t, queue=q) for c, s, t, q in rows]
            share = sum(r["stamped"] for r in rows) / max(1, sum(r["completed"] for r in rows))
            print(f"| {args.kind} | {op} | {mode} | {len(rows)} | {share:.2f} | "
                  f"{median_of(rows, 'total', 'mean_ns'):.1f} / {median_of(rows, 'total', 'p50_ns'):.1f}"
                  f" / {median_of(rows, 'total', 'p99_ns'):.0f} | {median_of(rows, 'queue', 'mean_ns'):.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
