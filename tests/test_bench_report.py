# SPDX-License-Identifier: GPL-2.0-or-later
"""The benchmark suite's pure parts (no root, no I/O): the marked sections
of docs/BENCHMARKS.md, summary tables, rounds with rejection and their log,
the shift scenario's per-phase summary of flight records, the
generalization section's goal, verdicts and rendering, and the
configurations left out where the kernel lacks their scheduler."""

import os

from bench import baselines, benchlib, generalize, scenarios


def test_write_section_replaces_only_its_own(tmp_path, monkeypatch):
    doc = tmp_path / "BENCHMARKS.md"
    monkeypatch.setattr(benchlib, "DOC", str(doc))
    benchlib.write_section("a", "first a\n")
    assert doc.read_text().startswith(benchlib.DOC_HEADER)
    benchlib.write_section("b", "only b\n")
    benchlib.write_section("a", "second a\n")
    text = doc.read_text()
    assert "first a" not in text and "second a" in text and "only b" in text
    assert text.count("<!-- BEGIN a -->") == 1 and text.count("<!-- END a -->") == 1
    # Order is kept: a stays before b although it was rewritten last.
    assert text.index("second a") < text.index("only b")
    assert not os.path.exists(str(doc) + ".tmp")


def test_summary_table_median_and_spread():
    runs = {"x": [{"v": 3}, {"v": 1}, {"v": 2}], "y": [{"v": 5}], "z": [{"w": 1}]}
    rows = benchlib.summary_table(runs, (("v", "value", str),))
    assert rows[0] == "| configuration | runs | value |"
    assert rows[2] == "| x | 3 | 2 (1–3) |"
    assert rows[3] == "| y | 1 | 5 |"
    assert rows[4] == "| z | 1 | – |"


def test_offered_leaves_out_what_the_kernel_lacks():
    class Dev:
        def __init__(self, have):
            self.have = have

        def schedulers(self):
            return self.have

    configs = [("none", "none"), ("bfq", "bfq"), ("kyber", "kyber")]
    kept, said = benchlib.offered(Dev(["none", "mq-deadline", "kyber"]), configs, lambda c: c[1])
    assert kept == [("none", "none"), ("kyber", "kyber")]
    assert said.startswith("Not run: bfq, which this kernel does not have")
    assert "offers none, mq-deadline, kyber" in said
    kept, said = benchlib.offered(Dev(["none", "bfq", "kyber"]), configs, lambda c: c[1])
    assert kept == configs and said == ""


def test_verdict_and_formats():
    assert benchlib.verdict(True, "t") == "- **MET**: t"
    assert benchlib.verdict(False, "t") == "- **MISSED**: t"
    assert benchlib.fmt_target(50_000) == "50 µs" and benchlib.fmt_target(100_000_000) == "100 ms"
    assert benchlib.fmt_us(1_500_000) == "1,500 µs" and benchlib.fmt_us(25_000_000) == "25.0 ms"


def record(t, p99_ms, write_iops, changed=False, state="tracking"):
    return {"t": t, "read": {"p99_ns": int(p99_ms * 1e6), "iops": 1000},
            "write": {"iops": write_iops}, "changed": changed, "state": state}


def test_shift_summary_per_phase():
    bounds = [0, 10, 20, 30, 40]
    recs = [record(t, 0.5, 0) for t in range(1, 11)]                     # R1: met
    recs += [record(t, 9 if t < 14 or t == 15 else 1, 8000, changed=(t == 12))  # held from 16 s
             for t in range(11, 21)]
    recs += [record(t, 0.5, 0) for t in range(21, 31)]
    recs += [record(t, 5, 20000, state="infeasible") for t in range(31, 41)]  # never met
    rows = scenarios.shift_summary(recs, bounds)
    assert [r["phase"] for r in rows] == list(scenarios.PHASES)
    assert rows[0]["first_met"] == 1 and rows[0]["met_share"] == 1
    assert rows[1]["first_met"] == 6 and rows[1]["changes"] == 1
    assert rows[1]["met_share"] == 0.6 and rows[1]["write_iops"] == 8000
    assert rows[1]["read_p99"] == 1_000_000  # the settled second half only
    assert rows[3]["first_met"] is None and rows[3]["states"] == ["infeasible"]


def test_regenerate_command_names_the_make_target():
    targets = {(): "make bench", ("--full",): "make bench-full"}
    assert benchlib.regenerate_command("x.py", [], targets) == "make bench"
    assert benchlib.regenerate_command("x.py", ["--full"], targets) == "make bench-full"
    assert (benchlib.regenerate_command("x.py", ["--full", "--rounds", "2"], targets)
            == "/usr/bin/python3 -m bench.x --full --rounds 2")


def test_balanced_budget_from_the_die_time():
    # 8 dies x 1 s / 500 us = 16,000 programs/s with no reads; 10,000 reads
    # of 60 us take 0.6 die-seconds/s, leaving 7.4 for 14,800 programs/s.
    assert baselines.write_ceiling(0) == 16000
    assert round(baselines.write_ceiling(10000)) == 14800
    assert round(baselines.read_room(14800)) == 10000
    assert baselines.write_ceiling(1e6) == 0
    runs = {"none": [{"read_iops": 13000, "write_iops": 14000}],
            "kyber-tuned": [{"read_iops": 27000, "write_iops": 12700}]}
    text = baselines.balanced_budget(runs)[0]
    assert "leave time for 12,760 programs/s" in text and "one split meets both" in text
    runs["none"][0]["read_iops"] = 40000  # 90% of it does not fit beside 12,600 writes
    assert "no split" in baselines.balanced_budget(runs)[0]


def test_convergence_steal_note():
    assert baselines.steal_note([3.0, 4.0], [20.0, 0.0]) == ""
    note = baselines.steal_note([3.0, 9.0, None], [0.0, 12.0, 1.0])
    assert "of the 2 run(s) over 5 s, 1 had more than 5% host CPU steal" in note


# ------------------------------------------------------------ rounds with rejection
def tries(*steals):
    """A run callable returning {"try": i, "steal_pct": steals[i]} on its
    i-th call (None: no steal_pct in the figures)."""
    it = iter(enumerate(steals))

    def fn():
        i, st = next(it)
        return {"try": i} if st is None else {"try": i, "steal_pct": st}
    return fn


def quiet_rounds(**kw):
    calms = []
    kw.setdefault("calm", lambda limit: calms.append(limit))
    return benchlib.Rounds(**kw), calms


def test_rounds_rejects_a_disturbed_run_and_reruns_it():
    r, calms = quiet_rounds()
    assert benchlib.STEAL_LIMIT_PCT == 5 and benchlib.EXTRA_TRIES >= 1
    fig = r.run(tries(12.0, 5.0), "dev", 1, "none")
    assert fig == {"try": 1, "steal_pct": 5.0}  # exactly at the limit is accepted
    assert [e["status"] for e in r.log] == [benchlib.REJECTED, benchlib.ACCEPTED]
    assert [e["try"] for e in r.log] == [1, 2] and len(calms) == 1  # waited before the rerun
    assert all((e["label"], e["round"], e["config"]) == ("dev", 1, "none") for e in r.log)


def test_rounds_cap_keeps_the_least_disturbed_try():
    r, calms = quiet_rounds(extra_tries=2)
    fig = r.run(tries(30.0, 9.0, 20.0), "dev", 2, "tuned")
    assert fig["try"] == 1 and fig["steal_pct"] == 9.0
    assert [e["status"] for e in r.log] == [benchlib.REJECTED, benchlib.KEPT, benchlib.REJECTED]
    assert len(calms) == 2
    text = benchlib.rounds_sentence(r.log)
    assert text.startswith("3 tries for 1 run; 2 rejected (host steal over 5%)")
    assert "**1 run(s) kept disturbed**" in text and "dev round 2 tuned (3 tries, kept 9%)" in text
    # A cap of 0: one try, kept disturbed, no waiting.
    r, calms = quiet_rounds(extra_tries=0)
    assert r.run(tries(50.0))["try"] == 0
    assert [e["status"] for e in r.log] == [benchlib.KEPT] and not calms


def test_rounds_steal_of_the_whole_call_when_the_run_has_none():
    seen = []

    def steal(t0, t1):
        seen.append((t0, t1))
        return 7.0 if len(seen) == 1 else 1.0
    r, _ = quiet_rounds(steal=steal)
    fig = r.run(tries(None, None))
    assert fig == {"try": 1, "steal_pct": 1.0} and len(seen) == 2
    assert seen[0][0] <= seen[0][1]
    # Outside steal_watch() the steal is unknown: nothing is rejected.
    r, calms = quiet_rounds(steal=lambda t0, t1: None)
    assert r.run(tries(None)) == {"try": 0}
    assert r.log[0]["steal_pct"] is None and r.log[0]["status"] == benchlib.ACCEPTED
    assert benchlib.rounds_table(r.log, ())[2] == "| – |  | 1 | – | accepted |"


def test_interleaved_rotates_and_reruns_in_place():
    steal = {("b", 1): [40.0, 0.0]}  # b's first run of round 1 is disturbed once
    calls = []

    def measure(name):
        calls.append(name)
        st = steal.get((name, 1), [0.0])
        return {"v": name, "steal_pct": st.pop(0) if len(st) > 1 else st[0]}
    r, _ = quiet_rounds()
    runs = r.interleaved([("a", "a"), ("b", "b"), ("c", "c")], 3, measure, "x")
    assert calls == ["a", "b", "b", "c", "b", "c", "a", "c", "a", "b"]
    assert {k: len(v) for k, v in runs.items()} == {"a": 3, "b": 3, "c": 3}
    assert [(e["round"], e["config"], e["status"]) for e in r.log[:3]] == [
        (1, "a", "accepted"), (1, "b", "rejected"), (1, "b", "accepted")]
    assert len({e["run"] for e in r.log}) == 9 and len(r.log) == 10
    assert r.entries("x") == r.log and r.entries("y") == []


def test_rounds_table_lists_every_try():
    r, _ = quiet_rounds(extra_tries=1)
    r.run(lambda: {"read_p99": 2_000_000, "read_iops": 1000, "write_iops": 9000,
                   "steal_pct": 1.0}, "d: rounds", 1, "none")
    it = iter([{"read_p99": 9_000_000, "write_iops": 100, "steal_pct": 25.0},
               {"read_p99": 8_000_000, "write_iops": 200, "steal_pct": 15.0}])
    r.run(lambda: next(it), "d: rounds", 1, "kyber-tuned")
    rows = benchlib.rounds_table(r.log, benchlib.LAT_IOPS_FIGURES[::2], label_heading="phase")
    assert rows[0] == ("| phase | round | configuration | try | host steal | read P99 "
                       "| write IOPS | verdict |")
    assert rows[1] == "|---|---:|---|---:|---:|---:|---:|---|"
    assert rows[2] == "| d: rounds | 1 | none | 1 | 1% | 2,000 µs | 9,000 | accepted |"
    assert rows[3] == "| d: rounds | 1 | kyber-tuned | 1 | 25% | 9,000 µs | 100 | **rejected** |"
    assert rows[4].endswith("| 2 | 15% | 8,000 µs | 200 "
                            "| **kept disturbed** (rerun cap reached) |")
    folded = benchlib.rounds_log(r.log, benchlib.LAT_IOPS_FIGURES)
    assert folded[0].startswith("Every run of every round, rejected ones included: 3 tries for "
                                "2 runs; 1 rejected") and "<details>" in folded
    assert folded[-1] == "</details>"
    assert "| 1 | none | 1 | 1% | 2,000 µs | 1,000 | 9,000 | accepted |" in folded
    flat = benchlib.rounds_log(r.log, benchlib.LAT_IOPS_FIGURES, title="All", fold=False)
    assert flat[0].startswith("All: 3 tries") and "<details>" not in flat


# ------------------------------------------------------------ generalize
def test_generalize_goal_is_half_of_none_rounded():
    assert generalize.goal_for(1_456_000) == (730_000, "read-p99=730us scheduler=kyber")
    assert generalize.goal_for(50_600_000) == (25_000_000, "read-p99=25000us scheduler=kyber")
    assert generalize.goal_for(12_345_000) == (6_200_000, "read-p99=6200us scheduler=kyber")
    assert generalize.goal_for(500) == (1000, "read-p99=1us scheduler=kyber")


def run_(p99_us, write_iops, steal=0.0, targets=None):
    r = {"read_p99": p99_us * 1000, "read_iops": 1000, "write_iops": write_iops,
         "steal_pct": steal}
    if targets:
        r["targets"], r["state"] = targets, "tracking"
    return r


def device_result(tuned_w, tuned_p99_us, best=True, log=None):
    grid = {(50_000, 100_000_000): run_(300, 20000), (10_000_000, 20_000): run_(1400, 90000),
            (50_000, 20_000): run_(1300, 80000), (10_000_000, 100_000_000): run_(800, 60000)}
    if not best:
        grid = {k: run_(900, v["write_iops"]) for k, v in grid.items()}
    runs = {"none": [run_(1400, 100000)] * 3,
            generalize.TUNED: [run_(tuned_p99_us, tuned_w, targets=(400_000, 80_000_000))] * 3}
    if best:
        runs = {"none": runs["none"], generalize.BEST: [run_(320, 20000)] * 3,
                generalize.TUNED: runs[generalize.TUNED]}
    chosen = (50_000, 100_000_000)
    tried = {(50_000, 20_000): [run_(760, 80000)] * 3, chosen: [run_(310, 20000)] * 3}
    return {"none_p99": 1_400_000, "goal_ns": 700_000, "goal": "read-p99=700us", "grid": grid,
            "best": (chosen, grid[chosen]) if best else None, "tried": tried if best else {},
            "confirmed": best, "runs": runs, "log": log or benchlib.Rounds(), "wall": 300}


def test_generalize_confirms_the_grid_points_meeting_the_goal():
    grid = {(1, 1): run_(300, 20000), (2, 2): run_(1400, 90000), (3, 3): run_(600, 80000),
            (4, 4): run_(700, 60000)}
    assert generalize.confirm_candidates(grid, 700_000) == [(3, 3), (4, 4), (1, 1)]
    assert generalize.confirm_candidates(grid, 200_000) == []
    over, under = [run_(760, 1), run_(650, 1), run_(800, 1)], [run_(690, 1), run_(900, 1),
                                                              run_(500, 1)]
    # The first that meets the goal on its median, in the order tried.
    assert generalize.confirmed_best({(3, 3): over, (4, 4): under}, 700_000) == ((4, 4), True)
    assert generalize.confirmed_best({(3, 3): under, (4, 4): under}, 700_000) == ((3, 3), True)
    # None meets it: the closest, not confirmed.
    far = [run_(900, 1)] * 3
    assert generalize.confirmed_best({(3, 3): far, (4, 4): over}, 700_000) == ((4, 4), False)
    assert generalize.confirmed_best({}, 700_000) == (None, False)


def test_generalize_confirms_until_a_point_meets_the_goal():
    # Medians 800, 760, 650 µs against 700: the third is the first that
    # holds, the fourth is never run.
    p99 = {(1, 1): [800, 900, 700], (2, 2): [760, 700, 900], (3, 3): [650, 600, 800],
           (4, 4): [100, 100, 100]}
    ran = []

    def one(targets, i):
        ran.append(targets)
        return run_(p99[targets][i], 1)

    tried = generalize.confirm(list(p99), 3, 700_000, one)
    assert list(tried) == [(1, 1), (2, 2), (3, 3)] and len(ran) == 9
    assert generalize.confirmed_best(tried, 700_000) == ((3, 3), True)
    # None holds: every candidate tried, the closest chosen, not confirmed.
    tried = generalize.confirm([(1, 1), (2, 2)], 3, 700_000, one)
    assert generalize.confirmed_best(tried, 700_000) == ((2, 2), False)


def test_generalize_verdicts():
    (ok_w, text_w), (ok_p, text_p) = generalize.judge(device_result(18000, 650))
    assert ok_w and ok_p and "18,000 vs 20,000 (90%)" in text_w and "50 µs/100 ms" in text_w
    (ok_w, _), (ok_p, text_p) = generalize.judge(device_result(17000, 800))
    assert not ok_w and not ok_p and "over by 100 µs" in text_p
    (ok_w, text_w), _ = generalize.judge(device_result(90000, 650, best=False))
    assert not ok_w and "no grid point met the goal" in text_w and "900 µs" in text_w
    res = device_result(18000, 650)
    res["confirmed"] = False
    (_, text_w), _ = generalize.judge(res)
    assert "none of the 2 grid points that met the goal in the grid met it" in text_w


def test_generalize_seconds_within_the_goal():
    r, _ = quiet_rounds()
    r.run(lambda: {**run_(300, 1), generalize.SECONDS_P99: [200_000, 700_000, 701_000, 100]},
          "rounds", 1, generalize.TUNED)
    r.run(lambda: run_(300, 1), "goal", 1, "none")  # logged no seconds
    generalize.mark_seconds_within(r.entries(), 700_000)
    tuned, none = (e["figures"] for e in r.entries())
    assert tuned[generalize.WITHIN] == 75 and generalize.WITHIN not in none
    runs = {"none": [none], generalize.TUNED: [tuned, {**tuned, generalize.WITHIN: 95}]}
    assert generalize.median_within(runs, generalize.TUNED) == 85
    assert generalize.median_within(runs, "none") is None
    assert generalize.within_text(runs) == "kyber-tuned 85%"
    assert generalize.within_text({"none": [none]}) == "not logged"


def test_generalize_render(monkeypatch):
    args = generalize.parse_args(["--no-write"])
    assert (args.goal_runs, args.rounds, len(args.grid[0]), len(args.grid[1])) == (3, 5, 4, 4)
    smoke = generalize.parse_args(["--smoke"])
    assert smoke.no_write and smoke.runtime < args.runtime
    r, _ = quiet_rounds()
    for label in ("goal", "rounds", "grid", "confirm"):
        r.run(lambda: run_(1000, 1000, steal=1.0), label, 1, "none")
    monkeypatch.setattr(generalize, "DEVICES", (("d", "device d", None), ("e", "device e", None)))
    res = device_result(18000, 650, log=r)
    tuned = res["runs"][generalize.TUNED]
    res["runs"][generalize.TUNED] = [{**x, generalize.WITHIN: 90.0} for x in tuned]
    body = generalize.render(args, {"d": res,
                                    "e": "device unavailable: no FUSE"}, 1200, "make x")
    assert "Regenerate with `make x` (root; quick mode)" in body
    assert "the first of them, most write IOPS first, whose median read P99" in body
    assert "most write IOPS first (at most 2 tried), whose" in generalize.render(
        smoke, {"d": res}, 1, "make x")
    assert "| device d | 1,400 µs | read-p99=700us | 50 µs/100 ms | 650 µs | 18,000 vs 20,000 " \
           "| **MET** | **MET** | – / 90% |" in body
    assert "not one of the targets above), median per run: kyber-tuned 90%." in body
    assert ("| configuration | runs | read P99 | read IOPS | write IOPS | seconds within goal "
            "|" in body)
    assert ("| device e | – | – | – | – | – | **MISSED** (device unavailable: no FUSE) "
            "| **MISSED** | – |" in body)
    assert body.count("- **MISSED**") == 2  # device e's two targets
    assert ("The goal's runs, the confirmation runs and every run of every round, rejected "
            "ones included: 3 tries" in body)
    assert "| goal | 1 | none | 1 | 1% |" in body and "| grid |" not in body
    assert "| confirm | 1 | none | 1 | 1% |" in body
    assert "grid 300 µs / 20,000 write IOPS; confirmed)" in body
    assert "| kyber 50 µs/20 µs | 3 | 760 µs (760 µs–760 µs) |" in body
    assert "- kyber 50 µs/20 µs: median read P99 760 µs, over the goal" in body
    assert "- kyber 50 µs/100 ms: median read P99 310 µs, meets the goal" in body
    assert "Every try of the grid, rejected ones included" in body
    assert "final targets per round: 400 µs/80 ms" in body


def test_grid_table_bolds_the_given_goal():
    grid = {(50_000, 20_000): run_(300, 100), (1_000_000, 20_000): run_(900, 200)}
    rows = baselines.grid_table(grid, [], goal_ns=500_000, rounds_name="round")
    assert "**300 µs / 100**" in rows[2] and "| 900 µs / 200 |" in rows[3]
    assert baselines.best_static(grid, 500_000)[0] == (50_000, 20_000)
    assert baselines.best_static(grid, 1_000_000)[0] == (1_000_000, 20_000)
    assert baselines.best_static(grid, 100_000) is None


def test_trace_tuned_goal_and_percentiles():
    from bench import trace_tuned
    assert trace_tuned.parse_goal("read-p99=470us scheduler=kyber") == (99.0, 470_000)
    assert trace_tuned.parse_goal("mode=latency read-p99.9=2ms") == (99.9, 2_000_000)
    for bad in ("write-iops-min=8k", "read-p99=fast", "read-p100=1ms", "xread-p99=1ms"):
        try:
            trace_tuned.parse_goal(bad)
        except ValueError:
            continue
        raise AssertionError(f"{bad!r} accepted")
    # Two windows of fio's histogram (exact buckets: index = ns below 128):
    # the run's percentile is of both windows' samples together.
    a, b = [0] * 128, [0] * 128
    a[10], b[100] = 99, 1
    b[20] = 99
    windows = [(1000, a), (2000, b)]
    assert trace_tuned.window_pct(windows, 99) == [(1000, 10), (2000, 20)]
    assert [trace_tuned.run_pct(windows, p) for p in (40, 60, 99.9)] == [10, 20, 100]
    lines = [{"time_ns": 999_000_000}, {"time_ns": 2_100_000_000}]
    assert trace_tuned.nearest_line(lines, 1.0) is lines[0]
    assert trace_tuned.nearest_line(lines, 5.0) is None
