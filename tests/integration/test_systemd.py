# SPDX-License-Identifier: LGPL-2.1-or-later
"""The systemd unit: `systemd-analyze verify` finds nothing wrong with it,
and `systemd-analyze security --offline=true` rates its exposure at most
3.0, with every exposure that remains explained in docs/security.md.

Works offline (no systemd as PID 1 needed). verify wants ExecStart= to name
an existing binary, so it runs on a copy of the unit pointing at
build/kyber-tuned."""

import os
import re
import shutil
import subprocess

import pytest

from tests.lib.paths import KYBER_TUNED, REPO
from tests.lib.require import require_built

UNIT = os.path.join(REPO, "systemd", "kyber-tuned.service")
SECURITY_DOC = os.path.join(REPO, "docs", "security.md")
MAX_EXPOSURE = 3.0


def analyze():
    exe = shutil.which("systemd-analyze")
    if not exe:
        pytest.skip("systemd-analyze is not installed (Debian package systemd)")
    return exe


@pytest.fixture
def unit_copy(tmp_path):
    """The unit, with ExecStart= at the built daemon, in a directory of its
    own (the file name matters: it names the unit)."""
    require_built(KYBER_TUNED)
    with open(UNIT) as f:
        text = f.read()
    assert re.search(r"^ExecStart=/usr/sbin/kyber-tuned$", text, re.M), \
        "ExecStart= must be /usr/sbin/kyber-tuned (make install rewrites it for PREFIX)"
    text = re.sub(r"^ExecStart=.*$", f"ExecStart={os.path.abspath(KYBER_TUNED)}", text,
                  flags=re.M)
    path = tmp_path / "kyber-tuned.service"
    path.write_text(text)
    return path


def test_unit_verifies(unit_copy):
    exe = analyze()
    r = subprocess.run([exe, "verify", "--man=no", str(unit_copy)], capture_output=True,
                       text=True, timeout=120, cwd=unit_copy.parent)
    out = r.stdout + r.stderr
    print(out)
    # Other units on the machine may draw complaints; ours may not.
    ours = [line for line in out.splitlines() if "kyber-tuned" in line]
    assert r.returncode == 0 and not ours, out


def security_report(unit_copy):
    exe = analyze()
    r = subprocess.run([exe, "security", "--offline=true", "--no-pager", str(unit_copy)],
                       capture_output=True, text=True, timeout=120, cwd=unit_copy.parent)
    out = r.stdout + r.stderr
    m = re.search(r"Overall exposure level for kyber-tuned\.service: ([0-9.]+)", out)
    assert m, f"no overall exposure in the output:\n{out}"
    return float(m.group(1)), out


def test_unit_exposure(unit_copy):
    exposure, out = security_report(unit_copy)
    print(f"systemd-analyze security: overall exposure {exposure}")
    kept = re.findall(r"^✗ (\S+)", out, re.M)
    print("exposures kept: " + ", ".join(kept))
    assert exposure <= MAX_EXPOSURE, out


def test_exposures_documented(unit_copy):
    """Every check the unit fails has a row in docs/security.md."""
    _, out = security_report(unit_copy)
    with open(SECURITY_DOC) as f:
        doc = f.read()
    missing = [name for name in re.findall(r"^✗ (\S+)", out, re.M) if f"`{name}`" not in doc]
    assert not missing, f"not explained in docs/security.md: {missing}"


def test_unit_settings():
    """What the daemon relies on, beyond what the analyzers look at."""
    with open(UNIT) as f:
        settings = {}
        for line in f:
            if "=" in line and not line.startswith("#"):
                key, value = line.rstrip("\n").split("=", 1)
                settings.setdefault(key, []).append(value)
    one = {k: v[-1] for k, v in settings.items()}
    assert one["Type"] == "notify"
    assert one["BusName"] == "org.kybertune.KyberTune1"
    assert one["ExecReload"] == "/bin/kill -HUP $MAINPID"
    assert one["WatchdogSec"] == "30s"
    assert one["Restart"] == "on-failure"
    assert one["StateDirectory"] == one["RuntimeDirectory"] == "kyber-tuned"
    assert one["ConfigurationDirectory"] == "kyber-tuned"
    assert one["RuntimeDirectoryPreserve"] == "yes"
    # sysfs stays writable where the scheduler and Kyber's targets are.
    assert one["ProtectKernelTunables"] == "yes" and "/sys/devices" in one["ReadWritePaths"].split()
    assert set(one["CapabilityBoundingSet"].split()) == {"CAP_BPF", "CAP_PERFMON"}
    # bpf(2) is allowed back after @privileged is taken away.
    filters = settings["SystemCallFilter"]
    assert any(f.startswith("~") and "@privileged" in f for f in filters)
    assert "bpf" in filters[-1].split()
    assert "perf_event_open" in filters[-1].split()
