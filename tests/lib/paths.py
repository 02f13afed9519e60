# SPDX-License-Identifier: LGPL-2.1-or-later
"""Where the repository and its build outputs are, for tests and
benchmarks alike (testdev.py has its own: it also runs as a script)."""

import os

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(REPO, "build")
KYBER_TUNED = os.path.join(BUILD, "kyber-tuned")
KYBER_TUNECTL = os.path.join(BUILD, "kyber-tunectl")
