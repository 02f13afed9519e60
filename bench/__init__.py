# SPDX-License-Identifier: GPL-2.0-or-later
"""The benchmarks that write docs/BENCHMARKS.md. A package: each script runs
as a module from the repository root (python3 -m bench.baselines, or make
bench), which puts the root on sys.path for bench.benchlib and tests.lib."""
