# SPDX-License-Identifier: LGPL-2.1-or-later
"""A kyber-tuned process for tests and benchmarks: started from build/ with
its own NOTIFY_SOCKET so ready() can wait for sd_notify readiness, its
output in files, and always stopped by PID (close())."""

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

from tests.lib.paths import KYBER_TUNED


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


def json_lines(text):
    """The JSON objects (--json) among the lines of a daemon's stdout."""
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def wait_for(cond, timeout=10.0, what="condition"):
    """Poll cond() every 0.1 s until true; AssertionError naming what after
    timeout seconds (a daemon's reaction, a log line)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")
