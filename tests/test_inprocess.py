"""Profiling from inside a script: ``traceinsight.keras.Profile`` (a fit callback) and
``with traceinsight.profile(...)`` (a custom loop). Real TensorFlow, few steps: each script runs
once profiled and once not, and must print the same; the run folder must hold the steps the
script made, timed by the recorder ``traceinsight run`` uses, and open in report / analyze."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from test_run import _check_calibrated, _timings

import traceinsight
from traceinsight import runfolder
from traceinsight.cli import main
from traceinsight.model import CATEGORIES

SCRIPTS = Path(__file__).parent / "scripts"


def test_importing_the_entry_points_imports_no_tensorflow():
    code = ("import sys, traceinsight, traceinsight.keras\n"
            "assert callable(traceinsight.profile)\n"
            "print('tensorflow' in sys.modules, 'keras' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def _script(name: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPTS / name), *args], capture_output=True,
                          text=True, timeout=300)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs")
    done = {}
    for script in ("keras_callback.py", "profile_loop.py"):
        done[script] = (_script(script), _script(script, str(out)))
    return out, done


def _check(run: Path, mode_name: str, kind: str, n_steps: int, unended: int = 0) -> None:
    """``n_steps`` steps of ``kind`` begun; ``unended``: of them, a loop's last call's iteration,
    which has no next call to end it (no step)."""
    manifest = runfolder.read_manifest(run)
    entry = manifest["modes"][mode_name]
    assert entry["status"] == "ok", entry["error"]
    assert entry["profile_options"]["host"]["recorded"]["host_tracer_level"] == 3
    t = runfolder.read_json(run / runfolder.mode_dir(mode_name) / runfolder.TIMINGS)
    assert t["details"]["step_kinds"] == {kind: n_steps}
    assert t["all_steps"]["step_nums"] == list(range(n_steps - unended))
    host = t["traced"]["host"]
    # skip 4, trace 6; a loop's window waits until it has settled from the session's start (by
    # step 5 at the latest, see agent.SETTLE_MAX)
    assert host["step_nums"][0] in ((4, 5) if unended else (4,)) and 1 <= len(host["step_nums"]) <= 6
    mode = traceinsight.load(run, use_cache=False).modes[mode_name]
    steps = mode.steps
    np.testing.assert_allclose(steps[list(CATEGORIES)].sum(axis=1).to_numpy(),
                               steps["wall_ms"].to_numpy(), rtol=0.01)
    # the trace's step walls against the recorder's perf_counter times of the same steps
    assert steps["step_num"].tolist() == host["step_nums"]
    np.testing.assert_allclose(steps["wall_ms"].to_numpy(), np.asarray(host["steps_s"]) * 1e3,
                               atol=0.5)


@pytest.mark.capture
@pytest.mark.parametrize("script", ["keras_callback.py", "profile_loop.py"])
def test_the_script_prints_the_same(runs, script):
    plain, profiled = runs[1][script]
    assert plain.returncode == profiled.returncode == 0, profiled.stderr[-2000:]
    assert profiled.stdout == plain.stdout


@pytest.mark.capture
def test_keras_callback_writes_a_run(runs, tmp_path, capfd):
    out, done = runs
    plain, profiled = done["keras_callback.py"]
    assert profiled.returncode == 0, profiled.stderr[-2000:]
    # what the script itself reads back is the same: History, list of ndarrays, same loss
    assert plain.stdout.splitlines()[-2:] == profiled.stdout.splitlines()[-2:]
    assert "traced steps of mode keras_callback" in profiled.stderr
    _check(out / "cb", "keras_callback", "fit batch", 60)       # 30 batches x 2 epochs
    # the profiler's cost measured in this process, as run does (test_run checks the correction)
    _check_calibrated(out / "cb", "keras_callback", corrected=False)
    assert main(["report", str(out / "cb"), "-o", str(tmp_path / "r.html")]) == 0
    assert "keras_callback" in (tmp_path / "r.html").read_text()


@pytest.mark.capture
def test_profile_block_writes_a_run(runs):
    out, done = runs
    plain, profiled = done["profile_loop.py"]
    assert profiled.returncode == 0, profiled.stderr[-2000:]
    assert plain.stdout.splitlines()[-1:] == profiled.stdout.splitlines()[-1:]
    # each step is the loop's iteration, from one call to the next: the 30th call's has no end
    _check(out / "loop", "profile_loop", "tf.function", 30, unended=1)
    _check_calibrated(out / "loop", "profile_loop", corrected=False)


def _own_against_trace(mode, own_s: list, offset: int = 0) -> None:
    """The analysed steps against the loop's own perf_counter time of the same iterations (a clock
    the loop reads itself, inside the mark): every traced step is there, and the durations agree
    but at the window's edges (the session's start and stop land beside the first and last
    traced step in the loop's own time, never in the step's)."""
    steps = mode.steps
    nums = steps["step_num"].tolist()
    assert len(nums) >= 3
    wall = steps["wall_ms"].to_numpy()
    own = np.array([own_s[n + offset] for n in nums]) * 1e3
    np.testing.assert_allclose(wall[1:-1], own[1:-1], rtol=0.1, atol=0.5)


@pytest.mark.capture
@pytest.mark.parametrize("form", ["with", "bare"])
def test_eager_loop_marks_its_steps_by_hand(tmp_path, form):
    times = tmp_path / "own.json"
    done = _script("eager_marked_loop.py", str(tmp_path), form, str(times))
    assert done.returncode == 0, done.stderr[-2000:]
    run = tmp_path / f"eager_{form}"
    entry = runfolder.read_manifest(run)["modes"]["eager_marked_loop"]
    assert entry["status"] == "ok", entry["error"]
    t = runfolder.read_json(run / runfolder.mode_dir("eager_marked_loop") / runfolder.TIMINGS)
    assert t["details"]["step_kinds"] == {"marked step": 15}     # 15 iterations, 15 marks
    assert t["traced"]["host"]["step_nums"] == [3, 4, 5, 6, 7, 8]   # skip 3, trace 6
    mode = traceinsight.load(run, use_cache=False).modes["eager_marked_loop"]
    assert mode.steps["step_num"].tolist() == [3, 4, 5, 6, 7, 8]
    np.testing.assert_allclose(mode.steps[list(CATEGORIES)].sum(axis=1).to_numpy(),
                               mode.steps["wall_ms"].to_numpy(), rtol=0.01)
    import json
    own = json.loads(times.read_text())
    assert len(own) == 15
    _own_against_trace(mode, own)
    _check_calibrated(run, "eager_marked_loop", corrected=False)


@pytest.mark.capture
def test_calibration_is_taken_again_after_the_window(tmp_path):
    """Once the window's trace is saved, the next step boundary takes the untraced calibration
    blocks a second time (as ``capture`` takes them on both sides of its traced pass): twice as
    many untraced blocks as traced ones in timings.json."""
    from traceinsight.capture import calibrate
    r = _script("profile_after_window.py", str(tmp_path))
    assert r.returncode == 0, r.stderr[-2000:]
    cal = _timings(tmp_path / "after", "profile_after_window")["calibration"]
    assert len(cal["traced_s"]) == calibrate.BLOCKS
    assert len(cal["untraced_s"]) == 2 * calibrate.BLOCKS
