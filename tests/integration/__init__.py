# SPDX-License-Identifier: LGPL-2.1-or-later
"""Real-kernel tests. A package so that their modules have unique names
(tests.integration.test_*) and import their helpers by full name, not
through a directory pytest happens to put on sys.path."""
