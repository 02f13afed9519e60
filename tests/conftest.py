# SPDX-License-Identifier: LGPL-2.1-or-later
"""pytest fixtures over tests/lib: test devices and kyber-tuned processes,
each skipped with the reason when this machine cannot provide it, and torn
down or stopped (by PID) after the test, also when it failed."""

import pytest
from _pytest.runner import runtestprotocol

from tests.lib import hoststeal, testdev
from tests.lib.daemon import Daemon
from tests.lib.paths import KYBER_TUNED
from tests.lib.require import require_built, require_root


# Runs after the first of a test the host disturbed (hoststeal.skip()):
# steal comes in episodes of 10-40 s (tests/lib/hoststeal.py), the
# measurements that skip on it last 6-90 s, so two more tries find most
# episodes over, and a test still disturbed then (a host busy for minutes)
# skips, saying why. Each try starts from fresh fixtures: new devices, new
# daemons, an empty tmp_path.
HOST_RERUNS = 2
# The tries made again, for the summary: [(nodeid, try, reason)].
RERUNS_KEY = pytest.StashKey()


def pytest_runtest_protocol(item, nextitem):
    """Run a test again while it skips because the host disturbed it."""
    reporter = item.config.pluginmanager.get_plugin("terminalreporter")
    item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    for attempt in range(1, HOST_RERUNS + 2):
        reports = runtestprotocol(item, nextitem=nextitem, log=False)
        disturbed = [r for r in reports if hoststeal.is_disturbed_skip(r)]
        if not disturbed or attempt > HOST_RERUNS:
            break
        reason = hoststeal.skip_reason(disturbed[0])
        item.config.stash.setdefault(RERUNS_KEY, []).append((item.nodeid, attempt, reason))
        if reporter:
            reporter.write_line(f"\n{item.nodeid}: try {attempt} of {HOST_RERUNS + 1} disturbed by the "
                                f"host, running it again ({reason})")
    for r in reports:
        if hoststeal.is_disturbed_skip(r) and isinstance(r.longrepr, tuple):
            # The summary names the test, not hoststeal.skip()'s own line.
            r.longrepr = (item.location[0], item.location[1] + 1,
                          f"{hoststeal.skip_reason(r)} ({attempt} runs of the test)")
        item.ihook.pytest_runtest_logreport(report=r)
    item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
    return True


def pytest_terminal_summary(terminalreporter):
    """Every try the host disturbed, so that a run's reruns are on record."""
    reruns = terminalreporter.config.stash.get(RERUNS_KEY, [])
    if not reruns:
        return
    terminalreporter.section("tries the host disturbed, made again")
    for nodeid, attempt, reason in reruns:
        terminalreporter.write_line(f"{nodeid} try {attempt}: {reason}")


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
