#!/usr/bin/env python3
"""An experiment, not part of any build or test: an operator writes the write
target while kyber-tuned's grow pulse is under way; does the pulse leave it?
kyber-tuned runs on flashsim with an out-of-reach goal (R16+W16,
read-p99=100us), so that it pulses after about 10 settled seconds. The
operator's value is written as soon as the daemon's log says a pulse started
(the pulse's grow lasts until Kyber changes the depth, 100 ms or more). Passes if the value is still
there at the end and the daemon logged the device as overridden.
Usage: pulse-override.py"""
import os
import signal
import sys
import threading
import time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from tests.lib import fio, testdev  # noqa: E402
from tests.lib.daemon import Daemon  # noqa: E402

OPERATOR_WRITE_NS = 77_777_000
RUN_S = 40


def operator(d, path, stop, seen):
    """Watches the daemon's log every millisecond; writes the operator's
    value as soon as it says a pulse started."""
    start = time.monotonic()
    while not stop.is_set():
        if "one more write in flight" in d.stderr():
            before = open(path).read().strip()
            with open(path, "w") as f:
                f.write(str(OPERATOR_WRITE_NS))
            seen.append((round(time.monotonic() - start, 3), before))
            return
        time.sleep(0.001)


with testdev.flashsim("flash") as dev:
    dev.set_scheduler("kyber")
    target = f"/sys/block/{dev.name}/queue/iosched/write_lat_nsec"
    d = Daemon(["--foreground", "--goal", f"{dev.name}:read-p99=100us scheduler=kyber", "--interval", "1s"])
    stop, seen = threading.Event(), []
    try:
        assert d.ready(), d.stderr()
        t = threading.Thread(target=operator, args=(d, target, stop, seen))
        t.start()
        fio.run(dev.path, fio.pair(16, 16), runtime_s=RUN_S, ramp_s=0)
        stop.set()
        t.join()
        final = int(open(target).read())
        d.stop(signal.SIGTERM)
        log = d.stderr()
        print("operator wrote (s after start, the target before):", seen)
        print("\n".join(x[:220] for x in log.splitlines()[-12:]))
        ok = seen and final == OPERATOR_WRITE_NS and "changed by someone else" in log
        print(f"write_lat_nsec at the end: {final} ({'the operator' if final == OPERATOR_WRITE_NS else 'not theirs'})")
        print("PASS" if ok else "FAIL")
    finally:
        d.close()
        dev.set_scheduler("none")
