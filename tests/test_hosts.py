"""The hosts of a multi-host profile session compared (traceinsight.analysis.hosts), on synthetic
XSpaces whose step walls and categories are chosen by hand (tests/hosts_data.py), on the real
two-host GPU demo trace, and in every renderer."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from hosts_data import remote_run, three_hosts, write_hosts

import traceinsight
from traceinsight.analysis.hosts import compare_sessions
from traceinsight.cli import main
from traceinsight.derive import complete
from traceinsight.report import hosts_prose, render
from traceinsight.report.json import load_schema
from traceinsight.stepsource import StepSource
from traceinsight.testing import sample_run

from xspace_builder import Space, session_path

MS = 1e-3  # one µs in ms
GPU_DEMO = Path(__file__).parent / "data" / "gpu_demo"
# XProf 2.24 on one host of the demo (tests/test_realworld.py): its one step and device compute
XPROF_STEP_MS = 21.310352
XPROF_COMPUTE_MS = 14.875539


@pytest.fixture(scope="module")
def three(tmp_path_factory):
    path = three_hosts(tmp_path_factory.mktemp("three") / "logdir")
    return traceinsight.load(path, use_cache=False)


def test_three_hosts_table_by_hand(three):
    (g,) = three.host_groups()
    assert g.session == "logdir" and g.host_names == ("w0", "w1", "w2")
    assert [h.mode for h in g.hosts] == ["logdir/w0", "logdir/w1", "logdir/w2"]
    assert [h.steps for h in g.hosts] == [5, 5, 5]
    # medians of the walls in tests/hosts_data.py
    assert [h.median_ms for h in g.hosts] == pytest.approx([1000 * MS, 1020 * MS, 1600 * MS])
    # quartiles (linear): w0 sorted 990 1000 1000 1010 1200 -> 1000, 1010; w1 all 1020 inside
    assert (g.hosts[0].p25_ms, g.hosts[0].p75_ms) == pytest.approx((1000 * MS, 1010 * MS))
    assert (g.hosts[1].p25_ms, g.hosts[1].p75_ms) == pytest.approx((1020 * MS, 1020 * MS))
    assert (g.hosts[2].p25_ms, g.hosts[2].p75_ms) == pytest.approx((1600 * MS, 1600 * MS))
    assert [h.ratio for h in g.hosts] == pytest.approx([1.0, 1.02, 1.6])
    # the host the others are measured against has no interval of its own
    assert g.hosts[0].ratio_lo != g.hosts[0].ratio_lo
    assert (g.fastest, g.slowest, g.straggler) == (("w0",), ("w2",), "w2")
    assert g.spread_ratio == pytest.approx(1.6)
    assert g.spread_ms == pytest.approx(600 * MS)
    # The spread's interval: w2's resampled median is 1100 when 3 of 5 draws are its step 3
    # (p = 0.058), else 1600 or more; w0's is 1200 with p = 0.058, 1010 or more with p = 0.32.
    # Below 1100 / 1000 lie 1100/1200 and 1100/1010 only (p = 0.018 < 0.025): the 2.5 % quantile
    # is 1100 / 1000 = 1.10. Above 1.65 = 1650 / 1000 lies 1650/990 only (p = 0.003), and 1.65
    # itself holds p = 0.035: the 97.5 % quantile is 1.65.
    assert (g.spread_lo, g.spread_hi) == pytest.approx((1.10, 1.65))
    assert g.significant is True and not g.one_step


def test_three_hosts_category_behind_the_straggler(three):
    (g,) = three.host_groups()
    assert g.category_kind == "host"
    w0, w1, w2 = (h.categories for h in g.hosts)
    assert w0["op"] == pytest.approx(400 * MS) and w0["dispatch"] == pytest.approx(100 * MS)
    assert w0["input"] == pytest.approx(100 * MS) and w2["input"] == pytest.approx(700 * MS)
    # python: the rest of each step (w0: 400 410 600 390 400 -> 400; w1 -> 420; w2 -> 400)
    assert (w0["python"], w1["python"], w2["python"]) == pytest.approx((0.4, 0.42, 0.4))
    assert g.explained_by == "input"
    assert g.category_delta["input"] == pytest.approx(600 * MS)
    assert all(v == pytest.approx(0) for c, v in g.category_delta.items() if c != "input")
    assert "mostly input: +0.60 of +0.60 ms/step against w0" in hosts_prose.category_sentence(g)


def test_three_hosts_per_step_by_hand(three):
    (g,) = three.host_groups()
    assert g.aligned and g.unmatched == {}
    assert [s.step_num for s in g.steps] == [1, 2, 3, 4, 5]
    # step 3: w0's 1200 is the slowest; every other step is w2's
    assert [s.slowest for s in g.steps] == ["w2", "w2", "w0", "w2", "w2"]
    waits = [[round(w / MS) for w in s.wait_ms] for s in g.steps]
    assert waits == [[600, 570, 0], [590, 580, 0], [0, 180, 100], [610, 590, 0], [650, 630, 0]]
    assert [h.straggler_steps for h in g.hosts] == [1, 0, 4]
    assert [h.wait_median_ms for h in g.hosts] == pytest.approx([600 * MS, 580 * MS, 0])
    assert [h.wait_total_ms for h in g.hosts] == pytest.approx([2450 * MS, 2550 * MS, 100 * MS])
    assert g.step_ties == 0
    s = hosts_prose.step_sentence(g)
    assert "matched by step_num" in s and "never by time" in s
    assert "w2 in 4, w0 in 1 of 5" in s and "w0 0.60, w1 0.58" in s


def test_each_host_gets_a_short_note(three):
    notes = {n: [x for x in m.notes if "profile session" in x] for n, m in three.modes.items()}
    assert all(len(v) == 1 for v in notes.values())
    assert notes["logdir/w2"][0].startswith("the straggler of the 3 hosts in profile session "
                                            "logdir: 1.60× the fastest host's median, +0.60 ms/step,"
                                            " mostly input")
    assert "the straggler is w2" in notes["logdir/w0"][0]


def test_misaligned_step_numbers_are_not_compared_per_step(tmp_path):
    path = write_hosts(tmp_path / "logdir", {
        "a": [(i, 1000, 100) for i in range(1, 6)],
        "b": [(i, 1300, 400) for i in range(101, 106)]})
    (g,) = traceinsight.load(path, use_cache=False).host_groups()
    assert g.straggler == "b" and g.spread_ms == pytest.approx(300 * MS)
    assert g.explained_by == "input"
    assert not g.aligned and g.steps == ()
    assert "no steady step number is on every host (a: steps 1–5; b: steps 101–105)" in g.alignment
    assert hosts_prose.step_sentence(g).startswith("Per-step comparison isn't possible: ")
    assert "clocks are not synchronised" in hosts_prose.step_sentence(g)
    assert all(h.straggler_steps == 0 and h.wait_median_ms != h.wait_median_ms for h in g.hosts)


def test_partly_overlapping_steps_compare_the_common_ones(tmp_path):
    path = write_hosts(tmp_path / "logdir", {
        "a": [(i, 1000 + i, 100) for i in range(1, 6)],
        "b": [(i, 1000, 100) for i in range(3, 8)]})
    (g,) = traceinsight.load(path, use_cache=False).host_groups()
    assert g.aligned and [s.step_num for s in g.steps] == [3, 4, 5]
    assert [s.slowest for s in g.steps] == ["a"] * 3
    assert [s.wait_ms[1] for s in g.steps] == pytest.approx([3 * MS, 4 * MS, 5 * MS])
    assert g.unmatched == {"a": 2, "b": 2}
    assert "3 on every host (a: 2 more not on every host, b: 2 more" in g.alignment


def test_hosts_tied_for_the_slowest_name_no_straggler(tmp_path):
    slow = [(i, 1500, 600) for i in range(1, 4)]
    path = write_hosts(tmp_path / "logdir", {"a": [(i, 1000, 100) for i in range(1, 4)],
                                             "b": slow, "c": slow})
    (g,) = traceinsight.load(path, use_cache=False).host_groups()
    assert g.straggler is None and g.slowest == ("b", "c") and g.fastest == ("a",)
    assert g.spread_ratio == pytest.approx(1.5) and g.explained_by is None
    assert g.category_delta == {} and hosts_prose.category_sentence(g) == ""
    assert "b and c tie for the slowest median" in hosts_prose.spread_sentence(g)
    assert g.step_ties == 3 and all(s.slowest is None for s in g.steps)
    assert [h.straggler_steps for h in g.hosts] == [0, 0, 0]


def test_a_straggler_within_noise_says_so(tmp_path):
    # a: 1000 1100 1000 1100 1000 (median 1000), b: 1100 1000 1100 1000 1100 (median 1100); each
    # resampled median is 1000 or 1100 (1100 on a with p = 0.32), so the interval holds 1
    path = write_hosts(tmp_path / "logdir", {
        "a": [(i, 1000 + 100 * (i % 2 == 0), 100) for i in range(1, 6)],
        "b": [(i, 1000 + 100 * (i % 2 == 1), 100) for i in range(1, 6)]})
    (g,) = traceinsight.load(path, use_cache=False).host_groups()
    assert g.straggler == "b" and g.spread_ratio == pytest.approx(1.1)
    assert g.spread_lo <= 1.0 <= g.spread_hi and g.significant is False
    assert hosts_prose.spread_sentence(g).endswith("(within noise: the interval includes 1).")
    assert "1.10× the fastest host's median; within noise; see the hosts table" in \
        traceinsight.load(path, use_cache=False).modes["logdir/a"].notes[-1]
    # per step the slowest alternates: b in steps 1, 3, 5, a in 2 and 4
    assert [s.slowest for s in g.steps] == ["b", "a", "b", "a", "b"]


def test_steps_without_the_jobs_step_numbers_are_not_matched(tmp_path):
    # host b has no step markers: its steps are its tf.function calls, numbered 0, 1, 2 by us
    write_hosts(tmp_path / "logdir", {"a": [(i, 1000, 100) for i in range(3)]})
    sp = Space()
    main_line = sp.host().line("python")
    for t0 in (0, 1100, 2200):
        main_line.event("f", t0, 1000, tf_function_call="notTraced-nonXla")
        main_line.event("KernelAndDeviceFunc::Run", t0 + 5, 900)
    sp.write(session_path(tmp_path / "logdir", host="b"))
    (g,) = traceinsight.load(tmp_path / "logdir", use_cache=False).host_groups()
    assert not g.aligned and g.steps == ()
    assert g.alignment.startswith("the steps of b do not come from step markers carrying the "
                                  "job's step_num")


def test_repeated_step_numbers_are_not_matched(tmp_path):
    write_hosts(tmp_path / "logdir", {"a": [(1, 1000, 100), (2, 1000, 100), (3, 1000, 100)],
                                      "b": [(1, 1000, 100), (1, 1000, 100), (1, 1000, 100)]})
    run = traceinsight.load(tmp_path / "logdir", use_cache=False)
    assert "renumbered" in run.modes["logdir/b"].step_rule
    assert run.modes["logdir/b"].step_source is StepSource.MARKERS_RENUMBERED
    (g,) = run.host_groups()
    assert not g.aligned and "the steps of b do not come from step markers" in g.alignment


def test_one_host_per_session_has_no_hosts_view(tmp_path):
    write_hosts(tmp_path / "logdir", {"a": [(1, 1000, 100), (2, 1000, 100)]})
    write_hosts(tmp_path / "logdir", {"a": [(1, 1000, 100), (2, 1000, 100)]},
                session="2026_01_02_00_00_00")
    run = traceinsight.load(tmp_path / "logdir", use_cache=False)
    assert len(run.modes) == 2 and run.host_groups() == ()
    assert sample_run().host_groups() == ()        # a captured run's modes are not hosts


def test_a_failed_host_is_listed_not_compared(tmp_path):
    path = three_hosts(tmp_path / "logdir")
    (path / "plugins" / "profile" / "2026_01_01_00_00_00" / "w3.xplane.pb").write_bytes(b"junk")
    (g,) = traceinsight.load(path, use_cache=False).host_groups()
    assert g.host_names == ("w0", "w1", "w2")
    assert [h for h, _ in g.missing] == ["w3"]
    assert hosts_prose.sentences(g)[-1].startswith("w3 is not compared: failed")


def test_remote_capture_run_folder(tmp_path):
    """``capture --remote`` writes one mode per worker, each trace under its own mode folder but
    one session folder name: those modes are one job's hosts."""
    path = remote_run(tmp_path / "job", {"w0": [(i, 1000, 100) for i in range(1, 4)],
                                         "w1": [(i, 1250, 350) for i in range(1, 4)]})
    run = traceinsight.load(path, use_cache=False)
    (g,) = run.host_groups()
    assert g.session == "2026_01_01_00_00_00"
    assert [(h.host, h.mode) for h in g.hosts] == [("w0_6000", "w0:6000"), ("w1_6001", "w1:6001")]
    assert g.straggler == "w1_6001" and g.explained_by == "input" and g.aligned
    assert [s.wait_ms for s in g.steps] == [pytest.approx((250 * MS, 0))] * 3
    assert any("the straggler of the 2 hosts" in n for n in run.modes["w1:6001"].notes)
    # the notes are added after the analysis cache: a load that writes the cache, then one that
    # reads it, say the same
    traceinsight.load(path)
    again = traceinsight.load(path)
    assert again.modes["w1:6001"].notes == run.modes["w1:6001"].notes


# ---- the comparison is made once per load ------------------------------------------------------

@pytest.fixture
def comparisons(monkeypatch):
    """Every call of ``hosts.compare_sessions`` (the whole hosts comparison), counted."""
    from traceinsight.analysis import hosts
    calls: list[tuple[str, ...]] = []
    real = hosts.compare_sessions

    def counted(modes, session):
        calls.append(tuple(modes))
        return real(modes, session)

    monkeypatch.setattr(hosts, "compare_sessions", counted)
    return calls


def test_hosts_are_compared_once_per_load(tmp_path, comparisons):
    """The loader compares the hosts (for each host's note) and builds the Run with that
    comparison: the hosts table, the reports, the findings and the viewer read it, none makes
    it again."""
    import dataclasses
    import io

    from rich.console import Console

    from traceinsight.model import Run
    from traceinsight.report import terminal

    run = traceinsight.load(three_hosts(tmp_path / "logdir"), use_cache=False)
    assert len(comparisons) == 1
    groups = run.host_groups()
    assert run.host_groups() is groups and len(groups) == 1
    terminal.show(run, console=Console(file=io.StringIO(), width=100))
    for fmt in ("md", "json", "html"):
        render(run, fmt)
    _ = run.findings
    assert len(comparisons) == 1
    # the groups made before the notes were added are those the noted modes give afresh: a Run
    # built elsewhere (tests, a copy) computes its own as it is made, once
    fresh = complete(Run(path=run.path, name=run.name, modes=run.modes, manifest=run.manifest,
                source=run.source))
    assert len(comparisons) == 2
    again = fresh.host_groups()
    assert fresh.host_groups() is again and len(comparisons) == 2
    assert json.dumps([g.to_dict() for g in again]) == json.dumps([g.to_dict() for g in groups])
    copy = dataclasses.replace(run)          # a copy may have other modes: its own comparison
    assert copy.host_groups() is not groups and len(comparisons) == 3


@pytest.mark.parametrize("command", [["analyze"], ["report", "--format", "md"],
                                     ["report", "--format", "json"]])
def test_each_command_compares_the_hosts_once(tmp_path, capsys, comparisons, command):
    path = three_hosts(tmp_path / "logdir")
    assert main([command[0], str(path), *command[1:]]) == 0
    assert "w2" in capsys.readouterr().out
    assert len(comparisons) == 1


def test_remote_run_folder_compares_the_hosts_once(tmp_path, comparisons):
    path = remote_run(tmp_path / "job", {"w0": [(i, 1000, 100) for i in range(1, 4)],
                                         "w1": [(i, 1250, 350) for i in range(1, 4)]})
    for use_cache in (True, True, False):       # writing the cache, reading it, without it
        comparisons.clear()
        run = traceinsight.load(path, use_cache=use_cache)
        (g,) = run.host_groups()
        render(run, "md")
        assert g.straggler == "w1_6001" and len(comparisons) == 1


# ---- the real two-host GPU demo: identical hosts, one device step each -------------------------

def test_gpu_demo_identical_hosts_name_no_straggler():
    run = traceinsight.load(GPU_DEMO, use_cache=False)
    (g,) = run.host_groups()
    assert g.host_names == ("34.83.195.179_6003", "34.83.195.180_6003")
    assert g.straggler is None and g.fastest == g.slowest == g.host_names
    assert g.spread_ratio == 1.0 and g.spread_ms == 0.0
    assert [h.median_ms for h in g.hosts] == pytest.approx([XPROF_STEP_MS] * 2, rel=0.05)
    # one steady step each: no interval, no significance claimed
    assert g.one_step and g.significant is None and all(h.steps == 1 for h in g.hosts)
    assert "n=1" in hosts_prose.spread_sentence(g) and "no straggler" in hosts_prose.spread_sentence(g)
    # host tracer level 0: the device side is what the hosts can be compared on
    assert g.category_kind == "device"
    assert g.hosts[0].categories["device compute"] == pytest.approx(XPROF_COMPUTE_MS, rel=0.05)
    assert g.hosts[0].categories == g.hosts[1].categories
    # XProf's step groups number each trace's steps: never matched across hosts
    assert not g.aligned and "do not come from step markers" in g.alignment
    for m in run.modes.values():
        assert [n for n in m.notes if "profile session" in n] == [
            "one of 2 hosts in profile session gpu_demo, all with the same median step: no "
            "straggler (see the hosts table)"]


def test_ties_do_not_depend_on_the_order_modes_come_in():
    run = traceinsight.load(GPU_DEMO, use_cache=False)
    g = run.host_groups()[0]
    reordered = dict(reversed(list(run.modes.items())))
    (h,) = compare_sessions(reordered, {n: "s" for n in reordered})
    assert h.to_dict() | {"session": g.session} == g.to_dict()


# ---- renderers ---------------------------------------------------------------------------------

def test_analyze_prints_the_hosts(tmp_path, capsys):
    path = three_hosts(tmp_path / "logdir")
    assert main(["analyze", str(path)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "hosts of profile session logdir: ms per steady step" in out
    assert "w2 5 1.60 1.60–1.60 1.60× [1.10, 1.65] 4 0" in out      # host, steps, median, ...
    assert "w2 − w0 0 0 0 0 +0.60 0 0" in out          # the category delta row
    assert "The straggler is w2: 1.60 ms/step median against the fastest host w0 (1.00 ms)" in out
    assert "3 w0 1.20 w1 0.18, w2 0.10" in out          # step 3 of the per-step table


def test_analyze_without_hosts_prints_no_hosts_table(tmp_path, capsys):
    write_hosts(tmp_path / "logdir", {"a": [(1, 1000, 100), (2, 1000, 100)]})
    assert main(["analyze", str(tmp_path / "logdir")]) == 0
    assert "hosts of profile session" not in capsys.readouterr().out


def test_reports_show_the_hosts(three):
    doc = json.loads(render(three, "json"))
    jsonschema.validate(doc, load_schema())
    (s,) = doc["host_sessions"]
    assert s["straggler"] == "w2" and s["explained_by"] == "input"
    assert s["steps"][2] == {"step_num": 3, "slowest": "w0",
                             "wall_ms": {"w0": 1.2, "w1": 1.02, "w2": 1.1},
                             "wait_ms": {"w0": 0.0, "w1": 0.18, "w2": 0.1}}
    assert "straggler w2 1.60× the fastest host (mostly input)" in doc["summary"]
    md = render(three, "md")
    assert "## Hosts" in md and "| `w2 − w0` | 0 | 0 | 0 | 0 | +0.60 | 0 | 0 |" in md
    assert "| `w2` | `logdir/w2` | 5 | 1.60 | 1.60–1.60 | 1.60× [1.10, 1.65] | 4 | 0 |" in md
    html = render(three, "html")
    assert "<h2>Hosts</h2>" in html and "<td>w0 0.60, w1 0.57</td>" in html
    one = json.loads(render(sample_run(), "json"))
    assert one["host_sessions"] == [] and "## Hosts" not in render(sample_run(), "md")


def test_hostile_host_names_are_escaped(tmp_path):
    evil = "<b>x\x1b[31m"
    write_hosts(tmp_path / "logdir", {evil: [(1, 1000, 100), (2, 1000, 100)],
                                      "ok": [(1, 1500, 600), (2, 1500, 600)]})
    run = traceinsight.load(tmp_path / "logdir", use_cache=False)
    assert run.host_groups()[0].host_names == (evil, "ok")
    html = render(run, "html")
    assert "<b>x" not in html and "\x1b" not in html and "&lt;b&gt;x\\x1b[31m" in html
    md = render(run, "md")
    assert "\x1b" not in md
    doc = json.loads(render(run, "json"))
    jsonschema.validate(doc, load_schema())
    assert doc["host_sessions"][0]["hosts"][0]["host"] == evil


# ---- the viewer --------------------------------------------------------------------------------

def test_viewer_h_opens_the_hosts_screen_only_for_multi_host_runs(tmp_path):
    import asyncio

    from traceinsight.tui import get_app
    from traceinsight.tui.hosts import HostsScreen
    from traceinsight.tui.overview import OverviewScreen

    from tui_runs import multi_host_run, open_hosts, settle

    async def go():
        app = get_app(multi_host_run(tmp_path))
        async with app.run_test(size=(120, 40)) as pilot:
            await open_hosts(pilot)
            assert isinstance(app.screen, HostsScreen)
            await pilot.press("escape")
            assert isinstance(app.screen, OverviewScreen)
        app = get_app(sample_run())
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            await pilot.press("h")
            await pilot.pause()
            assert isinstance(app.screen, OverviewScreen)   # no hosts: h does nothing
    asyncio.run(go())


def test_waits_rounded_all_at_once_equal_pythons_round():
    """The per-step waits are rounded to the ps as one array (hosts._ps_array); the floats must be
    those of round(v, 9) one by one, on differences of ms figures measured in ps (wall times of
    up to an hour, and tiny ones)."""
    import numpy as np

    from traceinsight.analysis.hosts import _ps_array
    rng = np.random.default_rng(7)
    for longest_s in (1, 999, 3_600):    # below 1000 s all at once; above, one by one
        ps = np.concatenate([rng.integers(0, longest_s * 10**12, 20_000),
                             rng.integers(0, 10**6, 5_000), [0, 1, 999_999_999]])
        walls = (ps / 1e9).reshape(-1, 1)
        top = np.maximum.accumulate(walls)              # a slowest wall >= each wall
        diff = top - walls
        assert _ps_array(diff).tolist() == [[round(v, 9)] for v in diff.ravel().tolist()]
