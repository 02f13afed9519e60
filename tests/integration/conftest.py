# SPDX-License-Identifier: LGPL-2.1-or-later
"""Fixtures the integration tests share (tests/conftest.py has the devices
and daemons)."""

import pytest

from tests.integration.dbus_helpers import KYBER_TUNECTL, PrivateBus
from tests.lib.require import require_built, require_root, require_tool


@pytest.fixture
def bus():
    """A private system-bus-like dbus-daemon with the shipped policy
    (dbus_helpers.PrivateBus), stopped after the test."""
    require_root()
    require_tool("dbus-daemon")
    require_tool("busctl")
    require_tool("setpriv")
    require_built(KYBER_TUNECTL)
    b = PrivateBus()
    yield b
    b.stop()
