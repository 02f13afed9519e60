# SPDX-License-Identifier: LGPL-2.1-or-later
"""Preconditions of the pytest tests: what this machine lacks is a skip
with the reason and the fix, not a failure. The one module of tests.lib
that imports pytest; benchmarks check their own preconditions and exit."""

import os
import shutil

import pytest


def require_root():
    if os.geteuid() != 0:
        pytest.skip("needs root: loads BPF and creates loop devices")


def require_tool(name):
    if not shutil.which(name):
        pytest.skip(f"{name} is not installed (make deps installs it)")


def require_built(path):
    if not os.access(path, os.X_OK):
        pytest.skip(f"{path} is not built: run make first")
