# SPDX-License-Identifier: LGPL-2.1-or-later
"""A private system-bus-like dbus-daemon for the D-Bus service tests, a
fake polkit on it, and runners for kyber-tunectl and busctl.

The bus is configured like the real system bus (deny by default, holes
punched by service policies) and includes the shipped policy
systemd/org.kybertune.KyberTune1.conf, so the tests exercise it. Its socket
lives in a directory user nobody can reach, so unprivileged callers are
tested too. Everything started here is stopped by PID.
"""

import collections
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time

from tests.lib.paths import KYBER_TUNECTL, REPO

POLICY = os.path.join(REPO, "systemd", "org.kybertune.KyberTune1.conf")

BUS_NAME = "org.kybertune.KyberTune1"
MANAGER_PATH = "/org/kybertune/KyberTune1"
MANAGER_IFACE = "org.kybertune.KyberTune1.Manager"
DEVICE_IFACE = "org.kybertune.KyberTune1.Device"
DEVICE_PREFIX = "/org/kybertune/KyberTune1/device"

AS_NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]

BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <auth>EXTERNAL</auth>
  <listen>unix:path={socket}</listen>
  <policy context="default">
    <allow user="*"/>
    <deny own="*"/>
    <deny send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Introspectable"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Properties"/>
    <deny send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"
          send_member="UpdateActivationEnvironment"/>
  </policy>
  <policy user="root">
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Monitoring"/>
    <!-- the fake polkit of the tests -->
    <allow own="org.freedesktop.PolicyKit1"/>
    <allow send_destination="org.freedesktop.PolicyKit1"/>
  </policy>
  <include>{policy}</include>
</busconfig>
"""


def _pid_is(pid, comm):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip() == comm
    except OSError:
        return False


def _stop_pid(pid, comm, timeout=10):
    """SIGTERM, then SIGKILL, a process that is not our child (it forked),
    checking that the PID still is what we started."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if not _pid_is(pid, comm):
            return
        os.kill(pid, sig)
        deadline = time.monotonic() + timeout
        while _pid_is(pid, comm) and time.monotonic() < deadline:
            time.sleep(0.05)


class PrivateBus:
    def __init__(self):
        self.tmp = tempfile.mkdtemp(prefix="kt-dbus-")
        self.pid = None
        try:
            # The daemon's socket must be reachable by nobody.
            os.chmod(self.tmp, 0o755)
            self.socket = os.path.join(self.tmp, "system_bus_socket")
            self.config = os.path.join(self.tmp, "system.conf")
            with open(self.config, "w") as f:
                f.write(BUS_CONFIG.format(socket=self.socket, policy=POLICY))
            res = subprocess.run(["dbus-daemon", f"--config-file={self.config}", "--fork",
                                  "--print-address=1", "--print-pid=1"],
                                 stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
            if res.returncode != 0:
                raise RuntimeError(f"dbus-daemon failed: {res.stderr.strip()}")
            lines = res.stdout.split()
            self.address, self.pid = lines[0], int(lines[1])
            os.chmod(self.socket, 0o777)
        except BaseException:
            self.stop()
            raise

    def env(self):
        e = dict(os.environ)
        e["DBUS_SYSTEM_BUS_ADDRESS"] = self.address
        # Plain ASCII output (kyber-tunectl draws with Unicode under UTF-8).
        e["LC_ALL"] = "C"
        return e

    def stop(self):
        if self.pid:
            _stop_pid(self.pid, "dbus-daemon")
            self.pid = None
        shutil.rmtree(self.tmp, ignore_errors=True)


def run(bus, cmd, user=None, timeout=60, stdin=subprocess.DEVNULL):
    """Runs cmd against the private bus; user "nobody" drops privileges."""
    prefix = AS_NOBODY if user == "nobody" else []
    return subprocess.run(prefix + cmd, env=bus.env(), capture_output=True, text=True,
                          timeout=timeout, stdin=stdin, cwd="/")


def tunectl(bus, *args, user=None, timeout=60):
    return run(bus, [KYBER_TUNECTL, *args], user=user, timeout=timeout)


def busctl(bus, *args, user=None, timeout=60):
    # "--" first: arguments may start with a dash.
    return run(bus, ["busctl", f"--address={bus.address}", "--", *args], user=user, timeout=timeout)


def dbus_send_error(bus, method, *args, user=None):
    """Calls a Manager method with string arguments through dbus-send;
    returns the D-Bus error name ("" on success) and the message."""
    res = run(bus, ["dbus-send", f"--bus={bus.address}", "--print-reply", f"--dest={BUS_NAME}",
                    MANAGER_PATH, f"{MANAGER_IFACE}.{method}"] + [f"string:{a}" for a in args],
              user=user)
    if res.returncode == 0:
        return "", res.stdout
    # "Error org.freedesktop.DBus.Error.InvalidArgs: message"
    first = res.stderr.strip().split("\n")[0]
    name, _, msg = first.removeprefix("Error ").partition(": ")
    return name, msg


FAKE_POLKIT = r'''
import json, sys
import dbus, dbus.service, dbus.mainloop.glib
from gi.repository import GLib

address, allowed, log_path = sys.argv[1], set(sys.argv[2].split(",")), sys.argv[3]
silent = sys.argv[4:] == ["silent"]
held = []
dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.bus.BusConnection(address)

class Authority(dbus.service.Object):
    @dbus.service.method("org.freedesktop.PolicyKit1.Authority",
                         in_signature="(sa{sv})sa{ss}us", out_signature="(bba{ss})",
                         async_callbacks=("reply", "error"))
    def CheckAuthorization(self, subject, action, details, flags, cancellation_id, reply, error):
        kind, info = subject
        with open(log_path, "a") as f:
            f.write(json.dumps({"kind": str(kind), "name": str(info.get("name", "")),
                                "action": str(action), "flags": int(flags)}) + "\n")
        if silent:
            held.append(reply)  # never answered: a person who never answers a prompt
        else:
            reply((action in allowed, False, {}))

name = dbus.service.BusName("org.freedesktop.PolicyKit1", bus)
Authority(bus, "/org/freedesktop/PolicyKit1/Authority")
print("ready", flush=True)
GLib.MainLoop().run()
'''


class FakePolkit:
    """org.freedesktop.PolicyKit1 on the private bus: authorizes exactly the
    given actions and logs every CheckAuthorization call; silent=True
    answers none (each query waits for the caller's timeout)."""

    def __init__(self, bus, allowed, silent=False):
        self.tmp = tempfile.mkdtemp(prefix="kt-polkit-")
        self.log = os.path.join(self.tmp, "calls.jsonl")
        script = os.path.join(self.tmp, "polkit.py")
        with open(script, "w") as f:
            f.write(FAKE_POLKIT)
        self.proc = subprocess.Popen(["/usr/bin/python3", script, bus.address, ",".join(allowed),
                                      self.log] + (["silent"] if silent else []), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     stdin=subprocess.DEVNULL, text=True)
        line = self.proc.stdout.readline()
        if line.strip() != "ready":
            err = self.proc.stderr.read() if self.proc.poll() is not None else ""
            self.stop()
            raise RuntimeError(f"fake polkit did not start: {line!r} {err}")

    def calls(self):
        try:
            with open(self.log) as f:
                return [json.loads(line) for line in f]
        except FileNotFoundError:
            return []

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.tmp, ignore_errors=True)


def start_service(daemon_factory, bus, tmp, conf=None, interval="200ms", extra=()):
    """kyber-tuned serving the D-Bus API on bus, state and runtime
    directories under tmp, no configuration unless conf; ready."""
    args = ["--config=" + (conf or ""), f"--state-dir={tmp}/state", f"--runtime-dir={tmp}/run",
            f"--interval={interval}", "--settle=50ms", *extra]
    d = daemon_factory(args, env={"DBUS_SYSTEM_BUS_ADDRESS": bus.address})
    assert d.ready(), d.stderr()
    return d


def ok(res):
    """res, a CompletedProcess that must have succeeded."""
    assert res.returncode == 0, res.stderr
    return res


def has_python_dbus():
    res = subprocess.run(["/usr/bin/python3", "-c", "import dbus, dbus.mainloop.glib; "
                          "from gi.repository import GLib"], capture_output=True)
    return res.returncode == 0


def status_json(bus, dev, user=None):
    res = tunectl(bus, "status", dev, "--json", user=user)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)



# One signal as busctl monitor printed it: member, first argument (a
# device name for the Manager's signals), time (time.time() scale), object path.
Signal = collections.namedtuple("Signal", "member name time path")


class SignalWatch:
    """The Manager's signals on the bus, as busctl monitor sees them, read
    by a thread. busctl is stopped by PID (stop()). busctl becomes a
    monitor some time after it starts (longer on a loaded host), and a
    signal sent before that is lost: the constructor returns once the
    monitor is live, which it shows by seeing the bus's NameOwnerChanged
    for short connections made until it does (its match rules all take
    effect at once)."""

    LIVE_TIMEOUT_S = 20.0
    PROBE_EVERY_S = 0.5

    def __init__(self, bus, members=("DeviceAdded", "DeviceRemoved"), interface=MANAGER_IFACE):
        import threading
        self.members = set(members)
        matches = [f"--match=type='signal',interface='{interface}',member='{m}'" for m in members]
        matches.append("--match=type='signal',sender='org.freedesktop.DBus',"
                       "interface='org.freedesktop.DBus',member='NameOwnerChanged'")
        self.proc = subprocess.Popen(["busctl", f"--address={bus.address}", "monitor", "--json=short", *matches],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.seen = []  # Signal tuples, in the order busctl printed them
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()
        try:
            self._wait_live(bus)
        except BaseException:
            self.stop()
            raise

    def _wait_live(self, bus):
        deadline = time.monotonic() + self.LIVE_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"busctl monitor exited with {self.proc.returncode}")
            run(bus, ["busctl", f"--address={bus.address}", "call", "org.freedesktop.DBus",
                      "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetId"], timeout=10)
            probe_end = time.monotonic() + self.PROBE_EVERY_S
            while time.monotonic() < probe_end:
                with self._lock:
                    if any(s.member == "NameOwnerChanged" for s in self.seen):
                        return
                time.sleep(0.05)
        raise RuntimeError(f"busctl monitor not live after {self.LIVE_TIMEOUT_S:.0f} s")

    def _read(self):
        for line in self.proc.stdout:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            with self._lock:
                self.seen.append(Signal(msg.get("member"), msg.get("payload", {}).get("data", [None])[0],
                                        msg.get("timestamp-realtime", 0) / 1e6, msg.get("path")))

    def signals(self):
        """(member, device name) of the watched members, in the order they
        came."""
        with self._lock:
            return [(s.member, s.name) for s in self.seen if s.member in self.members]

    def times_from(self, member, path):
        """When the bus had each such signal from the object at path
        (time.time() scale), in order."""
        with self._lock:
            return [s.time for s in self.seen if s.member == member and s.path == path]

    def time_of(self, member, name):
        """When the bus had the last such signal (time.time() scale), or None."""
        with self._lock:
            times = [s.time for s in self.seen if (s.member, s.name) == (member, name)]
        return times[-1] if times else None

    def wait(self, member, name, timeout=10.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if (member, name) in self.signals():
                return True
            time.sleep(0.05)
        return False

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._thread.join(timeout=5)
