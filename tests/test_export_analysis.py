"""The Chrome-trace export draws a pass's per-event data (``analysis.timeline.pass_analysis``)
made again from the pass's files as the mode's own analysis made it: the same steps table as the
mode's, the same file whether the mode's tables came from the cache or from a fresh analysis,
and no trace file read but the ones the drawn pass needs."""

from __future__ import annotations

import collections
import shutil
from pathlib import Path

import numpy as np
import pytest

import traceinsight
from traceinsight import cli
from traceinsight.analysis import mode as mode_mod
from traceinsight.analysis import parallel
from traceinsight.analysis.timeline import pass_analysis
from traceinsight.errors import TraceinsightError
from traceinsight.report import chrome_trace
from traceinsight.report.options import TraceOptions

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


def test_the_host_pass_analysed_again_is_the_modes_own(tmp_path, monkeypatch):
    """The mode's steps table (analysed in a worker process here) is the host pass's steps
    table made again, to the bit; the python pass is the python-tracer pass's files."""
    path = run_copy(tmp_path, "conv1d")
    monkeypatch.setenv(parallel.JOBS_ENV, "2")
    run = traceinsight.load(path, use_cache=False)
    for name in ("eager", "xla"):
        m = run.modes[name]
        tr = pass_analysis(m, "host")
        assert tr.table.files == pass_files(path, name, "host")
        steps = m.table("steps")
        assert list(tr.steps.columns) == list(steps.columns)
        for c in steps.columns:
            assert np.array_equal(np.asarray(tr.steps[c]), np.asarray(steps[c]), equal_nan=True), c
    py = pass_analysis(run.modes["eager"], "python")
    assert py.table.files == pass_files(path, "eager", "python")
    assert py.framework == pass_analysis(run.modes["eager"], "host").framework


@pytest.mark.parametrize("pass_name", ["host", "python"])
def test_export_from_the_cache_is_the_export_of_a_fresh_analysis(tmp_path, pass_name):
    path = run_copy(tmp_path, "retracing")
    outs = []
    for i in range(2):          # the first load analyses and caches, the second reads the cache
        out = tmp_path / f"out{i}"
        assert cli.main(["export", str(path), "--mode", "eager", "--trace", pass_name,
                         "--no-gzip", "--tables", "none", "-o", str(out)]) == 0
        outs.append((out / "trace.json").read_bytes())
    assert (path / ".traceinsight").is_dir()
    assert outs[0] == outs[1]


@pytest.mark.parametrize("pass_name", ["host", "python"])
def test_export_of_a_cached_run_reads_only_the_pass_it_draws(tmp_path, parsed, pass_name):
    path = run_copy(tmp_path, "retracing")
    traceinsight.load(path)                                 # every mode analysed and cached
    parsed.clear()
    assert cli.main(["export", str(path), "--mode", "eager", "--trace", pass_name,
                     "-o", str(tmp_path / "out")]) == 0
    # the tables from the cache; the drawn pass read once (a python-tracer pass is analysed with
    # the framework its host pass shows, as the mode's analysis did)
    want = [tuple(pass_files(path, "eager", "host"))]
    if pass_name == "python":
        want.append(tuple(pass_files(path, "eager", "python")))
    assert collections.Counter(parsed) == collections.Counter(want)


def test_a_request_the_run_cannot_give_is_one_line(tmp_path):
    path = run_copy(tmp_path, "retracing")
    run = traceinsight.load(path, use_cache=False)
    with pytest.raises(TraceinsightError, match="has no mode"):
        chrome_trace.render(run, TraceOptions("nope"))
    only_host = run.modes["eager"].replace(
        trace_paths=tuple(p for p in run.modes["eager"].trace_paths if "/python/" not in p))
    with pytest.raises(TraceinsightError, match="has no python pass trace"):
        pass_analysis(only_host, "python")
    failed = run.modes["eager"].replace(status="failed", error="boom")
    with pytest.raises(TraceinsightError, match="failed: boom"):
        pass_analysis(failed, "host")
