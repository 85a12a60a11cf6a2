"""The Python API and `traceinsight analyze` on a committed real run."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
from conftest import RUNS

from traceinsight.cli import main
from traceinsight.model import CATEGORIES


def test_api_frames(real_runs):
    run = real_runs["conv1d"]
    b = run.breakdown()
    assert list(b.columns) == list(CATEGORIES)
    assert set(b.index) == {m.name for m in run.ok_modes()}
    ops = run.ops()
    assert {"mode", "op", "type", "thread", "calls_per_step", "self_ms_per_step", "share"} <= set(ops.columns)
    assert set(ops["mode"]) == set(b.index)
    assert {"mode", "function", "traced_calls"} <= set(run.retraces().columns)
    hs = run.hotspots()
    assert {"mode", "function", "file", "group", "self_ms", "inclusive_ms"} <= set(hs.columns)
    s = run.summary().set_index("mode")
    fastest = s["median_ms"].idxmin()
    assert s.loc[fastest, "ratio"] == 1.0
    others = s.drop(index=fastest)   # the fastest mode's own row: 1, no interval against itself
    assert np.isnan(s.loc[fastest, "ratio_lo"])
    assert (others["ratio_lo"] < others["ratio"]).all() and (others["ratio"] < others["ratio_hi"]).all()
    # the per-mode medians come from the untraced timing phase
    eager = run.modes["eager"]
    assert s.loc["eager", "median_ms"] == np.median(eager.timing.steps_s) * 1e3


def test_analyze_command_prints_every_section(capsys):
    assert main(["analyze", str(RUNS / "conv1d"), "--top", "3"]) == 0
    out = capsys.readouterr().out
    for text in ("ms per step", "where a steady step's time goes", "top ops", "Python hotspots",
                 "tf.function calls and retraces", "step markers 'train'"):
        assert text in out


def test_analyze_unknown_mode_is_one_line(capsys):
    assert main(["analyze", str(RUNS / "conv1d"), "--mode", "nope"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_cli_starts_without_tensorflow():
    code = ("import sys; from traceinsight.cli import main; "
            "import traceinsight.analysis.load, traceinsight.report.terminal; "
            "print('tensorflow' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_cached_analysis_equals_fresh_analysis(tmp_path, real_runs):
    import shutil

    import pandas as pd

    import traceinsight
    run_dir = tmp_path / "conv1d"
    shutil.copytree(RUNS / "conv1d", run_dir, ignore=shutil.ignore_patterns(".traceinsight"))
    first = traceinsight.load(run_dir)          # analyses and writes the cache
    assert any((run_dir / ".traceinsight").rglob("*.json"))
    again = traceinsight.load(run_dir)          # reads the cache
    fresh = real_runs["conv1d"]
    for name, mode in fresh.modes.items():
        for frame in ("steps", "breakdown", "ops", "retraces", "hotspots", "other"):
            pd.testing.assert_frame_equal(getattr(again.modes[name], frame).reset_index(drop=True),
                                          getattr(mode, frame).reset_index(drop=True),
                                          check_dtype=False, rtol=1e-12)
        assert again.modes[name].notes == mode.notes
    pd.testing.assert_frame_equal(again.summary(), first.summary())
    # a changed trace invalidates its mode's cache
    victim = sorted((run_dir / "eager" / "host").rglob("*.xplane.pb"))[0]
    victim.write_bytes(victim.read_bytes()[:100])
    assert traceinsight.load(run_dir).modes["eager"].status == "failed"
