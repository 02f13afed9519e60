# SPDX-License-Identifier: LGPL-2.1-or-later
"""Shared pytest setup: tests/lib on sys.path, root/tool checks, and a
runner for kyber-tuned processes that waits for sd_notify readiness and
always stops what it started, by PID."""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import pytest

TESTS = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(TESTS)
BUILD = os.path.join(REPO, "build")
sys.path.insert(0, os.path.join(TESTS, "lib"))

import testdev  # noqa: E402

KYBER_TUNED = os.path.join(BUILD, "kyber-tuned")


def require_root():
    if os.geteuid() != 0:
        pytest.skip("needs root: loads BPF and creates loop devices")


def require_tool(name):
    if not shutil.which(name):
        pytest.skip(f"{name} is not installed (make deps installs it)")


def require_built(path):
    if not os.access(path, os.X_OK):
        pytest.skip(f"{path} is not built: run make first")


@pytest.fixture
def device_factory():
    """Create test devices; every one is torn down after the test, also
    when it failed. Skips with the stated reason when unavailable."""
    require_root()
    made = []

    def make(kind, **kw):
        try:
            if kind == "flashsim":
                dev = testdev.up_flashsim(**kw)
            elif kind == "shm":
                dev = testdev.up_shm(**kw)
            elif kind == "rootfs":
                dev = testdev.up_rootfs(**kw)
            else:
                raise ValueError(kind)
        except testdev.DeviceUnavailable as e:
            pytest.skip(f"{kind} test device unavailable: {e}")
        made.append(dev)
        return dev

    yield make
    for dev in reversed(made):
        dev.teardown()


class Daemon:
    """A kyber-tuned process started with NOTIFY_SOCKET; ready() waits for
    READY=1 (or for the process to die, returning its stderr)."""

    def __init__(self, args, env=None, stdout=None, stderr_path=None, wrapper=()):
        self.tmp = tempfile.mkdtemp(prefix="kt-test-")
        self.notify_path = os.path.join(self.tmp, "notify")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.notify_path)
        e = dict(os.environ)
        e.update(env or {})
        e["NOTIFY_SOCKET"] = self.notify_path
        self.stderr_path = stderr_path or os.path.join(self.tmp, "stderr")
        self.stderr_file = open(self.stderr_path, "a+")
        # A file, not a pipe: nobody drains a pipe while the test runs I/O,
        # and a daemon blocked on a full pipe cannot even handle SIGTERM.
        self.stdout_path = os.path.join(self.tmp, "stdout")
        # stdout: a file object or subprocess.DEVNULL, owned by the caller.
        self.own_stdout = stdout is None
        self.stdout_file = open(self.stdout_path, "w+") if stdout is None else stdout
        # wrapper: a command that execs the daemon (e.g. setpriv ... --);
        # the PID stays the daemon's.
        self.proc = subprocess.Popen(list(wrapper) + [KYBER_TUNED] + args, env=e, stdout=self.stdout_file,
                                     stderr=self.stderr_file, text=True)
        self.notifications = []

    def ready(self, timeout=20):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            self.sock.settimeout(0.2)
            try:
                msg = self.sock.recv(4096).decode()
            except socket.timeout:
                continue
            self.notifications.append(msg)
            if "READY=1" in msg.split("\n"):
                return True
        raise TimeoutError(f"kyber-tuned not ready after {timeout}s: {self.stderr()}")

    def stderr(self):
        self.stderr_file.flush()
        with open(self.stderr_path) as f:
            return f.read()

    def stop(self, sig=signal.SIGTERM, timeout=15):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def communicate(self, timeout=60):
        """Wait for the process to exit; its stdout."""
        self.proc.wait(timeout=timeout)
        self.stdout_file.flush()
        with open(self.stdout_path) as f:
            return f.read()

    def close(self):
        self.stop(signal.SIGKILL)
        if self.own_stdout:
            self.stdout_file.close()
        self.stderr_file.close()
        self.sock.close()
        shutil.rmtree(self.tmp, ignore_errors=True)


@pytest.fixture
def daemon_factory():
    require_root()
    require_built(KYBER_TUNED)
    started = []

    def start(args, **kw):
        d = Daemon(args, **kw)
        started.append(d)
        return d

    yield start
    for d in started:
        d.close()


def json_lines(text):
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]
