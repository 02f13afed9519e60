#!/usr/bin/env python3
"""An experiment, not part of any build or test: the operator acts while
kyber-tuned's grow pulse is under way; does the pulse write over it?
kyber-tuned runs on flashsim with an out-of-reach goal (R16+W16,
read-p99=100us), on a private D-Bus, so that it pulses after about 10 settled
seconds. As soon as the daemon's log says a pulse started (its grow lasts
until Kyber changes the depth, 100 ms or more), the operator
  write  writes 77.777 ms to write_lat_nsec (the daemon must leave it, and
         say the device was changed by someone else);
  pause  runs kyber-tunectl pause (the target must stay what it was when
         the command returned);
  reset  runs kyber-tunectl reset (the target must stay the one from before
         kyber-tuned started).
Passes if the target at the end of the run is that value.
Usage: pulse-override.py write|pause|reset"""
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from tests.integration.dbus_helpers import PrivateBus, tunectl  # noqa: E402
from tests.lib import fio, testdev  # noqa: E402
from tests.lib.daemon import Daemon  # noqa: E402

OPERATOR_WRITE_NS = 77_777_000
RUN_S = 40


def read_target(path):
    with open(path) as f:
        return int(f.read())


def operator(mode, d, bus, dev, path, stop, seen):
    """Watches the daemon's log every millisecond; acts as soon as it says a
    pulse started, and records the target that must stay."""
    start = time.monotonic()
    while not stop.is_set():
        if "one more write in flight" in d.stderr():
            if mode == "write":
                with open(path, "w") as f:
                    f.write(str(OPERATOR_WRITE_NS))
                seen["expect"] = OPERATOR_WRITE_NS
            else:
                res = tunectl(bus, mode, dev)
                seen["tunectl"] = (res.returncode, res.stderr.strip())
                seen["expect"] = seen["original"] if mode == "reset" else read_target(path)
            seen["at_s"] = round(time.monotonic() - start, 3)
            return
        time.sleep(0.001)


def main():
    mode = sys.argv[1] if len(sys.argv) == 2 else ""
    if mode not in ("write", "pause", "reset"):
        sys.exit(__doc__)
    bus = PrivateBus()
    try:
        with testdev.flashsim("flash") as dev, tempfile.TemporaryDirectory() as tmp:
            dev.set_scheduler("kyber")
            path = f"/sys/block/{dev.name}/queue/iosched/write_lat_nsec"
            seen = {"original": read_target(path)}
            conf = f"{tmp}/kyber-tuned.conf"
            with open(conf, "w") as f:
                f.write(f"[Goals]\n{dev.name}=read-p99=100us scheduler=kyber\n")
            d = Daemon([f"--config={conf}", f"--state-dir={tmp}/state", f"--runtime-dir={tmp}/run",
                        "--interval=1s"], env={"DBUS_SYSTEM_BUS_ADDRESS": bus.address})
            stop = threading.Event()
            try:
                assert d.ready(), d.stderr()
                t = threading.Thread(target=operator, args=(mode, d, bus, dev.name, path, stop, seen))
                t.start()
                fio.run(dev.path, fio.pair(16, 16), runtime_s=RUN_S, ramp_s=0)
                stop.set()
                t.join()
                final = read_target(path)
                d.stop(signal.SIGTERM)
                log = d.stderr().splitlines()
                print("\n".join(x[:220] for x in log if "pulse" in x or "one more" in x or "someone" in x
                                or "pause" in x or "reset" in x))
                print(f"operator: {mode} at {seen.get('at_s')} s {seen.get('tunectl', '')}; "
                      f"write_lat_nsec must stay {seen.get('expect')}, at the end {final}")
                print("PASS" if "expect" in seen and final == seen["expect"] else "FAIL")
            finally:
                d.close()
                dev.set_scheduler("none")
    finally:
        bus.stop()


if __name__ == "__main__":
    main()
