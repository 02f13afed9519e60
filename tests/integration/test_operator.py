# SPDX-License-Identifier: LGPL-2.1-or-later
"""Respect the operator (issue 14 (a)-(d)): a goal set at run time stands
over the configured one across restarts; a setting changed by hand while
the daemon stood aside (reset, or not running after a crash) is never
undone; a new disk under an old loop number is not the old one. Each case
exactly as the issue reproduced it, on a private system bus with loop
devices over /dev/shm. No I/O load: these are properties of the daemon's
bookkeeping, not of timing."""

import os
import signal
import subprocess
import tempfile
import time

import pytest

from tests.integration.dbus_helpers import status_json, tunectl
from tests.lib.daemon import wait_for
from tests.lib.require import require_tool


@pytest.fixture
def tmp():
    with tempfile.TemporaryDirectory(prefix="kt-operator-") as t:
        yield t


def service(daemon_factory, bus, tmp, conf=None):
    args = ["--config=" + (conf or ""), f"--state-dir={tmp}/state", f"--runtime-dir={tmp}/run",
            "--interval=200ms", "--settle=50ms"]
    d = daemon_factory(args, env={"DBUS_SYSTEM_BUS_ADDRESS": bus.address})
    assert d.ready(), d.stderr()
    return d


def ok(res):
    assert res.returncode == 0, res.stderr
    return res


def test_runtime_goal_stands_over_config_across_restart(bus, tmp, device_factory, daemon_factory):
    """(a) The configuration gives the device 5 ms, set-goal 1 ms at run
    time: after SIGTERM and a start with the same configuration, 1 ms is in
    force (source runtime) and the journal says the configured goal stands
    behind it; clear-goal brings the configured 5 ms back."""
    dev = device_factory("shm", size_mib=16)
    conf = f"{tmp}/kyber-tuned.conf"
    with open(conf, "w") as f:
        f.write(f"[Goals]\n{dev.name}=read-p99=5ms\n")
    d = service(daemon_factory, bus, tmp, conf)
    st = status_json(bus, dev.name)
    assert (st["goal"], st["goal_source"]) == ("read-p99=5ms mode=latency", "config"), st
    ok(tunectl(bus, "set-goal", dev.name, "read-p99=1ms"))
    st = status_json(bus, dev.name)
    assert (st["goal"], st["goal_source"]) == ("read-p99=1ms mode=latency", "runtime"), st
    assert "replaces the configured goal read-p99=5ms" in d.stderr(), d.stderr()
    assert d.stop() == 0, d.stderr()

    d2 = service(daemon_factory, bus, tmp, conf)
    st = status_json(bus, dev.name)
    assert (st["goal"], st["goal_source"]) == ("read-p99=1ms mode=latency", "runtime"), d2.stderr()
    assert "the configured goal read-p99=5ms mode=latency stands behind" in d2.stderr(), d2.stderr()
    assert "(set at run time)" in ok(tunectl(bus, "status", dev.name)).stdout

    ok(tunectl(bus, "clear-goal", dev.name))
    st = status_json(bus, dev.name)
    assert (st["goal"], st["goal_source"]) == ("read-p99=5ms mode=latency", "config"), d2.stderr()
    assert "applies again" in d2.stderr(), d2.stderr()
    assert dev.scheduler() == "kyber"
    assert d2.stop() == 0, d2.stderr()
    assert dev.scheduler() == "none"


def test_hand_change_after_reset_survives_stop(bus, tmp, device_factory, daemon_factory):
    """(b) reset, then the operator writes mq-deadline: SIGTERM leaves
    mq-deadline, and says why."""
    dev = device_factory("shm", size_mib=16)
    d = service(daemon_factory, bus, tmp)
    ok(tunectl(bus, "set-goal", dev.name, "read-p99=2ms"))
    assert dev.scheduler() == "kyber"
    ok(tunectl(bus, "reset", dev.name))
    assert dev.scheduler() == "none"
    dev.set_scheduler("mq-deadline")
    assert d.stop() == 0, d.stderr()
    assert dev.scheduler() == "mq-deadline", d.stderr()
    assert "changed by someone else (scheduler mq-deadline where kyber-tuned left none)" in d.stderr(), \
        d.stderr()


def test_hand_change_after_reset_is_the_original_on_resume(bus, tmp, device_factory, daemon_factory):
    """After reset and a hand change, resume tunes again, and what the
    operator set is what clear-goal goes back to."""
    dev = device_factory("shm", size_mib=16)
    d = service(daemon_factory, bus, tmp)
    ok(tunectl(bus, "set-goal", dev.name, "read-p99=2ms"))
    ok(tunectl(bus, "reset", dev.name))
    dev.set_scheduler("mq-deadline")
    ok(tunectl(bus, "resume", dev.name))
    assert dev.scheduler() == "kyber"
    assert status_json(bus, dev.name)["original_scheduler"] == "mq-deadline"
    ok(tunectl(bus, "clear-goal", dev.name))
    assert dev.scheduler() == "mq-deadline", d.stderr()
    assert d.stop() == 0, d.stderr()


def test_hand_change_after_crash_is_left(bus, tmp, device_factory, daemon_factory):
    """(c) SIGKILL, the operator writes mq-deadline, the daemon starts: the
    device stays on mq-deadline, overridden, its goal kept; on stop
    mq-deadline is still there."""
    dev = device_factory("shm", size_mib=16)
    d = service(daemon_factory, bus, tmp)
    ok(tunectl(bus, "set-goal", dev.name, "read-p99=2ms"))
    assert dev.scheduler() == "kyber"
    d.stop(signal.SIGKILL)
    dev.set_scheduler("mq-deadline")

    d2 = service(daemon_factory, bus, tmp)
    st = status_json(bus, dev.name)
    assert dev.scheduler() == "mq-deadline", d2.stderr()
    assert st["state"] == "overridden" and st["goal"] == "read-p99=2ms mode=latency", st
    assert st["original_scheduler"] == "mq-deadline", st
    assert "changed by someone else since the previous instance stopped" in d2.stderr(), d2.stderr()
    assert "scheduler mq-deadline where kyber-tuned left kyber" in d2.stderr(), d2.stderr()
    time.sleep(0.6)  # intervals go by: still hands off
    assert dev.scheduler() == "mq-deadline"
    assert d2.stop() == 0, d2.stderr()
    assert dev.scheduler() == "mq-deadline", d2.stderr()


def test_hand_change_after_crash_without_goal_is_left(bus, tmp, device_factory, daemon_factory):
    """A device tuned by a killed instance whose goal is gone (cleared in
    the state file's absence: a fresh state directory), changed by hand
    before the next start: not restored over."""
    dev = device_factory("shm", size_mib=16)
    d = service(daemon_factory, bus, tmp)
    ok(tunectl(bus, "set-goal", dev.name, "read-p99=2ms"))
    d.stop(signal.SIGKILL)
    os.unlink(f"{tmp}/state/state.pb")
    dev.set_scheduler("mq-deadline")
    d2 = service(daemon_factory, bus, tmp)
    assert dev.scheduler() == "mq-deadline", d2.stderr()
    assert "changed by someone else since" in d2.stderr(), d2.stderr()
    assert d2.stop() == 0, d2.stderr()
    assert dev.scheduler() == "mq-deadline"


def swap_backing_file(dev, size_mib=16):
    """losetup -d, and another file attached to the same loop number at
    once. The test device then owns the new file (its teardown detaches
    it and removes it)."""
    fd, new = tempfile.mkstemp(prefix="kyber-shm-swap-", suffix=".img", dir="/dev/shm")
    os.posix_fallocate(fd, 0, size_mib << 20)
    os.close(fd)
    old = dev.state["file"]
    dev.state["file"] = new
    os.unlink(old)
    subprocess.run(["losetup", "-d", dev.path], check=True)
    deadline = time.monotonic() + 5
    while os.path.exists(f"{dev.sysfs}/loop/backing_file"):
        assert time.monotonic() < deadline, f"{dev.path} still attached"
        time.sleep(0.01)
    subprocess.run(["losetup", "--direct-io=on", dev.path, new], check=True)
    dev.state["backing"] = os.path.realpath(new)


def test_new_disk_under_old_loop_number(tmp, device_factory, daemon_factory):
    """(d) losetup -d and a new file on the same loop number: within a few
    intervals the daemon drops the old disk ("another disk took its
    name"), stops tuning it, and on exit leaves the new disk as it is."""
    require_tool("losetup")
    a = device_factory("shm", size_mib=16)
    b = device_factory("shm", size_mib=16)
    d = daemon_factory(["--foreground", "--interval=200ms", "--settle=50ms", "--config=",
                        f"--state-dir={tmp}/state", f"--runtime-dir={tmp}/run",
                        "--goal", f"{a.name}:read-p99=2ms", "--goal", f"{b.name}:read-p99=2ms"])
    assert d.ready(), d.stderr()
    seq = int(open(f"{a.sysfs}/diskseq").read())
    swap_backing_file(a)
    assert int(open(f"{a.sysfs}/diskseq").read()) != seq
    wait_for(lambda: f"{a.name}: another disk took its name" in d.stderr(), timeout=5,
             what="the new disk noticed")
    # The new disk keeps what the loop queue had (the scheduler belongs to
    # the queue, not the file); kyber-tuned no longer writes to it.
    a.set_scheduler("mq-deadline")
    before = a.scheduler()
    assert d.stop() == 0, d.stderr()
    assert a.scheduler() == before == "mq-deadline", d.stderr()
    assert b.scheduler() == "none"
