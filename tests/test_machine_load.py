"""The machine's load, measured and used, and intervals only from what supports them: each rule on
synthetic timings with a known answer, the capture's round loop on canned rounds (no TensorFlow),
and one real capture beside artificial CPU hogs (marked ``capture``)."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from traceinsight import runfolder
from traceinsight.compare import compare_modes
from traceinsight.derive import complete
from traceinsight.machineload import DISTURBED_OTHER_CPU, RoundAction, RoundLoad, disturbed, load_explains
from traceinsight.model import Run, Timing
from traceinsight.report.diff import diff_data
from traceinsight.report.text import render_diff
from traceinsight.rundiff import diff_runs
from traceinsight.stats import MIN_PAIRED_ROUNDS, NOT_INTERLEAVED, interleaved, pair_rounds
from traceinsight.testing import interleaved_rounds, make_mode


def timed(name: str, round_ms: list[float], n: int = 12, spread: float = 0.01,
          start: float = 1_800_000_000.0, offset: float = 0.0,
          other: float | list[float] | None = 0.02):
    """A mode whose untraced steps come in rounds with these medians (±spread, n steps each),
    timed in the rounds of the capture that began at ``start`` (``offset``: its place in each
    round's ten seconds)."""
    rounds = [np.full(n, ms * 1e-3) * (1 + spread * np.linspace(-1, 1, n)) for ms in round_ms]
    fields = interleaved_rounds(np.concatenate(rounds), len(rounds), start=start, offset=offset)
    fields["rounds"] = tuple(rounds)    # exactly these rounds (array_split would cut the same)
    loads = other if isinstance(other, list) else [other] * len(rounds)
    for rec, o in zip(fields["load"]["rounds"], loads):
        rec["other_cpu_busy"] = o
    t = Timing(steps_s=np.concatenate(rounds), **fields)
    return dataclasses.replace(make_mode(name, {"op": round_ms[-1]}), timing=t)


def run_of(*modes, name="r"):
    return complete(Run(path=None, name=name, modes={m.name: m for m in modes}))


# ---- the rule --------------------------------------------------------------------------------

def test_a_round_is_disturbed_from_half_the_cpus_on():
    assert not disturbed(None) and not disturbed(0.0) and not disturbed(DISTURBED_OTHER_CPU - 0.01)
    assert disturbed(DISTURBED_OTHER_CPU) and disturbed(1.0)
    r = RoundLoad.of({"round": 2, "other_cpu_busy": 0.7, "steal": 0.1, "t_start_unix": 5.0,
                      "t_end_unix": 6.0, "steps_s": [0.1, 0.2]}, RoundAction.RERUN)
    assert r == RoundLoad(2, 0.7, 0.1, 5.0, 6.0, 2, RoundAction.RERUN) and r.disturbed
    # an older record: no steal, no window
    assert RoundLoad.of({"round": 1}) == RoundLoad(1)
    # the slower capture's load explains a change when it was disturbed or 10 points busier
    assert load_explains(0.9, 0.85) and load_explains(0.3, 0.15)
    assert not load_explains(0.2, 0.15) and not load_explains(None, 0.0)


def test_usage_records_steal_beside_the_others_share():
    from traceinsight.capture import machine
    out = machine.Usage().finish()
    assert {"other_cpu_busy", "own_cpu_busy", "steal"} <= out.keys()
    if os.path.exists("/proc/stat"):
        assert out["steal"] is None or 0.0 <= out["steal"] <= 1.0


def test_an_interval_of_a_few_ticks_gets_no_load_figure(monkeypatch):
    """Over 2 ticks, one busy tick of another process would read "50 %": an interval shorter than
    ``MIN_TICKS`` gets no figure; from there on the share is the ticks' own arithmetic."""
    from traceinsight.capture import machine
    ticks = iter([(1000, 400, 100, 0), (1002, 401, 100, 0),      # 2 ticks: too few
                  (1000, 400, 100, 0), (1040, 420, 110, 2)])     # 40 ticks: 10 of others, 2 stolen
    monkeypatch.setattr(machine, "_ticks", lambda: next(ticks))
    short = machine.Usage().finish()
    assert short["other_cpu_busy"] is None and short["own_cpu_busy"] is None
    out = machine.Usage().finish()
    assert out["other_cpu_busy"] == 0.25 and out["own_cpu_busy"] == 0.25 and out["steal"] == 0.05


# ---- paired rounds: the estimate and the interval come from them alone -----------------------

def test_the_first_unpaired_round_never_moves_the_ratio():
    """The TF 2.15 case: round 0 (unpaired, most of the steps) at 1.28x, rounds 1-3 at 0.96 to
    1.03x. The pooled medians said 1.09x [1.08, 1.10], excluding every paired round. From the
    paired rounds alone: within the rounds' ratios, an interval that holds them all, and no
    measurable difference."""
    a = timed("eager", [12.8, 9.6, 10.3, 10.0], n=12)
    b = timed("function", [10.0, 10.0, 10.0, 10.0], n=12)
    a = dataclasses.replace(a, timing=dataclasses.replace(
        a.timing, rounds=(np.full(60, 12.8e-3),) + a.timing.rounds[1:],
        steps_s=np.concatenate([np.full(60, 12.8e-3), *a.timing.rounds[1:]])))
    assert np.median(a.step_samples_ms) / np.median(b.step_samples_ms) > 1.08  # the pooled view
    c = compare_modes(a, b)
    rr = [0.96, 1.03, 1.00]
    assert c.basis == "paired rounds" and c.paired == 3
    assert list(c.round_ratios) == pytest.approx(rr, abs=1e-9)
    assert min(c.round_ratios) <= c.ratio <= max(c.round_ratios)
    assert c.ratio_lo <= min(c.round_ratios) and c.ratio_hi >= max(c.round_ratios)
    assert not c.significant and "order them differently" in c.note


def test_unpaired_steps_never_narrow_the_interval():
    """Round 0 with ten times the steps, at the same or another ratio: the same estimate and
    interval as without it."""
    base_a, base_b = [6.0, 6.1, 5.9, 6.05], [4.0, 4.0, 4.0, 4.0]
    ref = compare_modes(timed("a", base_a), timed("b", base_b))
    for r0 in (6.0, 9.0):
        a, b = timed("a", [r0] + base_a[1:]), timed("b", base_b)
        big = (np.full(200, r0 * 1e-3),) + a.timing.rounds[1:]
        a = dataclasses.replace(a, timing=dataclasses.replace(
            a.timing, rounds=big, steps_s=np.concatenate(big)))
        c = compare_modes(a, b)
        assert (c.ratio, c.ratio_lo, c.ratio_hi) == pytest.approx((ref.ratio, ref.ratio_lo, ref.ratio_hi))


@pytest.mark.parametrize("seed", range(12))
def test_an_interval_never_excludes_every_paired_round(seed):
    """Noisy rounds of every kind (bursts, bimodal steps, few steps): the interval holds at least
    one paired round's ratio, and with fewer than 6 rounds all of them."""
    rng = np.random.default_rng(seed)
    k = int(rng.integers(MIN_PAIRED_ROUNDS + 1, 10))
    a_ms = list(5 * np.exp(rng.normal(0, 0.3, k)))
    b_ms = list(4 * np.exp(rng.normal(0, 0.3, k)))
    a = timed("a", a_ms, n=int(rng.integers(3, 30)), spread=float(rng.uniform(0, 0.5)))
    b = timed("b", b_ms, n=int(rng.integers(3, 30)), spread=float(rng.uniform(0, 0.5)))
    c = compare_modes(a, b)
    rr = np.asarray(c.round_ratios)
    assert len(rr) == k - 1 and np.isfinite(c.ratio_lo)
    assert np.any((rr >= c.ratio_lo) & (rr <= c.ratio_hi))
    if k - 1 < 6:
        assert c.ratio_lo <= rr.min() and c.ratio_hi >= rr.max()
    assert c.ratio_lo <= c.ratio <= c.ratio_hi


def test_the_measured_saving_is_never_surer_than_the_rounds_it_was_timed_in():
    """A busy machine: round by round, A − B was 2, 9 and 4 ms (round 0 is not paired), each
    round's steps tight. The step bootstrap alone gave an interval around the medians'
    difference far narrower than the ratio's beside it; the saving's interval now holds every
    paired round's difference, as the ratio's holds every round's ratio, and its point stays the
    medians' difference every page quotes."""
    a = timed("a", [8.0, 4.0, 11.0, 6.0], n=40)
    b = timed("b", [2.0, 2.0, 2.0, 2.0], n=40)
    c = compare_modes(a, b)
    assert c.delta_ms == pytest.approx(float(np.median(a.step_samples_ms) - np.median(b.step_samples_ms)))
    assert c.delta_lo <= 2.0 and c.delta_hi >= 9.0
    rr = np.asarray(c.round_ratios)
    assert c.ratio_lo <= rr.min() and c.ratio_hi >= rr.max()
    # modes timed apart (two captures): the steps' interval, as before
    apart = compare_modes(a, b, same_run=False)
    assert apart.delta_ms == c.delta_ms and apart.delta_hi - apart.delta_lo < c.delta_hi - c.delta_lo


def test_too_few_paired_rounds_compare_all_steps_as_modes_timed_apart():
    """Two paired rounds give no interval of their own, so the two modes are compared by all
    their steps, as modes timed apart (a change under 50 % is noise), and the note says why: a
    large difference is never shown as "no measurable difference" for want of rounds (a mode
    whose paired round was set aside, ``--rounds 2``)."""
    a, b = timed("a", [60.0, 61.0, 59.0]), timed("b", [4.0, 4.1, 3.9])     # 2 paired rounds
    c = compare_modes(a, b)
    assert c.paired == 0 and c.significant and c.ratio == pytest.approx(60 / 4, rel=0.03)
    assert c.ratio_lo < c.ratio < c.ratio_hi
    assert c.note.startswith("only 2 paired rounds (fewer than 3): compared by all their steps")
    a, b = timed("a", [6.0, 6.0, 6.0]), timed("b", [5.0, 5.0, 5.0])        # 1.2x: within the noise
    c = compare_modes(a, b)
    assert c.paired == 0 and not c.significant and c.ratio == pytest.approx(1.2, rel=0.03)
    assert c.note == ("only 2 paired rounds (fewer than 3): compared by all their steps, as modes "
                      "timed apart; so a change under 50 % is treated as run-to-run noise")
    a, b = timed("a", [6.0] * 4), timed("b", [4.0] * 4)               # 3: an interval
    c = compare_modes(a, b)
    assert c.paired == 3 and c.significant and c.ratio_lo < 1.5 < c.ratio_hi


# ---- which modes were interleaved ------------------------------------------------------------

def test_interleaved_means_the_same_rounds_of_one_capture():
    a, b = timed("a", [5.0] * 4, offset=0.0), timed("b", [4.0] * 4, offset=2.0)
    assert interleaved(a.timing, b.timing)
    # another capture (or a resumed one): its rounds come after all of these
    later = timed("c", [4.0] * 4, start=1_800_001_000.0)
    assert not interleaved(a.timing, later.timing) and pair_rounds(a.timing, later.timing) is None
    # a mode timed alone (run --into, --rounds 1) or a foreign trace: no rounds, no pairing
    alone = make_mode("d", {"op": 4.0}, rounds=1)
    assert not interleaved(a.timing, alone.timing) and not interleaved(a.timing, None)
    # rounds recorded without windows (older run folders): paired as before, by their count
    old = dataclasses.replace(b.timing, load=None)
    assert interleaved(dataclasses.replace(a.timing, load=None), old)


@pytest.mark.parametrize("ratio, significant", [(1.3, False), (0.7, False), (1.6, True)])
def test_modes_timed_apart_get_the_run_to_run_rule(ratio, significant):
    """Two modes of one run that were not interleaved (a mode added by run --into, a resumed
    capture): a change under 50 % is noise on every page and in diff --modes, though the steps'
    interval excludes 1."""
    a = timed("a", [4.0 * ratio] * 4)
    b = timed("b", [4.0] * 4, start=1_800_001_000.0)
    run = run_of(a, b)
    c = run.compare("a", "b")
    assert c.paired == 0 and c.orders and c.significant == significant
    if not significant:
        assert c.note == NOT_INTERLEAVED and "no measurable difference" in c.sentence()
    row = {r["mode"]: r for r in run.table("summary").records()}
    slower = "a" if ratio > 1 else "b"
    assert row[slower]["ratio_significant"] == significant
    assert row[slower]["vs_fastest"] == ("slower" if significant else "no measurable difference")
    doc = diff_data(run, run, [(a, b)])
    assert doc["pairs"][0]["significant"] == significant
    if not significant:
        assert NOT_INTERLEAVED in render_diff(doc)


# ---- set aside, and said so --------------------------------------------------------------------

def _timings_file(tmp_path: Path, rounds: list[dict], aside: list[dict] | None = None) -> Path:
    d = {"mode": "m", "steps_s": [s for r in rounds for s in r["steps_s"]],
         "rounds": rounds, "first_step_s": 0.1}
    if aside is not None:
        d["rounds_set_aside"] = aside
        d["disturbed_other_cpu"] = DISTURBED_OTHER_CPU
    folder = tmp_path / "m"
    folder.mkdir(exist_ok=True)
    runfolder.atomic_write_json(folder / runfolder.TIMINGS, d)
    return folder


def _round(i, other, ms=4.0, n=5, t0=1_800_000_000.0):
    return {"round": i, "steps_s": [ms * 1e-3] * n, "step_nums": list(range(10 * i, 10 * i + n)),
            "t_start_unix": t0 + 10 * i, "t_end_unix": t0 + 10 * i + 1, "other_cpu_busy": other,
            "steal": 0.0, "own_cpu_busy": 0.4}


def test_rounds_set_aside_are_read_as_data_and_said(tmp_path):
    from traceinsight.analysis.timings import read_timing
    used = [_round(0, 0.1), _round(1, 0.1), _round(3, 0.2)]
    aside = [dict(_round(2, 0.8), action="re-run"), dict(_round(2, 0.7), action="set aside")]
    timing, _, notes, _ = read_timing(_timings_file(tmp_path, used, aside))
    assert [r.round for r in timing.round_loads] == [0, 1, 3]
    assert [(r.round, r.action, r.other_cpu_busy, r.n_steps) for r in timing.set_aside] == [
        (2, RoundAction.RERUN, 0.8, 5), (2, RoundAction.SET_ASIDE, 0.7, 5)]
    assert timing.other_cpu_busy == pytest.approx(0.1)
    assert any(n.startswith("round 2 timed again: other processes took 80 % of the CPUs")
               for n in notes)
    assert any(n.startswith("round 2 set aside: other processes took 70 %") and "5 step(s)" in n
               for n in notes)
    # a run folder written before: no record of what was set aside, read as before
    timing, _, notes, _ = read_timing(_timings_file(tmp_path, used))
    assert timing.set_aside == () and not notes


def test_a_machine_busy_throughout_keeps_its_rounds_and_says_so(tmp_path):
    from traceinsight.analysis.timings import read_timing
    timing, _, notes, _ = read_timing(_timings_file(tmp_path, [_round(0, 0.8), _round(1, 0.9)], []))
    assert len(timing.rounds) == 2
    assert any("timed on a busy machine: other processes took 80 % to 90 % of the CPUs in "
               "round(s) 0, 1" in n for n in notes)


class _FakeChild:
    """A mode's live process answering canned rounds: the loads it reports, one per request."""

    def __init__(self, loads: list[float], clock: list[float]):
        self.loads = list(loads)
        self.asked: list[int] = []
        self.proc = self
        self.clock = clock   # shared by the modes' children: the rounds ran one after another

    def poll(self):
        return None

    def ask_round(self, i, out, timeout):
        self.asked.append(i)
        self.clock[0] += 2
        r = _round(i, self.loads.pop(0), t0=0)
        r.update(t_start_unix=self.clock[0], t_end_unix=self.clock[0] + 1)
        return r

    def close(self):
        pass

    def kill(self):
        pass


def _round_loop(tmp_path, round0: dict[str, float | None], loads: dict[str, list[float]]):
    from traceinsight.capture import orchestrate as orch
    from traceinsight.capture.planning import Options, RunWriter
    manifest = {"modes": {m: {"dir": m, "status": "ok", "notes": []} for m in loads}}
    states = []
    clock = [1_800_000_010.0]
    for m in loads:
        (tmp_path / m).mkdir()
        r0 = _round(0, round0[m])
        runfolder.atomic_write_json(tmp_path / m / runfolder.TIMINGS, {
            "mode": m, "rounds": [r0], "steps_s": r0["steps_s"], "step_nums": r0["step_nums"]})
        st = orch.ModeState(m, status="ok")
        st.live = _FakeChild(loads[m], clock)  # type: ignore[assignment]
        states.append(st)
    children = {s.name: s.live for s in states}
    orch.run_rounds(RunWriter(tmp_path, manifest), states, Options(rounds=4))
    out = {m: runfolder.read_json(tmp_path / m / runfolder.TIMINGS) for m in loads}
    return out, children


def test_the_round_loop_reruns_then_sets_aside_a_disturbed_round(tmp_path):
    """a: round 0 disturbed, round 1 disturbed then quiet when timed again, round 3 disturbed
    twice; b quiet throughout. a keeps rounds 1 (its second attempt) and 2; round 0 and round 3
    are set aside, every attempt not used is recorded with what was done with it."""
    t, children = _round_loop(tmp_path, {"a": 0.6, "b": 0.1},
                              {"a": [0.9, 0.1, 0.1, 0.8, 0.7], "b": [0.1, 0.1, 0.1]})
    assert children["a"].asked == [1, 1, 2, 3, 3] and children["b"].asked == [1, 2, 3]
    a = t["a"]
    assert [(r["round"], r["other_cpu_busy"]) for r in a["rounds"]] == [(1, 0.1), (2, 0.1)]
    assert [(r["round"], r["action"], r["other_cpu_busy"]) for r in a["rounds_set_aside"]] == [
        (1, "re-run", 0.9), (3, "re-run", 0.8), (0, "set aside", 0.6), (3, "set aside", 0.7)]
    assert a["steps_s"] == [s for r in a["rounds"] for s in r["steps_s"]]
    assert [r["round"] for r in t["b"]["rounds"]] == [0, 1, 2, 3] and "rounds_set_aside" not in t["b"]
    # the pairs a ratio can use: rounds both modes kept, after round 0
    from traceinsight.analysis.timings import read_timing
    ta, tb = (read_timing(tmp_path / m)[0] for m in ("a", "b"))
    assert pair_rounds(ta, tb).rounds == (1, 2)


def test_the_round_loop_stops_rerunning_on_a_machine_busy_throughout(tmp_path):
    """Every round disturbed: two re-runs come back disturbed, then no more are asked for, and
    nothing is set aside (no quieter round is left to stand on)."""
    t, children = _round_loop(tmp_path, {"a": 0.9, "b": 0.9},
                              {"a": [0.9] * 4, "b": [0.9] * 4})
    assert children["a"].asked == [1, 1, 2, 3] and children["b"].asked == [1, 1, 2, 3]
    for m in ("a", "b"):
        assert [r["round"] for r in t[m]["rounds"]] == [0, 1, 2, 3]
        assert [r["action"] for r in t[m]["rounds_set_aside"]] == ["re-run"]


def test_a_round_too_short_for_a_load_figure_stands_for_no_quiet_round(tmp_path):
    """Round 0 shorter than a clock tick (no figure) is kept, but does not make the disturbed
    rounds set aside: nothing measured quiet is left to stand on."""
    t, _ = _round_loop(tmp_path, {"a": None, "b": None}, {"a": [0.9] * 4, "b": [0.9] * 4})
    assert [r["round"] for r in t["a"]["rounds"]] == [0, 1, 2, 3]


# ---- diff: the machine differed ------------------------------------------------------------

def test_a_busier_machine_explains_a_slower_capture():
    """The same code, captured quiet (others 5 %) and beside CPU hogs (others 85 %, every step
    3x slower): not significant, the machine differed; the same change against the same load is
    a change."""
    quiet = run_of(timed("xla", [4.0] * 4, other=0.05), timed("function", [4.2] * 4, other=0.05),
                   name="quiet")
    busy = run_of(timed("xla", [12.0] * 4, other=0.85, start=1_800_001_000.0),
                  timed("function", [12.6] * 4, other=0.85, start=1_800_001_000.0), name="busy")
    d = diff_runs(quiet, busy)
    assert not d.significant_pairs and d.load_differs
    assert d.a_load == pytest.approx(0.05) and d.b_load == pytest.approx(0.85)
    for p in d.pairs:
        assert p.comparison.ratio > 2.5 and p.between_runs.verdict == "machine differed"
        assert p.between_runs.load_explains and p.within_noise
        # nor does any category the busier side spends more in
        assert not any(c.significant for c in p.categories if c.delta_ms > 0)
    doc = diff_data(quiet, busy)
    text = render_diff(doc)
    assert "the machine differed" in text and "85 %" in text and "5 %" in text
    assert doc["b"]["other_cpu_busy"] == pytest.approx(0.85)
    # B busier but faster: the load does not explain that; as loaded as A: a change
    for b_other, b_ms in ((0.85, 1.0), (0.05, 12.0)):
        b = run_of(timed("xla", [b_ms] * 4, other=b_other, start=1_800_001_000.0), name="b")
        v = diff_runs(quiet, b).pairs[0].between_runs
        assert v.significant and not v.load_explains and v.verdict in ("faster", "slower")


# ---- a real capture beside CPU hogs --------------------------------------------------------

_TINY = '''"""A few small ops per step."""
import tensorflow as tf


def step(x):
    return tf.reduce_sum(tf.matmul(x, x))


def inputs():
    return (tf.ones([32, 32]),)
'''


@pytest.mark.capture
def test_a_capture_beside_cpu_hogs_says_so_and_records_each_round(tmp_path, capsys):
    """One busy-looping process per usable CPU (at most 8), killed in a finally: the capture's
    first line says the machine is busy, with the figure; every attempt records its load; a
    disturbed round was timed again, set aside or (every round disturbed) kept, and every page
    says so through the mode's notes."""
    import traceinsight
    from traceinsight.cli import main

    workload = tmp_path / "tiny.py"
    workload.write_text(_TINY)
    n = min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1, 8)
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        status = main(["capture", str(workload), "--modes", "eager,function", "--rounds", "3",
                       "--out", str(tmp_path), "--name", "hog", "--min-steps", "5",
                       "--min-time", "0.3", "--max-time", "3", "--warmup", "2",
                       "--host-trace-ms", "2000", "--host-max-steps", "5",
                       "--no-python-tracer", "--round-time", "0.3"])
    finally:
        for h in hogs:
            h.kill()
        for h in hogs:
            h.wait(timeout=30)
    out = capsys.readouterr().out
    assert status == 0, out
    first = out.strip().splitlines()[0]
    assert first.startswith("the machine is busy: other processes took ") and "% of the" in first
    run = traceinsight.load(tmp_path / "hog", use_cache=False)
    busy_seen = False
    for name in ("eager", "function"):
        t = run.modes[name].timing
        attempts = [*t.round_loads, *t.set_aside]
        assert sorted({r.round for r in attempts}) == [0, 1, 2]
        # every round lasts 0.3 s or more: long enough for the kernel's 10 ms ticks to move
        assert all(r.other_cpu_busy is not None and r.t_start is not None for r in attempts)
        assert all(r.disturbed for r in t.set_aside)
        busy_seen |= any(r.disturbed for r in attempts)
        kept_busy = [r for r in t.round_loads if r.disturbed]
        if any(r.action is RoundAction.SET_ASIDE for r in t.set_aside):
            assert not kept_busy            # set aside only while quieter rounds are left
        notes = " ".join(run.modes[name].notes)
        for r in t.set_aside:
            assert f"round {r.round} " in notes
        if kept_busy:
            assert "timed on a busy machine" in notes
    # the hogs held every CPU: some round must have seen others at half the CPUs or more
    assert busy_seen
