# SPDX-License-Identifier: LGPL-2.1-or-later
"""Reading the tuner's --json trace: which target changes are its return
from a disturbance, as opposed to its steady state."""

# The tuner's return after a disturbance can outlast the seconds a test
# leaves out after it (test_tuner.py's RECOVERY_S): from depth 1 the writes
# come back one level per slack streak (a CI run at 12-28% steal: 4 steps
# over 20 s, then a probe). A change that only eases (write target down,
# read target up), with nothing but such changes since the host last
# disturbed a second and at most RETURN_MAX_S after it, is that return and
# not a steady-state change. The first change that cuts ends it: in a calm
# stretch an oscillating tuner's cut comes within seconds, and every change
# after it counts.
RETURN_MAX_S = 30


def return_steps(lines, at, disturbed_ms):
    """The changed lines (ids) that are a return from a disturbance: each
    since the last disturbed second only eased the throttling. `at` gives
    a line's ms after the run's start; disturbed_ms the ends of the
    disturbed 1-s windows."""
    steps, since, prev = set(), None, None
    for l in lines:
        t = at(l)
        if any(e - 1000 < t <= e for e in disturbed_ms):
            since = t
        elif l["tuner"]["changed"] and prev is not None:
            known = None not in (l["write_target_ns"], l["read_target_ns"],
                                 prev["write_target_ns"], prev["read_target_ns"])
            eases = known and (l["write_target_ns"] <= prev["write_target_ns"]
                               and l["read_target_ns"] >= prev["read_target_ns"])
            if since is not None and eases and t - since <= RETURN_MAX_S * 1000:
                steps.add(id(l))
            else:
                since = None
        prev = l
    return steps
