# SPDX-License-Identifier: LGPL-2.1-or-later
"""The D-Bus service and kyber-tunectl on the real kernel (issue 4).

A private system-bus-like dbus-daemon (dbus_helpers.PrivateBus) runs with
the shipped policy; the real daemon runs in service mode against it
(DBUS_SYSTEM_BUS_ADDRESS) on a flash-model device; everything is driven
through build/kyber-tunectl and busctl, as root and as user nobody.
Read latency is judged by fio's own per-second histograms, as in
test_tuner.py. All I/O goes through tests/lib/fio.py (machine-wide lock).
"""

import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time

import pytest

from tests.integration.dbus_helpers import (BUS_NAME, DEVICE_IFACE, DEVICE_PREFIX, KYBER_TUNECTL,
                                            MANAGER_IFACE, MANAGER_PATH, FakePolkit,
                                            SignalWatch, busctl, dbus_send_error, has_python_dbus, run,
                                            status_json, tunectl)
from tests.lib import fio, hoststeal
from tests.lib.require import require_built

GOAL = "read-p99=2ms scheduler=kyber"
GOAL_NS = 2_000_000
# test_set_goal_meets_goal_and_status runs R1+W256 for SET_GOAL_RUN_S and
# judges the share of windows meeting the goal on at least MIN_CALM_WINDOWS
# of those after 5 s the host did not disturb (of about 24): over fewer, one
# window moves the share by more than 15 points. fio's first windows and its
# last may be missing from its log, so SET_GOAL_RUN_S - 8 after 5 s are asked.
SET_GOAL_RUN_S = 30
MIN_CALM_WINDOWS = 6
INVALID_ARGS = "org.freedesktop.DBus.Error.InvalidArgs"
NO_SUCH_DEVICE = "org.kybertune.KyberTune1.Error.NoSuchDevice"
ACCESS_DENIED = "org.freedesktop.DBus.Error.AccessDenied"


# ---------------------------------------------------------------- fixtures
@pytest.fixture
def flash(device_factory):
    return device_factory("flashsim", profile="flash")


class Service:
    def __init__(self, daemon, tmp):
        self.d = daemon
        self.tmp = tmp
        self.record = os.path.join(tmp, "record.pb")

    def json_lines(self):
        self.d.stdout_file.flush()
        with open(self.d.stdout_path) as f:
            return [line for line in f if line.startswith("{")]


@pytest.fixture
def service(bus, flash, daemon_factory):
    """kyber-tuned in service mode (no --foreground) on the private bus,
    with its own state, runtime and record paths and no configuration."""
    tmp = tempfile.mkdtemp(prefix="kt-service-")
    svc = None
    try:
        args = ["--json", "--config=", f"--state-dir={tmp}/state", f"--runtime-dir={tmp}/run",
                f"--record={tmp}/record.pb"]
        d = daemon_factory(args, env={"DBUS_SYSTEM_BUS_ADDRESS": bus.address})
        assert d.ready(), d.stderr()
        svc = Service(d, tmp)
        yield svc
        rc = d.stop(signal.SIGTERM)
        assert rc == 0, d.stderr()
    finally:
        if svc:
            svc.d.stop(signal.SIGTERM)
        shutil.rmtree(tmp, ignore_errors=True)


class Background:
    """fio in a thread, holding the machine-wide I/O lock from before it
    starts: started() returns once the lock is ours and fio runs."""

    def __init__(self, dev, jobs, runtime_s):
        self.locked = threading.Event()
        self.result, self.error = None, None

        def body():
            try:
                with fio.io_lock():
                    self.locked.set()
                    self.result = fio.run(dev.path, jobs, runtime_s=runtime_s, ramp_s=0)
            except BaseException as e:  # reported by join()
                self.error = e
                self.locked.set()

        self.thread = threading.Thread(target=body)
        self.thread.start()

    def started(self, timeout=1800):
        assert self.locked.wait(timeout), "the I/O lock never came"
        if self.error:
            raise self.error
        time.sleep(0.5)  # fio's start-up

    def join(self):
        self.thread.join()
        if self.error:
            raise self.error
        return self.result


def set_goal(bus, dev, goal=GOAL):
    res = tunectl(bus, "set-goal", dev.name, *goal.split())
    assert res.returncode == 0, res.stderr
    assert res.stderr == ""


# ---------------------------------------------------------------- 1. goal met
def test_set_goal_meets_goal_and_status(bus, flash, service):
    """set-goal through kyber-tunectl; R1+W256: the goal read-p99=2ms is met
    in most undisturbed 1-s windows from 5 s on (fio's own histograms, the
    seconds the host took its CPUs left out: tests/lib/hoststeal.py,
    tests/conftest.py runs it again if too few are left); status --json
    agrees with sysfs while the I/O runs. (The tuner's own bounds, 90% of
    the windows over a minute, are test_tuner.py's: here 30 s show that a
    goal set over D-Bus is the goal tuned for; 30 rather than 20 so that a
    run the host took a third of still has MIN_CALM_WINDOWS to judge.)"""
    with tempfile.TemporaryDirectory() as tmp, hoststeal.Monitor() as steal:
        set_goal(bus, flash)
        t0 = time.time()
        io = Background(flash, fio.pair(read_extra=fio.hist_log(f"{tmp}/r")), runtime_s=SET_GOAL_RUN_S)
        io.started()
        time.sleep(10)
        for _ in range(5):
            st = status_json(bus, flash.name)
            sysfs = flash.kyber_targets()
            # A change may land between the two reads: read again.
            if (st["read_target_ns"], st["write_target_ns"]) == sysfs:
                break
            time.sleep(0.3)
        st_nobody = status_json(bus, flash.name, user="nobody")
        io.join()
        windows = fio.window_p99(f"{tmp}/r")
        t1 = time.time()
        share = steal.share(t0, t1)
    # flashsim runs in this VM's CPUs: when the host takes them the device
    # is slower and the goal may truly be out of reach (tests/lib/hoststeal.py).
    disturbed = steal.disturbed(t0, t1)
    print(f"\nstatus: {st}; host CPU steal during the run {share:.1%}")
    print("read P99 per 1-s window:", [(ms, round(p / 1e3)) for ms, p in windows])

    assert st["device"] == flash.name
    assert st["goal"] == "read-p99=2ms mode=latency scheduler=kyber"
    assert st["scheduler"] == "kyber"
    assert st["state"] in ("tracking", "holding") or (disturbed and st["state"] == "infeasible"), st
    assert st["reason"]
    assert (st["read_target_ns"], st["write_target_ns"]) == sysfs
    assert st["read_iops"] > 0 and st["write_iops"] > 0
    assert st["read_p99_ns"] > 0 and st["write_p99_ns"] > 0
    assert st["original_scheduler"] == "none"
    assert st["original_read_target_ns"] == 0 and st["original_write_target_ns"] == 0
    assert st["interval_ns"] > 0.5e9
    for key in ("id", "read_p50_ns", "write_p50_ns", "read_depth", "write_depth", "goal_metric_ns",
                "goal_met", "changes"):
        assert key in st
    assert st_nobody["device"] == flash.name

    late = [(ms, p) for ms, p in windows if ms > 5100]
    assert len(late) >= SET_GOAL_RUN_S - 8
    # Judged on the seconds the host left alone: a CI run at 4% steal over
    # the whole run had 19% in 4 of its seconds and reads at 4.6-6.7 ms in
    # them (every check above had passed).
    calm, _ = steal.clean(t0, late, "reads after 5 s", min_kept=MIN_CALM_WINDOWS)
    met = sum(p <= GOAL_NS for _, p in calm) / len(calm)
    print(f"met in {met:.0%} of {len(calm)} undisturbed windows after 5 s")
    if met <= 0.5:
        for line in service.json_lines():  # the tuner's view, for the failure report
            o = json.loads(line)
            print(f"  {o['tuner']['state']:10} {o['read_target_ns']}/{o['write_target_ns']}"
                  f"{' *' if o['tuner']['changed'] else ''} {o['tuner']['reason']}")
    assert met > 0.5


# ---------------------------------------------------------------- 2. access
def test_unprivileged_caller_is_denied(bus, flash, service):
    """As nobody every changing call is refused with AccessDenied and
    changes nothing; reading works."""
    set_goal(bus, flash)
    time.sleep(1.5)
    before_targets, before_sched = flash.kyber_targets(), flash.scheduler()
    before = status_json(bus, flash.name)

    for verb in (["set-goal", flash.name, "read-p99=5ms scheduler=kyber"], ["clear-goal", flash.name],
                 ["set-weight", flash.name, "tenants/a", "100"], ["clear-weight", flash.name, "tenants/a"],
                 ["pause", flash.name], ["resume", flash.name], ["reset", flash.name]):
        res = tunectl(bus, *verb, user="nobody")
        assert res.returncode == 1, (verb, res.stdout, res.stderr)
        assert "Access denied: changing kyber-tuned's settings needs root or polkit authorization" \
            in res.stderr, res.stderr
        assert res.stderr.count("\n") == 1
    for method, args in (("SetGoal", [flash.name, "read-p99=5ms scheduler=kyber"]), ("Pause", [flash.name]),
                         ("ClearGoal", [flash.name]), ("Reset", [flash.name]),
                         ("ClearWeight", [flash.name, "tenants/a"])):
        name, msg = dbus_send_error(bus, method, *args, user="nobody")
        assert name == ACCESS_DENIED, (method, name, msg)
        assert "needs root or polkit authorization" in msg and "polkit is not running" in msg

    after = status_json(bus, flash.name)
    assert flash.kyber_targets() == before_targets
    assert flash.scheduler() == before_sched == "kyber"
    assert after["goal"] == before["goal"] == "read-p99=2ms mode=latency scheduler=kyber"
    assert after["state"] != "paused"

    # Reading is open to everyone.
    for verb in (["status"], ["status", flash.name], ["list"], ["list", "--json"],
                 ["hist", flash.name], ["hist", flash.name, "write", "--json"]):
        res = tunectl(bus, *verb, user="nobody")
        assert res.returncode == 0, (verb, res.stderr)
    res = busctl(bus, "introspect", BUS_NAME, f"{DEVICE_PREFIX}/{flash.name}", user="nobody")
    assert res.returncode == 0 and "ReadTarget" in res.stdout, res.stderr
    # Properties are read-only, also for root.
    res = busctl(bus, "set-property", BUS_NAME, MANAGER_PATH, MANAGER_IFACE, "Interval", "t", "5")
    assert res.returncode != 0


def test_polkit_authorizes_per_action(bus, flash, service):
    """With polkit on the bus, a caller it authorizes for an action may do
    that (and only that); the subject is the caller's bus name, and
    interaction is allowed only when the caller asked for it."""
    if not has_python_dbus():
        pytest.skip("python3-dbus and python3-gi are needed for the fake polkit")
    set_goal(bus, flash)
    pk = FakePolkit(bus, ["org.kybertune.KyberTune1.set-goal", "org.kybertune.KyberTune1.pause"])
    try:
        res = tunectl(bus, "set-goal", flash.name, "read-p99=3ms scheduler=kyber", user="nobody")
        assert res.returncode == 0, res.stderr
        assert status_json(bus, flash.name)["goal"] == "read-p99=3ms mode=latency scheduler=kyber"
        res = tunectl(bus, "pause", flash.name, user="nobody")
        assert res.returncode == 0, res.stderr
        assert status_json(bus, flash.name)["state"] == "paused"
        targets = flash.kyber_targets()
        res = tunectl(bus, "reset", flash.name, user="nobody")
        assert res.returncode == 1 and "Access denied" in res.stderr, res.stderr
        assert flash.kyber_targets() == targets and flash.scheduler() == "kyber"
        # busctl asks for interactive authorization by default.
        res = busctl(bus, "call", BUS_NAME, MANAGER_PATH, MANAGER_IFACE, "ClearGoal", "s", flash.name,
                     user="nobody")
        assert res.returncode != 0
        # Root never asks polkit.
        res = tunectl(bus, "resume", flash.name)
        assert res.returncode == 0, res.stderr
        calls = pk.calls()
    finally:
        pk.stop()
    print(calls)
    assert [c["action"] for c in calls] == ["org.kybertune.KyberTune1." + a
                                            for a in ("set-goal", "pause", "reset", "clear-goal")]
    assert all(c["kind"] == "system-bus-name" and c["name"].startswith(":1.") for c in calls)
    assert [c["flags"] for c in calls] == [0, 0, 0, 1]
    assert status_json(bus, flash.name)["goal"] == "read-p99=3ms mode=latency scheduler=kyber"


# ---------------------------------------------------------------- 3. bad input
def malformed_goals():
    """At least 200 goals the grammar refuses (shared/goal.h)."""
    bad_tokens = [
        # percentiles
        "read-p98=2ms", "read-p100=2ms", "read-p0=1ms", "read-p=2ms", "read-p99.99=2ms",
        "read-p-1=2ms", "read-P99=2ms", "read-p9=2ms", "read-p999=2ms", "read-p99.0=2ms",
        "read-p50.5=1ms", "write-p99=2ms", "read-avg=2ms", "read-pxx=1ms",
        # units and values
        "read-p99=2", "read-p99=2m", "read-p99=2mss", "read-p99=ms", "read-p99=2hours",
        "read-p99=-2ms", "read-p99=2.ms.", "read-p99=0x10ms", "read-p99=1e3us", "read-p99=2 ",
        "read-p99=", "read-p99==2ms", "read-p99=2ms=3ms", "read-p99=nan", "read-p99=infms",
        "read-p99=2Ms", "read-p99=2MS", "read-p99=.ms", "read-p99=2d",
        # out of range, huge
        "read-p99=0ns", "read-p99=999ns", "read-p99=101s", "read-p99=1000000000000000000000s",
        "read-p99=18446744073709551616ns", "read-p99=99999999999999999999999999ms",
        "read-p99=0.0000001us", "read-p99=0s", "read-p99=0." + "0" * 80 + "1s",
        "write-iops-min=0", "write-iops-min=1000000001", "write-iops-min=2G", "write-iops-min=-1",
        "write-iops-min=1.5x", "write-iops-min=", "write-iops-min=k", "write-iops-min=99999999999999999999",
        "write-iops-min=10kk", "write-iops-min=ten",
        # modes, keys, junk
        "mode=fast", "mode=", "mode=LATENCY", "mode=latency2", "Mode=latency", "foo", "foo=bar", "=",
        "=2ms", "read", "read-", "-", "--read-p99=2ms", "read_p99=2ms", "p99=2ms", "99",
        # unicode
        "read-p99=2мс", "réad-p99=2ms", "read-p99=２ms", "read-p99=2ms\u00a0", "\U0001f680",
        "read-p99=2µsx", "mode=latência", "read-p99=\u202e2ms",
        # control characters
        "read-p99=2ms\x01", "\x7f", "read-p99=\x1b[2J2ms",
        # too long
        "read-p99=" + "0" * 60 + "2ms", "a" * 65, "read-p99=" + "9" * 5000 + "ms",
    ]
    goals = ["", " ", ",,,", "\t", "mode=latency", "write-iops-min=10k", "mode=advise",
             "mode=balanced write-iops-min=1k",
             "read-p99=2ms read-p99=3ms", "read-p99=2ms read-p90=1ms",
             "read-p99=2ms mode=latency mode=balanced",
             "read-p99=2ms write-iops-min=1k write-iops-min=2k",
             "read-p99=2 ms", "read-p99 = 2ms", "a" * 65536,
             "read-p99=2ms " + "x" * 1000]
    for tok in bad_tokens:
        goals.append(tok)
        goals.append(f"read-p99=2ms {tok}")
        goals.append(f"{tok},mode=latency")
    seen, out = set(), []
    for g in goals:
        if g not in seen:
            seen.add(g)
            out.append(g)
    assert len(out) >= 200, len(out)
    return out


def test_malformed_goals_rejected(bus, flash, service):
    """Every malformed goal over D-Bus: InvalidArgs naming the bad token;
    the daemon keeps running its intervals, the goal is unchanged. Bad
    device names too."""
    set_goal(bus, flash)
    time.sleep(1.5)
    lines_before = len(service.json_lines())
    t0 = time.monotonic()
    goals = malformed_goals()
    failures = []
    for g in goals:
        res = busctl(bus, "call", BUS_NAME, MANAGER_PATH, MANAGER_IFACE, "SetGoal", "ss", flash.name, g)
        if res.returncode == 0 or "Invalid goal" not in res.stderr:
            failures.append(("busctl", g[:80], res.returncode, res.stderr.strip()[:200]))
        name, msg = dbus_send_error(bus, "SetGoal", flash.name, g)
        if name != INVALID_ARGS:
            failures.append(("dbus-send", g[:80], name, msg[:200]))
    elapsed = time.monotonic() - t0
    assert not failures, failures[:10]
    print(f"\n{len(goals)} malformed goals rejected in {elapsed:.1f} s")

    # Bad device names with a good goal.
    for dev, want in (("", INVALID_ARGS), ("../../etc", INVALID_ARGS), ("a b", INVALID_ARGS),
                      ("x" * 5000, INVALID_ARGS), ("loop0/../sda", INVALID_ARGS),
                      ("/dev/null", INVALID_ARGS), ("/nosuchdir/x", NO_SUCH_DEVICE)):
        name, msg = dbus_send_error(bus, "SetGoal", dev, GOAL)
        assert name == want, (dev[:40], name, msg)
    # A name or /dev path that may yet appear: the goal waits for it.
    for dev in ("nosuchdisk0", "/dev/nosuchdisk0"):
        name, msg = dbus_send_error(bus, "SetGoal", dev, GOAL)
        assert name == "", (dev, name, msg)
        name, msg = dbus_send_error(bus, "ClearGoal", dev)
        assert name == "", (dev, name, msg)
    for method in ("Pause", "Resume", "Reset", "ClearGoal"):
        name, msg = dbus_send_error(bus, method, "nosuchdisk0")
        assert name == NO_SUCH_DEVICE and "has no goal" in msg, (method, name, msg)
    res = busctl(bus, "call", BUS_NAME, f"{DEVICE_PREFIX}/{flash.name}", DEVICE_IFACE, "GetHistogram",
                 "s", "sideways")
    assert res.returncode != 0 and "Invalid op" in res.stderr

    # Still the same daemon, still tuning: intervals went on meanwhile.
    assert service.d.proc.poll() is None, service.d.stderr()
    assert not any("STOPPING=1" in n for n in service.d.notifications)
    time.sleep(1.5)
    lines_after = len(service.json_lines())
    assert lines_after - lines_before >= elapsed - 2, (lines_before, lines_after, elapsed)
    st = status_json(bus, flash.name)
    assert st["goal"] == "read-p99=2ms mode=latency scheduler=kyber"
    assert flash.scheduler() == "kyber"


# ---------------------------------------------------------------- 4. round trip
def test_not_running(bus):
    """kyber-tunectl against a bus without the daemon: one clear line."""
    for verb in (["status"], ["list"], ["status", "loop0"], ["pause", "loop0"], ["monitor"],
                 ["hist", "loop0"], ["set-goal", "loop0", "read-p99=1ms scheduler=kyber"]):
        res = tunectl(bus, *verb, timeout=30)
        assert res.returncode == 1, (verb, res.stdout, res.stderr)
        assert res.stderr == ("kyber-tunectl: kyber-tuned is not running (org.kybertune.KyberTune1 "
                              "is not on the system bus)\n"), res.stderr


def test_usage_errors():
    require_built(KYBER_TUNECTL)
    for args, rc in (([], 2), (["frobnicate"], 2), (["pause"], 2), (["list", "x"], 2),
                     (["set-goal", "loop0"], 2), (["--bogus"], 2), (["--help"], 0), (["--version"], 0)):
        res = subprocess.run([KYBER_TUNECTL, *args], capture_output=True, text=True, timeout=10)
        assert res.returncode == rc, (args, res.stderr)
    res = subprocess.run([KYBER_TUNECTL, "--version"], capture_output=True, text=True, timeout=10)
    assert res.stdout.startswith("kyber-tunectl ")


def test_malformed_arguments_named_without_the_daemon(bus):
    """A malformed goal or weight is named before the bus is reached: one
    line, exit 2, also where the daemon is not running; a well-formed one
    goes on to the bus (and finds no daemon there)."""
    for verb, token in ((["set-goal", "loop0", "read-p99=2xs"], "read-p99=2xs"),
                        (["set-goal", "loop0", "read-p99=1ms", "mode=fast"], "mode=fast"),
                        (["set-weight", "loop0", "tenants/a", "0"], "Invalid weight '0'")):
        res = tunectl(bus, *verb, timeout=30)
        assert res.returncode == 2 and token in res.stderr and res.stderr.count("\n") == 1, (verb, res.stderr)
        assert "not running" not in res.stderr, res.stderr
    res = tunectl(bus, "set-weight", "loop0", "tenants/a", "100", timeout=30)
    assert res.returncode == 1 and "kyber-tuned is not running" in res.stderr, res.stderr


def test_round_trip(bus, flash, service):
    """list/status/pause/resume/reset/clear-goal with sysfs checked,
    unknown devices, introspection, PropertiesChanged at most once per
    interval, monitor, hist and replay of the flight recorder."""
    # Kyber with custom targets before: the originals to get back.
    flash.set_scheduler("kyber")
    flash.set_kyber_targets(1234567, 7654321)
    res = tunectl(bus, "list")
    assert res.returncode == 0 and "0 devices tuned" in res.stdout, res.stdout
    set_goal(bus, flash, "read-p99=2ms mode=latency scheduler=kyber")

    # Introspection: the Manager and the Device objects.
    res = busctl(bus, "tree", BUS_NAME)
    assert f"{DEVICE_PREFIX}/{flash.name}" in res.stdout, res.stdout
    res = busctl(bus, "introspect", BUS_NAME, MANAGER_PATH)
    assert res.returncode == 0, res.stderr
    for member in (MANAGER_IFACE, ".SetGoal", ".ClearGoal", ".SetWeight", ".ClearWeight", ".Pause", ".Resume",
                   ".Reset", ".ListDevices", ".GetDevice", ".Version", ".Interval", ".DeviceAdded",
                   ".DeviceRemoved"):
        assert member in res.stdout, member
    res = busctl(bus, "introspect", BUS_NAME, f"{DEVICE_PREFIX}/{flash.name}")
    assert res.returncode == 0, res.stderr
    for member in (DEVICE_IFACE, ".GetHistogram", ".GetShares", ".Weights", ".TargetsChanged", ".GoalViolated",
                   ".ReadTarget", ".WriteTarget", ".OriginalReadTarget", ".ReadIOPS", ".GoalMet", ".State"):
        assert member in res.stdout, member
    res = busctl(bus, "call", BUS_NAME, MANAGER_PATH, MANAGER_IFACE, "GetDevice", "s", flash.path)
    assert res.stdout.strip() == f'o "{DEVICE_PREFIX}/{flash.name}"', res.stdout
    res = busctl(bus, "call", BUS_NAME, MANAGER_PATH, "org.freedesktop.DBus.ObjectManager",
                 "GetManagedObjects")
    assert f"{DEVICE_PREFIX}/{flash.name}" in res.stdout

    # list and status
    res = tunectl(bus, "list")
    assert res.returncode == 0 and flash.name in res.stdout and "1 device tuned" in res.stdout
    res = tunectl(bus, "list", "--json")
    assert json.loads(res.stdout)["object_path"] == f"{DEVICE_PREFIX}/{flash.name}"
    res = tunectl(bus, "status", flash.name)
    assert res.returncode == 0
    for label in ("State:", "Goal: read-p99=2ms mode=latency scheduler=kyber", "Scheduler: kyber (originally kyber, "
                  "targets 1.23ms/7.65ms)", "Targets:", "Read:", "Write:", "Interval:"):
        assert label in res.stdout, (label, res.stdout)
    st = status_json(bus, flash.path)
    assert st["original_read_target_ns"] == 1234567 and st["original_write_target_ns"] == 7654321

    # I/O for the live parts: monitor, PropertiesChanged, hist; 10 s
    # leave the bus monitor a few seconds to become live within it.
    io = Background(flash, fio.pair(write_qd=16), runtime_s=10)
    io.started()
    time.sleep(1.5)
    mon = subprocess.Popen([KYBER_TUNECTL, "monitor", flash.name], env=bus.env(), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    monj = subprocess.Popen([KYBER_TUNECTL, "monitor", "--json"], env=bus.env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    # Counted from when the bus monitor is live: signals sent before are lost.
    sig = SignalWatch(bus, members=("PropertiesChanged",), interface="org.freedesktop.DBus.Properties")
    time.sleep(3.6)
    hist = tunectl(bus, "hist", flash.name)
    histw = tunectl(bus, "hist", flash.name, "write", "--json")
    # kyber-tunectl monitor stops on Ctrl-C (SIGINT), as a user stops it.
    # busctl is stopped with SIGTERM: it keeps SIGINT's inherited
    # disposition, which is "ignored" under a shell's background job.
    for p in (mon, monj):
        p.send_signal(signal.SIGINT)
    sig.stop()
    mon_out, mon_err = mon.communicate(timeout=10)
    monj_out, _ = monj.communicate(timeout=10)
    io.join()

    print(hist.stdout)
    print(mon_out)
    assert mon.returncode == 0, mon_err
    mon_lines = [l for l in mon_out.splitlines() if flash.name in l]
    assert len(mon_lines) >= 2, mon_out
    assert "read" in mon_lines[-1] and "IOPS" in mon_lines[-1] and "targets" in mon_lines[-1]
    monj_objs = [json.loads(l) for l in monj_out.splitlines()]
    assert len(monj_objs) >= 2 and all(o["device"] == flash.name and o["time_ns"] for o in monj_objs)

    stamps = sig.times_from("PropertiesChanged", f"{DEVICE_PREFIX}/{flash.name}")
    gaps = [b - a for a, b in zip(stamps, stamps[1:])]
    print(f"PropertiesChanged: {len(stamps)} in 3.6 s, gaps {gaps}")
    assert 2 <= len(stamps) <= 5
    assert all(g >= 0.7 for g in gaps), gaps

    assert hist.returncode == 0, hist.stderr
    rows = [l for l in hist.stdout.splitlines() if l.count("|") == 2]
    assert 3 <= len(rows) <= 20, hist.stdout
    assert "<- P50" in hist.stdout and "P99.9" in hist.stdout
    assert "#" * 40 in hist.stdout
    hw = json.loads(histw.stdout)
    assert hw["op"] == "write" and hw["count"] > 0 and hw["buckets"] and hw["p99_ns"] > 0

    # pause: state paused, the tuner keeps its hands off; resume
    assert tunectl(bus, "pause", flash.name).returncode == 0
    assert status_json(bus, flash.name)["state"] == "paused"
    assert tunectl(bus, "resume", flash.name).returncode == 0
    assert status_json(bus, flash.name)["state"] != "paused"

    # reset: originals back in sysfs, paused
    assert tunectl(bus, "reset", flash.name).returncode == 0
    assert flash.scheduler() == "kyber"
    assert flash.kyber_targets() == (1234567, 7654321)
    assert status_json(bus, flash.name)["state"] == "paused"
    assert tunectl(bus, "resume", flash.name).returncode == 0

    # clear-goal: originals back, the device gone from the bus
    assert tunectl(bus, "clear-goal", flash.name).returncode == 0
    assert flash.scheduler() == "kyber"
    assert flash.kyber_targets() == (1234567, 7654321)
    res = tunectl(bus, "status", flash.name)
    assert res.returncode == 1 and f"{flash.name} has no goal" in res.stderr, res.stderr
    res = busctl(bus, "tree", BUS_NAME)
    assert f"{DEVICE_PREFIX}/{flash.name}" not in res.stdout

    # Unknown devices and bad goals: one clear line each.
    for verb in (["status", "nosuchdisk0"], ["pause", "nosuchdisk0"], ["hist", "nosuchdisk0"],
                 ["clear-goal", flash.name]):
        res = tunectl(bus, *verb)
        assert res.returncode == 1 and "has no goal" in res.stderr and res.stderr.count("\n") == 1, res.stderr
    res = tunectl(bus, "set-goal", flash.name, "read-p99=2xs")
    assert res.returncode == 2 and "read-p99=2xs" in res.stderr and res.stderr.count("\n") == 1, res.stderr
    res = tunectl(bus, "set-goal", "nosuchdisk0", GOAL)
    assert res.returncode == 0 and "nosuchdisk0 is not here" in res.stdout, res
    assert tunectl(bus, "clear-goal", "nosuchdisk0").returncode == 0

    # replay of the flight recorder written meanwhile (a copy: the daemon
    # still appends to it)
    with open(service.record, "rb") as f:
        data = f.read()
    full, cut = os.path.join(service.tmp, "full.pb"), os.path.join(service.tmp, "cut.pb")
    with open(full, "wb") as f:
        f.write(data)
    res = run(bus, [KYBER_TUNECTL, "replay", full])
    assert res.returncode == 0, res.stderr
    lines = [l for l in res.stdout.splitlines() if flash.name in l]
    assert len(lines) >= 5, res.stdout
    res = run(bus, [KYBER_TUNECTL, "replay", full, "--json"])
    recs = [json.loads(l) for l in res.stdout.splitlines()]
    assert len(recs) == len(lines) and any(r["read"]["iops"] > 0 for r in recs)
    # The verdict follows from the record's goal and metric.
    judged = [r for r in recs if r["metric_ns"]]
    assert judged, recs
    assert all(r["goal_met"] == (r["metric_ns"] <= 2_000_000) for r in judged), judged
    assert all(r["goal_met"] is None for r in recs if not r["metric_ns"])
    with open(cut, "wb") as f:
        f.write(data[:len(data) - 7])
    res = run(bus, [KYBER_TUNECTL, "replay", cut])
    assert res.returncode == 1
    assert "corrupt or truncated record at offset" in res.stderr, res.stderr
    assert len(res.stdout.splitlines()) == len(lines) - 1


def test_restart_after_crash_resumes_runtime_goals(bus, device_factory, daemon_factory):
    """A goal set over D-Bus survives SIGKILL: the next start (same state
    and runtime directories) tunes the device again toward it, and keeps
    the originals from before the first start, so clear-goal still puts
    back the scheduler the device had then."""
    dev = device_factory("shm", size_mib=16)
    with tempfile.TemporaryDirectory(prefix="kt-restart-") as tmp:
        args = ["--config=", f"--state-dir={tmp}/state", f"--runtime-dir={tmp}/run"]
        env = {"DBUS_SYSTEM_BUS_ADDRESS": bus.address}
        d = daemon_factory(args, env=env)
        assert d.ready(), d.stderr()
        set_goal(bus, dev, "read-p99=3ms write-iops-min=1k scheduler=kyber")
        assert dev.scheduler() == "kyber"
        d.stop(signal.SIGKILL)

        d2 = daemon_factory(args, env=env)
        assert d2.ready(), d2.stderr()
        st = status_json(bus, dev.name)
        assert st["goal"] == "read-p99=3ms write-iops-min=1000 mode=latency scheduler=kyber", st
        assert dev.scheduler() == "kyber"
        assert "resumed the goal set at run time" in d2.stderr(), d2.stderr()
        res = tunectl(bus, "clear-goal", dev.name)
        assert res.returncode == 0, res.stderr
        assert dev.scheduler() == "none"
        assert d2.stop() == 0, d2.stderr()

        # Cleared: a third start has nothing to resume.
        d3 = daemon_factory(args, env=env)
        assert d3.ready(), d3.stderr()
        res = tunectl(bus, "list")
        assert "0 devices tuned" in res.stdout, res.stdout
        assert d3.stop() == 0, d3.stderr()
