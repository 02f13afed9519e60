#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Test block devices for kyber-tuned: bring them up, tear them down.

Kinds:
  flashsim  loop (--direct-io=on) over the 'disk' file of a build/flashsim
            FUSE mount: a flash model with deterministic read/write
            interference (profiles flash, optane, buffered, tlc, gc, qdlat).
  shm       loop (--direct-io=on) over a preallocated file in /dev/shm.
  rootfs    loop (--direct-io=on) over a preallocated file on the root file
            system (under /var/tmp).

Every device comes up with scheduler 'none' (scheduler settings survive
losetup -d on the same loop number) and a verified loop/dio of 1: a buffered
loop serialises every request and makes any measurement meaningless.

Teardown is idempotent, runs on every exit of the context managers and only
ever touches what this module created: scheduler back to 'none', losetup -d,
unmount the FUSE mount, stop the daemon (by PID, SIGTERM then SIGKILL),
remove the temporary files.

Python:
    with testdev.flashsim(profile="flash", dies=8) as dev:
        dev.path, dev.name, dev.sysfs, dev.stats()
    with testdev.shm(size_mib=256) as dev: ...
    with testdev.rootfs(size_mib=256) as dev: ...

Shell:
    testdev.py up flashsim --profile optane --opt write-iops=10000 --state S
    testdev.py down --state S
"""

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FLASHSIM = os.path.join(REPO_ROOT, "build", "flashsim")
KINDS = ("flashsim", "shm", "rootfs")
PROFILES = ("flash", "optane", "buffered", "tlc", "gc", "qdlat")

# How long bring-up and teardown steps may take before we call them stuck.
MOUNT_TIMEOUT_S = 10.0
DAEMON_EXIT_TIMEOUT_S = 5.0


class DeviceUnavailable(Exception):
    """This machine cannot provide the device: tests should skip, not fail."""

    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


class DeviceError(RuntimeError):
    """The device should have worked and did not: a real failure."""


def _run(cmd, check=True, timeout=30):
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, timeout=timeout)
    if check and res.returncode != 0:
        raise DeviceError(f"{' '.join(cmd)} failed (exit {res.returncode}): "
                          f"{res.stderr.strip()}")
    return res


def _write_sysfs(path, value):
    with open(path, "w") as f:
        f.write(str(value))


def _read_sysfs(path):
    with open(path) as f:
        return f.read().strip()


def _mounted(mountpoint):
    mp = os.path.realpath(mountpoint)
    try:
        with open("/proc/mounts") as f:
            for line in f:
                fields = line.split()
                # /proc/mounts escapes spaces as \040; our paths have none.
                if len(fields) > 1 and fields[1] == mp:
                    return True
    except OSError:
        pass
    return False


def _proc_starttime(pid):
    """Start time of a process in clock ticks since boot, None if gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return None
    # The command name may contain spaces and parentheses: split after it.
    fields = stat[stat.rindex(")") + 2:].split()
    if fields[0] == "Z":
        return None
    return int(fields[19])


def check_root():
    if os.geteuid() != 0:
        raise DeviceUnavailable("needs root (loop devices, FUSE mounts, sysfs)")


def check_loop():
    check_root()
    if shutil.which("losetup") is None:
        raise DeviceUnavailable("losetup (util-linux) is not installed")
    if not os.path.exists("/dev/loop-control") and not os.path.exists("/dev/loop0"):
        raise DeviceUnavailable("no loop device support (/dev/loop-control missing)")


def check_fuse():
    check_loop()
    if not os.path.exists("/dev/fuse"):
        raise DeviceUnavailable("no /dev/fuse")
    if shutil.which("fusermount3") is None and shutil.which("umount") is None:
        raise DeviceUnavailable("neither fusermount3 nor umount available")


def check_fio():
    if shutil.which("fio") is None:
        raise DeviceUnavailable("fio is not installed")


class TestDevice:
    """A loop device this module created, with everything needed to undo it.

    The state is a plain dict so the CLI can store it in a JSON file and a
    later 'down' can finish the job.
    """

    __test__ = False  # not a pytest test class despite the name

    def __init__(self, state=None, proc=None):
        self.state = state if state is not None else {}
        self._proc = proc  # subprocess.Popen of the daemon, in-process only
        self._torn_down = False

    # ---------------------------------------------------------- properties
    @property
    def kind(self):
        return self.state.get("kind")

    @property
    def name(self):
        return self.state.get("name")

    @property
    def path(self):
        return f"/dev/{self.name}" if self.name else None

    @property
    def sysfs(self):
        return f"/sys/block/{self.name}" if self.name else None

    @property
    def mountpoint(self):
        return self.state.get("mountpoint")

    @property
    def pid(self):
        return self.state.get("pid")

    @property
    def size(self):
        return self.state.get("size")

    def __repr__(self):
        return f"<TestDevice {self.kind} {self.path}>"

    # ---------------------------------------------------------- helpers
    def stats(self):
        """flashsim: the parsed JSON of MOUNTPOINT/stats; None otherwise."""
        if self.kind != "flashsim":
            return None
        with open(os.path.join(self.mountpoint, "stats")) as f:
            return json.load(f)

    def daemon_log(self):
        """flashsim: what the daemon wrote to stderr so far."""
        log = self.state.get("log")
        if not log:
            return ""
        try:
            with open(log, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def scheduler(self):
        text = _read_sysfs(f"{self.sysfs}/queue/scheduler")
        return text[text.index("[") + 1:text.index("]")]

    def schedulers(self):
        """The schedulers this kernel offers the device (queue/scheduler):
        one built without BFQ, say, does not list it."""
        return _read_sysfs(f"{self.sysfs}/queue/scheduler").replace("[", "").replace("]", "").split()

    def set_scheduler(self, name):
        offered = self.schedulers()
        if name not in offered:
            raise DeviceError(f"{self.name}: scheduler {name} is not built into this kernel "
                              f"(queue/scheduler offers {', '.join(offered)})")
        _write_sysfs(f"{self.sysfs}/queue/scheduler", name)
        if self.scheduler() != name:
            raise DeviceError(f"{self.name}: scheduler is {self.scheduler()}, wanted {name}")

    def set_kyber_targets(self, read_ns, write_ns):
        """Sets Kyber's latency targets; the scheduler must be kyber already
        (switching to kyber resets the targets to the defaults)."""
        if self.scheduler() != "kyber":
            raise DeviceError(f"{self.name}: scheduler is {self.scheduler()}, not kyber")
        base = f"{self.sysfs}/queue/iosched"
        _write_sysfs(f"{base}/read_lat_nsec", int(read_ns))
        _write_sysfs(f"{base}/write_lat_nsec", int(write_ns))

    def kyber_targets(self):
        base = f"{self.sysfs}/queue/iosched"
        return (int(_read_sysfs(f"{base}/read_lat_nsec")),
                int(_read_sysfs(f"{base}/write_lat_nsec")))

    # ---------------------------------------------------------- bring-up
    def _attach(self, backing):
        res = _run(["losetup", "-f", "--show", "--direct-io=on", backing])
        path = res.stdout.strip()
        if not path.startswith("/dev/loop"):
            raise DeviceError(f"losetup printed an unexpected device: {path!r}")
        self.state["name"] = os.path.basename(path)
        self.state["backing"] = os.path.realpath(backing)
        dio = _read_sysfs(f"{self.sysfs}/loop/dio")
        if dio != "1":
            raise DeviceError(
                f"{self.name}: loop/dio is {dio!r} after --direct-io=on over {backing}: "
                "a buffered loop serialises every request, refusing to measure on it")
        # Settings survive losetup -d on the same number: never inherit them.
        self.set_scheduler("none")
        self.state["size"] = int(_read_sysfs(f"{self.sysfs}/size")) * 512

    def _owns_loop(self):
        """True if the loop device still runs over the file we attached."""
        if not self.name:
            return False
        try:
            backing = _read_sysfs(f"{self.sysfs}/loop/backing_file")
        except OSError:
            return False
        # The kernel may append " (deleted)".
        return backing.split(" (deleted)")[0] == self.state.get("backing")

    # ---------------------------------------------------------- teardown
    def teardown(self):
        """Undo everything; safe to call any number of times, from any state."""
        errors = []

        def step(what, fn):
            try:
                fn()
            except Exception as e:  # keep going: leave as little behind as possible
                errors.append(f"{what}: {e}")

        if self._owns_loop():
            def reset_scheduler():
                if self.scheduler() != "none":
                    _write_sysfs(f"{self.sysfs}/queue/scheduler", "none")
            step("reset scheduler", reset_scheduler)
            step("losetup -d", self._detach)
        mp = self.state.get("mountpoint")
        if mp:
            step("unmount", lambda: self._unmount(mp))
        if self.state.get("pid"):
            step("stop daemon", self._stop_daemon)
        if mp:
            step("unmount", lambda: self._unmount(mp))  # the daemon may have died mid-way
        for key in ("file",):
            f = self.state.get(key)
            if f and os.path.exists(f):
                step(f"remove {f}", lambda f=f: os.unlink(f))
        tmpdir = self.state.get("tmpdir")
        if tmpdir and os.path.isdir(tmpdir):
            if mp and _mounted(mp):
                errors.append(f"{mp} still mounted, leaving {tmpdir}")
            else:
                step(f"remove {tmpdir}", lambda: shutil.rmtree(tmpdir))
        self._torn_down = True
        if errors:
            raise DeviceError("teardown incomplete: " + "; ".join(errors))

    def _detach(self):
        _run(["losetup", "-d", self.path])
        # losetup -d is lazy while the device is open: wait for the detach,
        # or the unmount below fails with EBUSY.
        deadline = time.monotonic() + MOUNT_TIMEOUT_S
        while self._owns_loop():
            if time.monotonic() > deadline:
                raise DeviceError(f"{self.path} still attached after losetup -d")
            time.sleep(0.05)

    def _unmount(self, mp):
        if not _mounted(mp):
            return
        deadline = time.monotonic() + MOUNT_TIMEOUT_S
        while _mounted(mp):
            if shutil.which("fusermount3"):
                res = _run(["fusermount3", "-u", mp], check=False)
                if res.returncode == 0 and not _mounted(mp):
                    return
            if time.monotonic() > deadline:
                break
            time.sleep(0.1)
        if _mounted(mp):
            _run(["umount", "-l", mp])

    def _stop_daemon(self):
        pid = self.state["pid"]

        def alive():
            if self._proc is not None:
                return self._proc.poll() is None
            # Without the Popen object (CLI): make sure the PID is still ours.
            return _proc_starttime(pid) == self.state.get("pid_starttime")

        def wait(timeout):
            deadline = time.monotonic() + timeout
            while alive():
                if time.monotonic() > deadline:
                    return False
                time.sleep(0.05)
            return True

        # After the unmount it usually exits by itself; SIGTERM is as clean.
        if not wait(0.2):
            os.kill(pid, signal.SIGTERM)
            if not wait(DAEMON_EXIT_TIMEOUT_S):
                os.kill(pid, signal.SIGKILL)
                if not wait(DAEMON_EXIT_TIMEOUT_S):
                    raise DeviceError(f"flashsim {pid} survived SIGKILL")
        self.state.pop("pid", None)

    # ---------------------------------------------------------- context manager
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.teardown()
        return False


def _opt_args(overrides):
    args = []
    for key, value in (overrides or {}).items():
        key = key.replace("_", "-")
        if isinstance(value, bool):
            if value:
                args.append(f"--{key}")
        else:
            args.append(f"--{key}={value}")
    return args


def up_flashsim(profile="flash", **overrides):
    """Bring up a flashsim device; overrides are flashsim options
    (read_us=60, program_us=500, dies=8, size="256M", ...)."""
    check_fuse()
    if not os.access(FLASHSIM, os.X_OK):
        raise DeviceError(f"{FLASHSIM} is not built: run 'make build/flashsim'")
    dev = TestDevice({"kind": "flashsim", "profile": profile})
    try:
        tmpdir = tempfile.mkdtemp(prefix="kyber-flashsim-")
        dev.state["tmpdir"] = tmpdir
        mp = os.path.join(tmpdir, "mnt")
        os.mkdir(mp)
        log = os.path.join(tmpdir, "flashsim.log")
        dev.state["log"] = log
        cmd = [FLASHSIM, f"--profile={profile}"] + _opt_args(overrides) + [mp]
        with open(log, "w") as logf:
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=logf,
                                    stderr=subprocess.STDOUT, start_new_session=True)
        dev._proc = proc
        dev.state["pid"] = proc.pid
        dev.state["pid_starttime"] = _proc_starttime(proc.pid)
        dev.state["mountpoint"] = mp
        dev.state["cmd"] = cmd
        disk = os.path.join(mp, "disk")
        deadline = time.monotonic() + MOUNT_TIMEOUT_S
        while not (_mounted(mp) and os.path.exists(disk)):
            if proc.poll() is not None:
                raise DeviceError(f"flashsim exited with {proc.returncode}: "
                                  f"{dev.daemon_log().strip()}")
            if time.monotonic() > deadline:
                raise DeviceError(f"{disk} did not appear within {MOUNT_TIMEOUT_S} s")
            time.sleep(0.02)
        dev._attach(disk)
    except BaseException:
        try:
            dev.teardown()
        except DeviceError as e:
            print(f"testdev: {e}", file=sys.stderr)
        raise
    return dev


def _up_file(kind, directory, size_mib):
    check_loop()
    dev = TestDevice({"kind": kind})
    try:
        fd, path = tempfile.mkstemp(prefix=f"kyber-{kind}-", suffix=".img", dir=directory)
        dev.state["file"] = path
        try:
            # Preallocated: allocating blocks during the test would be measured.
            os.posix_fallocate(fd, 0, size_mib << 20)
        except OSError as e:
            raise DeviceUnavailable(f"cannot allocate {size_mib} MiB in {directory}: {e}")
        finally:
            os.close(fd)
        dev._attach(path)
    except BaseException:
        try:
            dev.teardown()
        except DeviceError as e:
            print(f"testdev: {e}", file=sys.stderr)
        raise
    return dev


def up_shm(size_mib=256):
    return _up_file("shm", "/dev/shm", size_mib)


def up_rootfs(size_mib=256, directory="/var/tmp"):
    return _up_file("rootfs", directory, size_mib)


def up(kind, profile="flash", **opts):
    if kind == "flashsim":
        return up_flashsim(profile, **opts)
    if kind == "shm":
        return up_shm(**opts)
    if kind == "rootfs":
        return up_rootfs(**opts)
    raise ValueError(f"unknown device kind {kind!r} (expected one of {', '.join(KINDS)})")


@contextlib.contextmanager
def _managed(dev):
    try:
        yield dev
    finally:
        dev.teardown()


def flashsim(profile="flash", **overrides):
    """Context manager: a flashsim-backed loop device."""
    return _managed(up_flashsim(profile, **overrides))


def shm(size_mib=256):
    """Context manager: a loop device over a file in /dev/shm."""
    return _managed(up_shm(size_mib))


def rootfs(size_mib=256, directory="/var/tmp"):
    """Context manager: a loop device over a file on the root file system."""
    return _managed(up_rootfs(size_mib, directory))


# ------------------------------------------------------------------ CLI
def _parse_opt(text):
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"expected key=value, got {text!r}")
    key, value = text.split("=", 1)
    return key.strip(), value.strip()


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="testdev.py",
        description="Bring up / tear down kyber-tuned test block devices.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    u = sub.add_parser("up", help="create a device, print its /dev/loopN path")
    u.add_argument("kind", choices=KINDS)
    u.add_argument("--profile", default="flash", choices=PROFILES,
                   help="flashsim profile (default flash)")
    u.add_argument("--opt", action="append", type=_parse_opt, default=[],
                   metavar="KEY=VALUE",
                   help="flashsim option without dashes (e.g. read-us=60), or "
                        "size_mib=N for shm/rootfs; repeatable")
    u.add_argument("--state", required=True, help="JSON file recording what to tear down")
    d = sub.add_parser("down", help="tear down the device recorded in a state file")
    d.add_argument("--state", required=True)
    args = ap.parse_args(argv)

    try:
        if args.cmd == "up":
            if os.path.exists(args.state):
                print(f"testdev: {args.state} exists: tear that device down first",
                      file=sys.stderr)
                return 1
            opts = dict(args.opt)
            if args.kind == "flashsim":
                dev = up_flashsim(args.profile, **opts)
            else:
                kw = {}
                if "size_mib" in opts:
                    kw["size_mib"] = int(opts.pop("size_mib"))
                if opts:
                    print(f"testdev: unknown options for {args.kind}: {', '.join(opts)}",
                          file=sys.stderr)
                    return 2
                dev = up(args.kind, **kw)
            try:
                tmp = args.state + ".tmp"
                with open(tmp, "w") as f:
                    json.dump(dev.state, f, indent=1)
                os.replace(tmp, args.state)
            except BaseException:
                dev.teardown()
                raise
            print(dev.path)
            return 0

        try:
            with open(args.state) as f:
                state = json.load(f)
        except FileNotFoundError:
            return 0  # nothing recorded: already down
        TestDevice(state).teardown()
        os.unlink(args.state)
        return 0
    except DeviceUnavailable as e:
        print(f"testdev: device unavailable: {e.reason}", file=sys.stderr)
        return 77  # the automake "skipped" convention
    except DeviceError as e:
        print(f"testdev: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
