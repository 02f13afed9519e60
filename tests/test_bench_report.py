# SPDX-License-Identifier: GPL-2.0-or-later
"""The benchmark suite's pure parts (no root, no I/O): the marked sections
of docs/BENCHMARKS.md, summary tables, and the shift scenario's per-phase
summary of flight records."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench"))
import baselines  # noqa: E402
import benchlib  # noqa: E402
import scenarios  # noqa: E402


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
            == "/usr/bin/python3 bench/x.py --full --rounds 2")


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
