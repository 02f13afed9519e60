# SPDX-License-Identifier: GPL-2.0-or-later
"""The host-steal bookkeeping the kernel tests judge with (no root, no
I/O): which one-second windows a recorded steal counter marks disturbed,
and which are calm (neither disturbed nor in the recovery after)."""

import pytest

from tests.lib import hoststeal


def monitor(stolen_s_per_second):
    """A Monitor as if it had sampled once a second from t=0, the host
    taking stolen_s_per_second[i] CPU-seconds in second i."""
    m = hoststeal.Monitor()
    total = 0.0
    m.times, m.steal = [0.0], [0.0]
    for i, s in enumerate(stolen_s_per_second):
        total += s
        m.times.append(float(i + 1))
        m.steal.append(total)
    return m


def test_calm_windows_leave_out_the_recovery_after_a_disturbance():
    heavy = 0.5 * hoststeal.NCPU  # half of all CPUs
    m = monitor([0] * 10 + [heavy] * 2 + [0] * 28)
    ends = [1000 * i for i in range(1, 41)]
    bad = m.disturbed_windows(0, ends)
    # Seconds 11 and 12, widened by the pad and the hangover.
    assert {11000, 12000} <= bad and 9000 not in bad and 15000 not in bad
    calm = m.calm_windows(0, ends, recovery_s=10)
    assert not calm & bad
    last_bad = max(bad)
    assert all(e not in calm for e in ends if last_bad < e <= last_bad + 10000)
    assert all(e in calm for e in ends if e > last_bad + 10000)
    assert all(e in calm for e in ends if e < min(bad))


def test_calm_windows_all_calm_without_steal():
    m = monitor([0] * 20)
    ends = [1000 * i for i in range(1, 21)]
    assert m.calm_windows(0, ends, recovery_s=10) == set(ends)
    assert not m.disturbed_windows(0, ends)


def test_one_disturbed_second_marks_its_windows_though_the_span_mean_is_calm():
    light = 0.08 * hoststeal.NCPU  # 8% of all CPUs, in second 10 alone
    m = monitor([0] * 10 + [light] + [0] * 10)
    ends = [1000 * i for i in range(1, 22)]
    # Its own window and the next (by the hangover); the pad reaches 0.3 s
    # of it from either neighbour, 2.4% of a second.
    assert m.disturbed_windows(0, ends) == {11000, 12000}
    # The span judged for window 11 s is 2.6 s long: its mean is calm.
    assert m.share(11 - 1 - 0.3 - 1.0, 11 + 0.3) < hoststeal.DISTURBED_SHARE


def test_clean_leaves_out_the_recovery_and_skips_when_most_is_left_out():
    heavy = 0.5 * hoststeal.NCPU
    m = monitor([0] * 10 + [heavy] * 2 + [0] * 28)
    windows = [(1000 * i, i) for i in range(1, 41)]
    kept, out = m.clean(0, windows, "test", recovery_s=10)
    assert out == {ms for ms, _ in windows} - {ms for ms, _ in kept}
    assert out >= m.disturbed_windows(0, [ms for ms, _ in windows])
    assert len(out) >= 12 and all(ms > 22000 or ms < 10000 for ms, _ in kept)
    plain, _ = m.clean(0, windows, "test")
    assert len(plain) > len(kept)
    with pytest.raises(pytest.skip.Exception):
        m.clean(0, windows[5:25], "test", recovery_s=10)


def scripted(shares):
    """A Monitor whose share() over each call is the next of `shares`."""
    m = hoststeal.Monitor()
    left = list(shares)
    m.share = lambda t0, t1: left.pop(0)
    return m


def test_calm_run_stops_at_the_first_calm_call():
    calls = []
    m = scripted([0.2, 0.01, 0.0])
    result, share = m.calm_run(lambda: calls.append(1) or len(calls), "test", tries=3)
    assert (result, share) == (2, 0.01) and len(calls) == 2


def test_calm_run_skips_or_keeps_the_least_disturbed_when_every_call_was_disturbed():
    calls = []
    with pytest.raises(pytest.skip.Exception) as e:
        scripted([0.2, 0.3]).calm_run(lambda: calls.append(1), "test", tries=2)
    assert len(calls) == 2
    assert str(e.value).startswith(hoststeal.SKIP_PREFIX)
    m = scripted([0.3, 0.1, 0.2])
    results = iter("abc")
    assert m.calm_run(lambda: next(results), "test", tries=3, or_skip=False) == ("b", 0.1)


RERUN_PROBE = '''
import os
from tests.lib import hoststeal

def test_disturbed_twice(tmp_path):
    count = os.path.join(os.environ["PROBE_DIR"], "count")
    n = int(open(count).read()) if os.path.exists(count) else 0
    open(count, "w").write(str(n + 1))
    assert not os.listdir(tmp_path)  # fresh fixtures each try
    (tmp_path / "used").write_text("x")
    if n < 2:
        hoststeal.skip("scripted")

def test_always_disturbed():
    hoststeal.skip("scripted, for good")

def test_plain_skip_not_rerun():
    import pytest
    pytest.skip("no such device")
'''


def test_conftest_runs_disturbed_tests_again(tmp_path):
    """tests/conftest.py runs a test that skipped with hoststeal.skip()
    again, HOST_RERUNS times at most, from fresh fixtures; any other skip
    stands at once."""
    import os
    import re
    import subprocess
    import sys

    from tests import conftest

    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    probe = tmp_path / "probe"
    probe.mkdir()
    (probe / "conftest.py").write_text(
        "from tests.conftest import pytest_runtest_protocol, pytest_terminal_summary  # noqa: F401\n")
    (probe / "test_probe.py").write_text(RERUN_PROBE)
    res = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rs", "-q",
                          "--rootdir", str(probe), str(probe)],
                         env={**os.environ, "PYTHONPATH": top, "PROBE_DIR": str(probe)},
                         capture_output=True, text=True, timeout=120)
    print(res.stdout)
    assert (probe / "count").read_text() == "3"
    assert "1 passed, 2 skipped" in res.stdout, res.stdout
    assert res.stdout.count("test_always_disturbed try") == conftest.HOST_RERUNS
    assert "test_plain_skip_not_rerun try" not in res.stdout
    # The skip that stands is listed at the test, with its tries.
    assert re.search(r"SKIPPED \[1\] \S*test_probe\.py:\d+: host CPU steal: scripted, for good "
                     rf"\({conftest.HOST_RERUNS + 1} runs of the test\)", res.stdout), res.stdout
    assert "hoststeal.py" not in res.stdout, res.stdout
