# SPDX-License-Identifier: LGPL-2.1-or-later
"""tests/lib/tuner_trace.py on made-up traces: which target changes are a
return from a disturbance. Pure logic, no root."""

from tests.lib.tuner_trace import RETURN_MAX_S, return_steps

READ, WRITE = 1_000_000, 100_000_000


def trace(seconds, moves):
    """One line a second for `seconds`; moves: {second: (read, write)}
    factors applied to the targets at that second (a change)."""
    lines, r, w = [], READ, WRITE
    for t in range(seconds):
        changed = t in moves
        if changed:
            r, w = int(r * moves[t][0]), int(w * moves[t][1])
        lines.append({"t": t, "read_target_ns": r, "write_target_ns": w,
                      "tuner": {"changed": changed}})
    return lines


def steps_at(lines, disturbed_s):
    ids = return_steps(lines, lambda l: l["t"] * 1000 - 500, {s * 1000 for s in disturbed_s})
    return sorted(l["t"] for l in lines if id(l) in ids)


EASE, CUT, READ_UP = (1, 0.5), (1, 2), (1.5, 1)


def test_return_after_a_disturbance_is_not_steady_state():
    # A cut while the host held the machine (seconds 2-6), eased back in
    # steps; the cut at 31 ends the return and counts.
    lines = trace(40, {3: CUT, 8: READ_UP, 9: EASE, 12: EASE, 16: READ_UP, 18: EASE, 28: EASE, 31: CUT})
    assert steps_at(lines, range(2, 7)) == [8, 9, 12, 16, 18, 28]


def test_a_new_disturbance_starts_a_new_return():
    lines = trace(40, {20: CUT, 25: EASE, 30: EASE})
    assert steps_at(lines, [23]) == [25, 30]


def test_oscillation_in_calm_counts():
    lines = trace(40, {t: (CUT if t % 4 else EASE) for t in range(12, 40, 2)})
    assert steps_at(lines, []) == []
    # After a disturbance the first ease is a return; the cut after it
    # ends that, and the eases after the cut count.
    assert steps_at(lines, [9]) == [12]


def test_return_is_bounded_in_time():
    late = 5 + RETURN_MAX_S + 2
    lines = trace(late + 3, {8: EASE, late: EASE})
    assert steps_at(lines, [5]) == [8]


def test_a_change_that_lowers_the_read_target_is_no_return():
    # The write target down, but the read target down too: Kyber sees the
    # reads hurt sooner, a cut.
    lines = trace(20, {10: (0.5, 0.5)})
    assert steps_at(lines, [8]) == []


def test_unknown_targets_are_no_return():
    lines = trace(20, {10: EASE})
    lines[10]["write_target_ns"] = None
    assert steps_at(lines, [8]) == []
