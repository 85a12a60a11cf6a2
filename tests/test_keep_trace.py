"""``traceinsight.load(path, keep_trace={mode: pass})``: a mode keeps the per-event data of one
pass (``ModeResult.trace``) from the very analysis that made its tables, so the export draws
the mode's own figures and no trace file is parsed twice. The kept mode is analysed in this
process (never read from the cache, never sent back by a worker), every other mode as before,
and every correction the loader makes applies to it too."""

from __future__ import annotations

import collections
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_parallel import assert_same_mode, jobs_sent

import traceinsight
from traceinsight import cli
from traceinsight.analysis import mode as mode_mod
from traceinsight.analysis import parallel

DATA = Path(__file__).parent / "data" / "runs"


def run_copy(tmp_path: Path, name: str) -> Path:
    return shutil.copytree(DATA / name, tmp_path / name, ignore=shutil.ignore_patterns(".traceinsight"))


@pytest.fixture
def parsed(monkeypatch):
    """Every list of trace files the analysis parses, in order."""
    calls: list[tuple[str, ...]] = []
    real = mode_mod.load_files

    def load_files(paths):
        calls.append(tuple(map(str, paths)))
        return real(paths)
    monkeypatch.setattr(mode_mod, "load_files", load_files)
    return calls


def pass_files(run: Path, mode: str, pass_name: str) -> list[str]:
    return [str(p) for p in sorted((run / mode / pass_name).rglob("*.xplane.pb"))]


@pytest.mark.parametrize("start", ["fork", "spawn"])
def test_kept_modes_are_analysed_here_and_equal_the_others(tmp_path, monkeypatch, start):
    path = run_copy(tmp_path, "conv1d")
    monkeypatch.setenv(parallel.JOBS_ENV, "1")
    plain = traceinsight.load(path, use_cache=False)
    monkeypatch.setenv(parallel.JOBS_ENV, "2")
    monkeypatch.setenv(parallel.START_ENV, start)
    sent = jobs_sent(monkeypatch)
    kept = traceinsight.load(path, use_cache=False, keep_trace={"eager": "python", "xla": "host"})
    assert sent and not {"eager", "xla"} & {job[0] for job in sent}       # the others went to the worker
    assert list(kept.modes) == list(plain.modes)
    for name, m in kept.modes.items():
        assert_same_mode(m, plain.modes[name])
        assert m.kind == plain.modes[name].kind
        assert (m.trace is not None) == (name in ("eager", "xla"))
    # the python-tracer pass kept is the one the hotspots come from: the same table, to the bit
    eager = kept.modes["eager"]
    assert eager.trace.table.files == pass_files(path, "eager", "python")
    pd.testing.assert_frame_equal(eager.hotspots, plain.modes["eager"].hotspots, check_exact=True)
    # the host pass kept is the one the steps come from: the mode's steps table is its table
    xla = kept.modes["xla"]
    assert xla.trace.table.files == pass_files(path, "xla", "host")
    steps = xla.table("steps")
    for c in steps.columns:
        assert np.array_equal(np.asarray(xla.trace.steps[c]), np.asarray(steps[c]), equal_nan=True), c


def test_kept_mode_skips_the_cache_and_is_never_cached(tmp_path, parsed):
    path = run_copy(tmp_path, "retracing")
    traceinsight.load(path)                                 # every mode analysed and cached
    parsed.clear()
    run = traceinsight.load(path, keep_trace={"function": "host"})
    # only the kept mode is analysed again, both its passes once each; the other from the cache
    assert parsed == [tuple(pass_files(path, "function", "host")),
                      tuple(pass_files(path, "function", "python"))]
    assert run.modes["function"].trace is not None and run.modes["eager"].trace is None
    parsed.clear()
    again = traceinsight.load(path)
    assert parsed == [] and all(m.trace is None for m in again.modes.values())
    assert_same_mode(again.modes["function"], run.modes["function"])


def test_the_loaders_corrections_apply_to_the_kept_mode(tmp_path):
    """A file the loader skips is noted on the mode, kept or not; the mode's kind is run.json's."""
    path = run_copy(tmp_path, "retracing")
    session = next((path / "eager" / "host" / "plugins" / "profile").iterdir())
    (session / "odd.xplane.pb").mkdir()                     # not a regular file: skipped, noted
    plain = traceinsight.load(path, use_cache=False)
    kept = traceinsight.load(path, use_cache=False, keep_trace={"eager": "host"})
    notes = kept.modes["eager"].notes
    assert notes == plain.modes["eager"].notes and any("not a regular file" in n for n in notes)
    assert kept.modes["eager"].kind == plain.modes["eager"].kind
    assert kept.modes["eager"].trace is not None


def test_a_request_the_run_cannot_give_keeps_nothing(tmp_path, capsys):
    path = run_copy(tmp_path, "retracing")
    run = traceinsight.load(path, use_cache=False, keep_trace={"nope": "host"})
    assert all(m.trace is None for m in run.modes.values())
    from traceinsight.errors import TraceinsightError
    from traceinsight.report import chrome_trace
    from traceinsight.report.options import TraceOptions
    with pytest.raises(TraceinsightError, match="keep_trace"):
        chrome_trace.render(run, TraceOptions("eager"))
    with pytest.raises(TraceinsightError, match="has no mode"):
        chrome_trace.render(run, TraceOptions("nope"))


@pytest.mark.parametrize("pass_name", ["host", "python"])
def test_export_parses_each_trace_file_once(tmp_path, parsed, pass_name):
    path = run_copy(tmp_path, "retracing")
    assert cli.main(["export", str(path), "--mode", "eager", "--trace", pass_name,
                     "-o", str(tmp_path / "out")]) == 0
    counts = collections.Counter(parsed)
    assert set(counts.values()) == {1}
    # each pass of each mode, once: the export drew the kept analysis, it read no file itself
    assert set(counts) == {tuple(pass_files(path, m, p)) for m in ("eager", "function")
                           for p in ("host", "python")}
