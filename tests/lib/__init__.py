# SPDX-License-Identifier: LGPL-2.1-or-later
"""What the tests, the demo and the benchmarks share: test devices
(testdev), fio runs and the study's job pairs (fio), kyber-tuned processes
(daemon), the host's CPU steal (hoststeal) and the build paths (paths).
Imported as `from tests.lib import fio` with the repository root on
sys.path; only `require` needs pytest, so benchmarks run without it."""
