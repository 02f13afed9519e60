# SPDX-License-Identifier: LGPL-2.1-or-later
"""kyber-tuned's tests. A package so that tests, the demo (python3 -m
tests.demo) and the benchmarks all import the shared helpers as tests.lib
with the repository root on sys.path, and pytest (prepend import mode) puts
that root there, not tests/ or tests/lib."""
