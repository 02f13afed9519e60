# SPDX-License-Identifier: LGPL-2.1-or-later
"""pytest fixtures over tests/lib: test devices and kyber-tuned processes,
each skipped with the reason when this machine cannot provide it, and torn
down or stopped (by PID) after the test, also when it failed."""

import pytest

from tests.lib import testdev
from tests.lib.daemon import Daemon
from tests.lib.paths import KYBER_TUNED
from tests.lib.require import require_built, require_root


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
