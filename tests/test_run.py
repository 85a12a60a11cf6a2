"""``traceinsight run -- python script.py``: real TensorFlow scripts (no model.py) profiled from
outside by the startup hook. Few steps, short traces; one run shared per script."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

import traceinsight
from traceinsight import runfolder
from traceinsight.cli import main
from traceinsight.model import CATEGORIES, CorrectionKind

pytestmark = pytest.mark.capture

SCRIPTS = Path(__file__).parent / "scripts"
PY = sys.executable


def _run(capfd, *args):
    rc = main(["run", *args])
    out, err = capfd.readouterr()
    return rc, out, err


@pytest.fixture(scope="module")
def runs_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("runs")


@pytest.fixture(scope="module")
def fit_run(runs_dir):
    # exit status 3 from the script itself: it must pass through; 3 epochs: untraced steps follow
    # the window even when saving the trace outlasts many short batches
    rc = main(["run", "--out", str(runs_dir), "--name", "fit", "--skip-steps", "5", "--steps", "8",
               "--", PY, str(SCRIPTS / "keras_fit.py"), "3", "3"])
    return runs_dir / "fit", rc


@pytest.fixture(scope="module")
def loop_run(runs_dir):
    """A custom loop, then a second mode of the same script that crashes at step 12 (--into)."""
    run = runs_dir / "loop"
    rc1 = main(["run", "--out", str(runs_dir), "--name", "loop", "--mode", "plain", "--steps", "6",
                "--", PY, str(SCRIPTS / "custom_loop.py"), "30"])
    rc2 = main(["run", "--into", str(run), "--mode", "crash", "--steps", "10",
                "--", PY, str(SCRIPTS / "custom_loop.py"), "30", "12"])
    return run, rc1, rc2


def _window(t: dict, skip: int, n: int) -> list[int]:
    """The traced window's step numbers: ``n`` consecutive steps from ``skip_steps`` on, or, where
    the steps are a loop's iterations and ``skip_steps`` is small, from the first that is settled
    from the session's start and the calibration (``agent.SETTLE_MAX``: step 5 at the latest on
    a quiet machine; a busy one can add a pause or two)."""
    from traceinsight.capture.hook.agent import SETTLE_MAX
    nums = t["traced"]["host"]["step_nums"]
    assert nums == list(range(nums[0], nums[0] + n)), nums
    assert skip <= nums[0] <= max(skip, 1 + SETTLE_MAX) + 2, nums
    return nums


def _timings(run: Path, mode: str) -> dict:
    return runfolder.read_json(run / runfolder.mode_dir(mode) / runfolder.TIMINGS)


def _check_steps_sum(mode, timings: dict) -> None:
    """Every traced step's categories sum to its wall time, and the trace's step walls agree with
    the script's own perf_counter times of the same steps (two clocks, one interval)."""
    steps = mode.steps
    assert len(steps) > 0
    cats = steps[list(CATEGORIES)].sum(axis=1).to_numpy()
    np.testing.assert_allclose(cats, steps["wall_ms"].to_numpy(), rtol=0.01)
    host = timings["traced"]["host"]
    assert steps["step_num"].tolist() == host["step_nums"]
    np.testing.assert_allclose(steps["wall_ms"].to_numpy(), np.asarray(host["steps_s"]) * 1e3,
                               atol=0.5)


def _check_calibrated(run: Path, mode_name: str, corrected: bool = True) -> None:
    """The profiler's cost was calibrated in the script's process as ``capture`` does it: the
    untraced (before the window, and after it) and traced blocks in timings.json; the trace holds exactly one calibration marker
    per traced block, on the thread that holds the step markers (the one whose events the
    analysis counts) and before the window's first step; the mode's split is the calibrated
    correction (the measured cost per event taken out where it lands), adding up to the
    untraced median (``corrected``: the mode has untraced steps after its window)."""
    from traceinsight.analysis.attribute import attribute
    from traceinsight.analysis.events import load_files
    from traceinsight.capture import calibrate
    from traceinsight.model import CorrectionKind
    t = _timings(run, mode_name)
    cal = t["calibration"]
    assert cal["calls"] == calibrate.CALLS
    assert len(cal["traced_s"]) == calibrate.BLOCKS
    # the untraced blocks before the window, and again after it where the script made a step
    # once the window's trace was saved (as capture takes them on both sides of its pass)
    assert len(cal["untraced_s"]) in (calibrate.BLOCKS, 2 * calibrate.BLOCKS)
    # the script's time it took holds every block (and a warm-up block, and the marker calls)
    assert t["details"]["calibration_s"] > sum(cal["untraced_s"]) + sum(cal["traced_s"])
    mode = traceinsight.load(run, use_cache=False).modes[mode_name]
    a = attribute(load_files(list(mode.trace_paths)))
    tab = a.table
    markers = np.flatnonzero(tab.name == tab.name_id(runfolder.CALIBRATION_MARKER))
    assert len(markers) == calibrate.BLOCKS
    assert (tab.line[markers] == a.main_line).all()
    assert tab.end[markers].max() <= a.step_start.min()
    assert mode.tracer_events.calibration_events >= 2   # the C fast path and EagerExecute, at least
    if not corrected:
        return
    c = mode.correction
    assert c.kind is CorrectionKind.CALIBRATED and c.per_event_us > 0
    assert sum(mode.category_means().values()) == pytest.approx(mode.median_ms)


def test_the_calibration_marker_is_the_analysis_one():
    # calibrate.py keeps its own copy (it is loaded by path into interpreters without traceinsight)
    from traceinsight.capture import calibrate
    assert calibrate.MARKER == runfolder.CALIBRATION_MARKER


def test_keras_fit_script(fit_run):
    run, rc = fit_run
    assert rc == 3
    manifest = runfolder.read_manifest(run)
    entry = manifest["modes"]["keras_fit"]
    assert entry["status"] == "ok", entry["error"]
    assert entry["exit_status"] == 3
    assert entry["profile_options"]["host"]["ok"] is True
    assert entry["profile_options"]["host"]["recorded"]["host_tracer_level"] == 3
    assert any("exited with status 3" in n for n in entry["notes"])
    t = _timings(run, "keras_fit")
    # 640 rows / batch 16 = 40 batches a epoch, each one step
    assert t["details"]["step_kinds"] == {"fit batch": 120}
    assert t["all_steps"]["step_nums"] == list(range(120))
    host = t["traced"]["host"]
    # the window: the 8 steps asked for, from the first step after --skip-steps that began while
    # the profiler recorded (it starts on the agent's thread a step ahead)
    assert host["step_nums"][0] >= 5 and len(host["step_nums"]) == 8
    assert host["step_nums"] == list(range(host["step_nums"][0], host["step_nums"][0] + 8))
    assert t["warmup_steps"] == 4 and t["first_step_s"] > 0
    # untraced steady steps: those that began after the trace was saved
    assert t["step_nums"] and min(t["step_nums"]) >= host["settled_from_step"] > max(host["step_nums"])
    assert t["step_nums"] == list(range(host["settled_from_step"], 120))
    mode = traceinsight.load(run, use_cache=False).modes["keras_fit"]
    assert mode.ok and not mode.other.size
    _check_steps_sum(mode, t)
    _check_calibrated(run, "keras_fit")
    assert manifest["workload"]["kind"] == "script"
    assert manifest["environment"]["tensorflow"] == t["details"]["versions"]["tensorflow"]


def test_output_passes_through(runs_dir, capfd):
    rc, out, err = _run(capfd, "--out", str(runs_dir), "--name", "fit2", "--steps", "3",
                        "--", PY, str(SCRIPTS / "keras_fit.py"))
    assert rc == 0
    assert "trained: loss" in out                       # the script's stdout, untouched
    assert "traced steps of mode keras_fit" in err
    assert "traceinsight" not in out
    assert "Starting to trace" not in out               # the profiler client's line
    assert "Profiler session" not in err and "profiler_server.cc" not in err
    # TensorFlow's own lines that are not about the profiler stay, in either log format
    assert "cpu_feature_guard.cc:227] keras_fit: a TF log line" in err
    assert "port.cc:153] keras_fit: an older one" in err


def test_custom_loop_and_crash(loop_run):
    run, rc1, rc2 = loop_run
    assert (rc1, rc2) == (0, 1)   # the crash's exit status passes through
    manifest = runfolder.read_manifest(run)
    assert list(manifest["modes"]) == ["plain", "crash"]
    plain, crash = manifest["modes"]["plain"], manifest["modes"]["crash"]
    assert plain["status"] == "ok", plain["error"]
    assert crash["status"] == "ok", crash["error"]   # what was traced before the crash is kept
    tp, tc = _timings(run, "plain"), _timings(run, "crash")
    assert tp["details"]["step_kinds"] == {"tf.function": 30}
    # each step is the loop's iteration, from one train_step call to the next: the 30th call's
    # has no next call, so 29 steps; the crash's 12 calls (0..11, then the exception) make 11
    assert tp["step_span"] == "iteration" and tp["step_calls"] == ["train_step"]
    assert tp["all_steps"]["step_nums"] == list(range(29))
    assert tp["details"]["unended_iterations"] == 1
    assert tc["all_steps"]["step_nums"] == list(range(11))
    traced = tc["traced"]["host"]["step_nums"]
    assert traced[-1] == 10
    _window(tc, 5, len(traced))
    assert any("exited with status 1" in n for n in crash["notes"])
    assert any(f"{len(traced)} of the 10 steps" in n for n in crash["notes"])
    loaded = traceinsight.load(run, use_cache=False)
    for name, t in (("plain", tp), ("crash", tc)):
        assert loaded.modes[name].ok
        _check_steps_sum(loaded.modes[name], t)
    assert loaded.modes["crash"].steps["step_num"].tolist() == traced
    assert "each step is one iteration of the loop: from one train_step call to the next" in \
        loaded.modes["plain"].step_rule
    # a loop of 0.5 ms steps may end while its trace is saved: no untraced step to correct to
    _check_calibrated(run, "plain", corrected=False)


def test_view_report_diff_read_it(loop_run, tmp_path, capfd):
    run = loop_run[0]
    assert main(["diff", str(run), "--modes", "plain,crash"]) == 0
    assert main(["report", str(run), "-o", str(tmp_path / "r.json")]) == 0
    doc = json.loads((tmp_path / "r.json").read_text())
    assert {m["name"] for m in doc["modes"]} == {"plain", "crash"}
    assert main(["analyze", str(run)]) == 0
    capfd.readouterr()


def test_step_function_filter(runs_dir):
    # only calls of a function named "nothing_like_this" are steps: the loop makes none
    rc = main(["run", "--out", str(runs_dir), "--name", "filtered", "--step-function",
               "nothing_like_this", "--", PY, str(SCRIPTS / "custom_loop.py"), "8"])
    assert rc == 0
    entry = runfolder.read_manifest(runs_dir / "filtered")["modes"]["custom_loop"]
    assert entry["status"] == "failed"
    assert entry["error"].startswith("no steps: the script called neither")


def test_a_script_that_ends_with_its_window_says_it_timed_no_untraced_step(runs_dir, capfd):
    """8 steps: 2 skipped, the last 6 traced, none after: the mode is ok, its figures are the
    traced steps', and the run says so where the user sees it and in the mode's notes."""
    rc, _, err = _run(capfd, "--out", str(runs_dir), "--name", "short", "--skip-steps", "2",
                      "--steps", "6", "--", PY, str(SCRIPTS / "custom_loop.py"), "8")
    assert rc == 0
    entry = runfolder.read_manifest(runs_dir / "short")["modes"]["custom_loop"]
    assert entry["status"] == "ok" and entry["details"]["untraced_steps"] == 0
    note = next(n for n in entry["notes"] if n.startswith("no untraced step was timed after the trace"))
    assert "the script ended with the traced window" in note
    assert "no untraced step was timed after the trace" in err
    m = traceinsight.load(runs_dir / "short", use_cache=False).modes["custom_loop"]
    assert m.correction is not None and m.correction.kind is CorrectionKind.TRACED
    assert "a script that timed no untraced step" in m.correction.method


def test_no_tensorflow_and_not_python(runs_dir, capfd):
    rc, out, _ = _run(capfd, "--out", str(runs_dir), "--name", "notf", "--", PY, "-c", "print('hi')")
    assert rc == 0 and out == "hi\n"
    entry = runfolder.read_manifest(runs_dir / "notf")["modes"]["script"]
    assert entry["status"] == "failed" and "never imported TensorFlow" in entry["error"]
    rc, _, _ = _run(capfd, "--out", str(runs_dir), "--name", "sh", "--", "sh", "-c", "exit 4")
    assert rc == 4
    entry = runfolder.read_manifest(runs_dir / "sh")["modes"]["script"]
    assert entry["status"] == "failed" and "hook never ran" in entry["error"]


def test_bad_arguments(tmp_path, capfd):
    for args in (["run"], ["run", "--"], ["run", "--into", str(tmp_path / "nope"), "--", PY, "-c", "1"],
                 ["run", "--steps", "0", "--", PY, "-c", "1"],
                 ["run", "--out", str(tmp_path), "--", "/nonexistent/binary"]):
        rc, _, err = _run(capfd, *args[1:])
        assert rc == 2, args
        assert err.strip().splitlines()[-1].startswith("traceinsight: error:"), (args, err)
        assert "Traceback" not in err


def test_hook_leaves_the_environment_alone(runs_dir, capfd, monkeypatch, tmp_path):
    """Only the hook's own folder goes on PYTHONPATH, and the script and its children get their
    own PYTHONPATH back, no traceinsight variables, and no hook folder on sys.path."""
    mine = str(tmp_path / "mine")
    monkeypatch.setenv("PYTHONPATH", mine)
    rc, out, _ = _run(capfd, "--out", str(runs_dir), "--name", "env", "--", PY, str(SCRIPTS / "env_report.py"))
    assert rc == 0
    seen = json.loads(out.strip().splitlines()[-1])
    for who in (seen, seen["child"]):
        assert who["pythonpath"] == mine
        assert who["vars"] == []
        assert not [p for p in who["path"] if "capture/hook" in p or p.endswith("/reach")]
    assert seen["child"]["hook"] is False           # the child process ran without the hook
    assert str(Path(traceinsight.__file__).resolve().parents[1]) not in seen["path"]


def test_names_the_reason_when_steps_cannot_be_marked(runs_dir, capfd):
    rc, out, err = _run(capfd, "--out", str(runs_dir), "--name", "broken", "--",
                        PY, str(SCRIPTS / "broken_profiler.py"), "6")
    assert rc == 0 and "done 6 steps" in out          # the script ran on, untraced
    entry = runfolder.read_manifest(runs_dir / "broken")["modes"]["broken_profiler"]
    assert entry["status"] == "failed"
    assert entry["error"] == ("the trace was not saved: the profiler did not start: RuntimeError: "
                              "no profiler here")
    assert "no steps" not in entry["error"] and "no steps" not in err
    t = _timings(runs_dir / "broken", "broken_profiler")
    # every step still measured: 6 calls, each step from one to the next (the last has no end)
    assert t["all_steps"]["step_nums"] == list(range(5))


def test_profiler_log_lines_are_filtered():
    from traceinsight.capture.compat import PROFILER_LOG as _PROFILER_LOG
    from traceinsight.capture.script import _MAYBE_LOG
    dropped = [
        b"2026-11-25 12:04:45.113066: I external/local_tsl/tsl/profiler/rpc/profiler_server.cc:46] "
        b"Profiler server listening on [::]:37771 selected port:37771",
        b"2026-11-25 12:04:45.117704: W external/local_tsl/tsl/profiler/lib/profiler_session.cc:110] "
        b"Profiling is late by 3942342 nanoseconds and will start immediately.",
        b"2026-11-25 12:04:45.117704: I external/local_xla/xla/tsl/profiler/lib/profiler_session.cc:119] "
        b"Profiler session started.",
        b"I0000 00:00:1795608729.634534   25171 profiler_session.cc:132] Profiler session started.",
        b"W0000 00:00:1795608729.634524   25171 profiler_session.cc:123] Profiling is late by 1 nanoseconds",
        b"I0000 00:00:1795608730.638984   25171 save_profile.cc:150] Collecting XSpace to repository: x",
    ]
    kept = [
        b"2026-11-25 12:04:28.720787: I tensorflow/core/util/port.cc:113] oneDNN custom operations are on.",
        b"Epoch 1/3", b"trained: loss 0.5", b"",
        b"I0000 00:00:1795608723.292230   24871 port.cc:153] oneDNN custom operations are on.",
        b"2026-11-25 12:04:45.117704: E external/local_tsl/tsl/profiler/lib/profiler_session.cc:1] failed",
    ]
    assert all(_PROFILER_LOG.match(line) for line in dropped)
    assert not any(_PROFILER_LOG.match(line) for line in kept)
    assert _MAYBE_LOG.match(b"2026-11-2") and not _MAYBE_LOG.match(b"\r 3/10 [===")


@pytest.mark.parametrize("where", ["main", "module"])
def test_step_function_names_a_python_function(runs_dir, tmp_path, where):
    """A plain eager loop whose step is a Python function: of the script itself (found at its
    first call, which is not a step) or of a module (wrapped when it is imported: every call)."""
    times = tmp_path / "own.json"
    name = "train_step" if where == "main" else "stepwork.train_step"
    rc = main(["run", "--out", str(runs_dir), "--name", f"pyfn_{where}", "--skip-steps", "2",
               "--steps", "5", "--step-function", name, "--", PY,
               str(SCRIPTS / "eager_step_function.py"), where, str(times)])
    assert rc == 0
    run = runs_dir / f"pyfn_{where}"
    entry = runfolder.read_manifest(run)["modes"]["eager_step_function"]
    assert entry["status"] == "ok", entry["error"]
    calls = 11 if where == "main" else 12          # the script calls it 12 times
    t = _timings(run, "eager_step_function")
    assert t["details"]["step_kinds"] == {"python function": calls}
    window = _window(t, 2, 5)
    mode = traceinsight.load(run, use_cache=False).modes["eager_step_function"]
    _check_steps_sum(mode, t)
    # its 12 calls may all be made while the trace is saved: no untraced step to correct to
    _check_calibrated(run, "eager_step_function", corrected=False)
    # against the loop's own perf_counter time of each call (the first call of a script's own
    # function is how it is found: step n is call n + 1); each step is the iteration from its
    # call to the next, which adds only the loop's own bookkeeping to the call
    own = np.asarray(json.loads(times.read_text()))[[n + 12 - calls for n in window]] * 1e3
    np.testing.assert_allclose(mode.steps["wall_ms"].to_numpy()[1:-1], own[1:-1], rtol=0.1,
                               atol=0.5)


def test_an_eager_loop_is_calibrated(runs_dir, capfd):
    """An eager custom loop (Dense layers and Adam, a plain Python step function): the profiler's
    cost is measured in the script's process, and its split is the calibrated correction instead
    of every category scaled alike."""
    rc, _, err = _run(capfd, "--out", str(runs_dir), "--name", "eager_dense", "--skip-steps", "3",
                      "--steps", "4", "--step-function", "train_step", "--", PY,
                      str(SCRIPTS / "eager_dense_loop.py"), "40")
    assert rc == 0
    assert "calibrat" not in err          # nothing said to the script's user
    run = runs_dir / "eager_dense"
    assert runfolder.read_manifest(run)["modes"]["eager_dense_loop"]["status"] == "ok"
    t = _timings(run, "eager_dense_loop")
    _window(t, 3, 4)
    mode = traceinsight.load(run, use_cache=False).modes["eager_dense_loop"]
    _check_steps_sum(mode, t)
    _check_calibrated(run, "eager_dense_loop")


def test_a_calibration_that_fails_is_noted_and_the_script_runs_on(runs_dir, capfd):
    from traceinsight.model import CorrectionKind
    rc, out, _ = _run(capfd, "--out", str(runs_dir), "--name", "no_add", "--skip-steps", "3",
                      "--steps", "4", "--step-function", "train_step", "--", PY,
                      str(SCRIPTS / "eager_dense_loop.py"), "40", "no-math-add")
    assert rc == 0 and out.startswith("done 40 steps")
    run = runs_dir / "no_add"
    entry = runfolder.read_manifest(run)["modes"]["eager_dense_loop"]
    assert entry["status"] == "ok", entry["error"]
    assert any(n.startswith("the profiler's cost was not calibrated (untraced blocks: "
                            "RuntimeError: tf.math.add is not for this script")
               for n in entry["notes"])
    t = _timings(run, "eager_dense_loop")
    assert "calibration" not in t
    _window(t, 3, 4)
    mode = traceinsight.load(run, use_cache=False).modes["eager_dense_loop"]
    assert mode.correction.kind is CorrectionKind.PROPORTIONAL


def test_the_machines_load_is_recorded_per_phase_and_said(runs_dir):
    """The script's machine gets busy after the traced window (busy loops started by the script
    itself at step 25, one per CPU: other processes, not the script's own time). ``run`` records
    other processes' share of the CPUs over the traced window and over the untraced steps after
    it; the analysis reads both, and every page's notes say the load changed between them, so
    the traced/untraced difference is not read as the profiler's cost alone."""
    from traceinsight.machineload import LOAD_EXPLAINS
    rc = main(["run", "--out", str(runs_dir), "--name", "busy", "--skip-steps", "5", "--steps",
               "8", "--", PY, str(SCRIPTS / "busy_after_window.py"), "25", "1.0"])
    assert rc == 0
    # a script's mode: its kind is the script's, never read from its label
    entry = runfolder.read_manifest(runs_dir / "busy")["modes"]["busy_after_window"]
    assert entry["kind"]["base"] == "script"
    t = _timings(runs_dir / "busy", "busy_after_window")
    traced = t["traced"]["host"]["load"]
    untraced = t["load"]["timing_phase"]
    assert t["load"]["cpu_count"] >= 1
    for phase in (traced, untraced):
        assert 0 <= phase["other_cpu_busy"] <= 1 and phase["own_cpu_busy"] > 0
        assert phase["t_end_unix"] > phase["t_start_unix"]
    assert traced["t_end_unix"] <= untraced["t_start_unix"]
    # one busy loop per CPU beside the untraced steps: others take far more of the CPUs there
    assert untraced["other_cpu_busy"] > traced["other_cpu_busy"]
    mode = traceinsight.load(runs_dir / "busy", use_cache=False).modes["busy_after_window"]
    assert mode.timing.other_cpu_busy == pytest.approx(untraced["other_cpu_busy"])
    assert mode.timing.traced_other_cpu_busy == pytest.approx(traced["other_cpu_busy"])
    changed = any(n.startswith("the machine's load changed between the traced and the untraced")
                  for n in mode.notes)
    assert changed == (untraced["other_cpu_busy"] - traced["other_cpu_busy"] >= LOAD_EXPLAINS)



def check_a_loop_waiting_on_its_input(python: str, out: Path, name: str, own_file: Path) -> None:
    """``run`` of tests/scripts/input_bound_loop.py (a map sleeping 2 ms per element, 4 elements
    per batch) under ``python``: each step is the loop's iteration, so the agent's steps (untraced
    and traced) are the script's own perf_counter times of the same iterations (call i to call
    i + 1, measured in the script), the split puts the wait in input, and the input-bound finding
    names the map's stage. (Each step as the call alone, this loop's steps were the call's
    fraction of a ms and nothing was found.)"""
    rc = main(["run", "--out", str(out), "--name", name, "--skip-steps", "3", "--steps", "5",
               "--", python, str(SCRIPTS / "input_bound_loop.py"), "40", "0.002", str(own_file)])
    assert rc == 0
    run = out / name
    entry = runfolder.read_manifest(run)["modes"]["input_bound_loop"]
    assert entry["status"] == "ok", entry["error"]
    t = _timings(run, "input_bound_loop")
    own = np.asarray(json.loads(own_file.read_text()))
    assert len(own) == 39 and t["all_steps"]["step_nums"] == list(range(39))
    assert t["step_span"] == "iteration" and t["details"]["unended_iterations"] == 1
    assert t["step_nums"], "no untraced step after the window"
    # the same iterations, timed by the agent and by the loop itself: the medians agree, and so
    # does each iteration but where the hook worked at its call's entry (the loop's own timer
    # holds that work, the step does not: a write of its record of the steps). The iterations
    # right after a longer pause of the hook (the profiler's start and stop, the calibration),
    # which find their batches ready, are in neither the window nor the untraced steps.
    for steps_s, nums in ((t["steps_s"], t["step_nums"]),
                          (t["traced"]["host"]["steps_s"], t["traced"]["host"]["step_nums"])):
        ours, theirs = np.asarray(steps_s), own[nums]
        assert np.median(ours) == pytest.approx(np.median(theirs), rel=0.05)
        close = np.isclose(ours, theirs, rtol=0.05, atol=2e-4)
        assert close.sum() >= len(ours) - 2, (ours, theirs)
    loaded = traceinsight.load(run, use_cache=False)
    mode = loaded.modes["input_bound_loop"]
    _check_steps_sum(mode, t)
    split = loaded.breakdown().loc["input_bound_loop"]      # median ms/step per category
    assert split.idxmax() == "input", split.to_dict()
    assert "each step is one iteration of the loop: from one train_step call to the next" in \
        mode.step_rule
    assert any(str(s).startswith("Iterator::Root::Map") for s in mode.stages["stage"])
    f = next(f for f in loaded.findings if f.rule == "input-bound")
    assert "By tf.data stage, Iterator::Root::Map" in f.evidence, f.evidence


def test_a_loop_waiting_on_its_input_steps_as_its_own_timer_says(runs_dir, tmp_path):
    check_a_loop_waiting_on_its_input(PY, runs_dir, "input_loop", tmp_path / "own.json")


def test_a_retracing_steps_arguments_give_its_cause_and_a_signature_that_holds(runs_dir,
                                                                            tmp_path):
    """The traced calls' arguments (recorded by the hook as capture records its inputs) say why
    the step retraced (a shape, a Python float), and the fix quotes the signature they fit,
    which, applied to the same calls (built from the run's data, not from the quoted text),
    traces once."""
    import subprocess

    from traceinsight.analysis.retraces import signature_specs
    from traceinsight.analysis.timings import read_timing

    rc = main(["run", "--out", str(runs_dir), "--name", "retrace", "--skip-steps", "3",
               "--steps", "8", "--", PY, str(SCRIPTS / "retracing_loop.py"), "40"])
    assert rc == 0
    run = traceinsight.load(runs_dir / "retrace", use_cache=False)
    m = run.modes["retracing_loop"]
    row = next(r for r in m.table("retraces").records() if r["function"] == "body")
    assert row["traced_calls"] > 1 and row["cause"] == "shapes and python values"
    assert row["signature"] == "[tf.TensorSpec([None, 8], tf.float32), tf.TensorSpec([], tf.float32)]"
    f = next(f for f in run.findings if f.rule == "retracing")
    assert row["signature"] in f.fix and "def body(x, lr)" in f.fix
    recorded = read_timing(runs_dir / "retrace" / "retracing_loop")[3]["input_signatures"]
    sig = tmp_path / "sig.json"
    sig.write_text(json.dumps([a.to_dict() for a in signature_specs(recorded)]))
    out = subprocess.run([PY, str(SCRIPTS / "retracing_loop.py"), "40", str(sig)],
                         capture_output=True, text=True, check=True).stdout
    assert "traces 1" in out


def test_a_tf1_session_loop_steps_per_session_run(runs_dir, tmp_path):
    check_a_tf1_session_loop(PY, runs_dir, "tf1loop", tmp_path / "own.json")


def check_a_tf1_session_loop(python: str, out: Path, name: str, own_file: Path) -> None:
    """A TF1 script's outermost ``Session.run`` calls are step calls as tf.function calls are:
    each step is the loop's iteration (the known sleep in its body included, as python), the
    same as the loop's own perf_counter times of the same iterations."""
    rc = main(["run", "--out", str(out), "--name", name, "--skip-steps", "3",
               "--steps", "5", "--", python, str(SCRIPTS / "tf1_session_loop.py"), "40", "0.003",
               str(own_file)])
    assert rc == 0
    run = out / name
    entry = runfolder.read_manifest(run)["modes"]["tf1_session_loop"]
    assert entry["status"] == "ok", entry["error"]
    t = _timings(run, "tf1_session_loop")
    assert t["step_span"] == "iteration" and t["step_calls"] == ["Session.run"]
    own = np.asarray(json.loads(own_file.read_text()))
    ours, theirs = np.asarray(t["steps_s"]), own[t["step_nums"]]
    assert np.median(ours) == pytest.approx(np.median(theirs), rel=0.05)
    mode = traceinsight.load(run, use_cache=False).modes["tf1_session_loop"]
    assert "from one Session.run call to the next" in mode.step_rule
    means = mode.category_means()
    assert max(means, key=means.get) == "python"          # the 3 ms sleep between the runs
    assert means["python"] > 0.5 * float(np.median(ours)) * 1e3

