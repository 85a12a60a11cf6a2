"""Traces of different programs in one folder are not compared as modes: told apart by the op
types and tf.function names they ran, and the page says why."""

from __future__ import annotations

import json
from pathlib import Path

import traceinsight
from traceinsight.findings import compared_pairs
from traceinsight.report import render

FOREIGN = Path(__file__).parent / "data" / "foreign"


def test_different_programs_are_not_compared_and_the_page_says_why():
    run = traceinsight.load(FOREIGN)
    groups = run.program_groups
    # one Dense model called by a tf.function three ways; a Keras fit; a tf.data custom loop
    assert sorted(map(sorted, groups)) == sorted([
        ["duplicate_step_num", "start_stop_markers", "start_stop_plain"], ["keras_tb/train"],
        ["tfdata_stalls"]])
    doc = json.loads(render(run, "json"))
    fastest = run.fastest
    others = {n for g in groups if fastest not in g for n in g}
    for m in doc["modes"]:
        if m["name"] in others:
            assert m["vs_fastest"] == "another program" and m["ratio"] is None
    assert "since their ops show another program" in doc["summary"]
    assert all(run.same_program(a.name, b.name) for a, b in compared_pairs(run))


def test_one_programs_traces_stay_one_group():
    run = traceinsight.load(FOREIGN / "start_stop_markers")
    assert len(run.program_groups) == 1


def test_a_first_marker_is_not_a_first_step_without_the_first_call_in_it():
    """Stock traces started after the step function was traced (each script calls it once before
    the profile) number their markers from 0: step 0 holds no tracing or compile, so it is a
    steady step like the others, not a 'first step' set apart."""
    for name in ("start_stop_markers", "tfdata_stalls"):
        run = traceinsight.load(FOREIGN / name, use_cache=False)
        (m,) = run.ok_modes()
        steps = m.table("steps")
        assert int(steps["step_num"][0]) == 0
        assert not bool(steps["first"][0]) and m.first_step is None
        assert m.n_steady == len(steps) - int(steps["partial"].sum())


def test_the_viewer_does_not_explain_one_program_by_another():
    """The overview's 'why slower' lines follow the summary: a trace of another program gets no
    comparison sentence against the fastest, only a line saying why."""
    from traceinsight.tui.overview import insights
    run = traceinsight.load(FOREIGN)
    text = insights(run, ([], None)).plain
    others = [n for g in run.program_groups if run.fastest not in g for n in g]
    assert others
    for name in others:
        assert f"{name} − {run.fastest}" not in text and f"{name} vs {run.fastest}" not in text
        assert name in text.split("their ops show another program:")[1]
