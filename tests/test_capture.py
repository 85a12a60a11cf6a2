"""Real captures (TensorFlow in child processes): run folder, timings, recorded profiler options,
failing / hanging / dying modes, --resume. Few steps and short traces; one capture shared per workload."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from traceinsight import runfolder
from traceinsight.cli import main

pytestmark = pytest.mark.capture

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
WORKLOADS = Path(__file__).parent / "workloads"

FAST = ["--min-steps", "5", "--min-time", "0", "--max-time", "3", "--warmup", "2",
        "--host-trace-ms", "2500", "--host-max-steps", "10",
        "--python-trace-ms", "600", "--python-max-steps", "2", "--round-time", "0.2"]

KERAS_MODES = ["eager", "function", "xla", "train_on_batch", "fit-dataset"]
FUNCTION_MODES = ["eager", "function", "v1-session"]


def _capture(tmp_path_factory, name, workload, modes, *extra):
    out = tmp_path_factory.mktemp(name)
    status = main(["capture", str(workload), "--modes", ",".join(modes), "--out", str(out),
                   "--name", name, *FAST, *extra])
    return out / name, status


@pytest.fixture(scope="module")
def keras_run(tmp_path_factory):
    return _capture(tmp_path_factory, "keras", SAMPLES / "tf2_vs_tf1_small.py", KERAS_MODES)


@pytest.fixture(scope="module")
def function_run(tmp_path_factory):
    return _capture(tmp_path_factory, "function", SAMPLES / "costly_loop.py", FUNCTION_MODES)


@pytest.fixture(scope="module")
def crash_run(tmp_path_factory):
    return _capture(tmp_path_factory, "crash", WORKLOADS / "crash_under_xla.py",
                    ["eager", "xla", "v1-session"], "--no-python-tracer")


def _check_ok_mode(run: Path, manifest: dict, mode: str, python_pass: bool = True) -> dict:
    entry = manifest["modes"][mode]
    assert entry["status"] == "ok", (mode, entry["error"], entry["stderr_tail"])
    assert entry["dir"] == runfolder.mode_dir(mode)
    timings = runfolder.read_json(run / entry["dir"] / runfolder.TIMINGS)
    assert timings["mode"] == mode
    assert len(timings["steps_s"]) >= 5 and all(s > 0 for s in timings["steps_s"])
    assert timings["first_step_s"] > 0 and timings["first_step_traced"] is True
    assert timings["warmup_steps"] == 2
    # the untraced phase's peak resident memory (Linux: the phase's own, after resetting the
    # kernel's high-water mark), never below what the process held at either end of the phase
    mem = timings["memory"]
    assert mem["basis"] == "phase"
    assert max(mem["rss_start_bytes"], mem["rss_end_bytes"]) <= mem["peak_rss_bytes"]
    s = entry["summary"]
    assert s["n"] == len(timings["steps_s"])
    assert s["median_ms"] == pytest.approx(sorted(timings["steps_s"])[len(timings["steps_s"]) // 2] * 1e3,
                                           rel=0.5)
    passes = ["host", "python"] if python_pass else ["host"]
    for p in passes:
        traced = timings["traced"][p]
        po = traced["profile_options"]
        # the levels asked for are the levels the saved trace says were used
        assert po["ok"] is True, po
        assert po["recorded"]["host_tracer_level"] == 3
        assert po["recorded"]["python_tracer_level"] == (1 if p == "python" else 0)
        assert entry["profile_options"][p]["ok"] is True
        files = runfolder.pass_traces(run, entry["dir"], p)
        assert len(files) == 1 and files[0].stat().st_size > 0
        assert traced["step_nums"] and 0 not in traced["step_nums"]
    assert not (run / entry["dir"] / "python").exists() or python_pass
    # step numbers are unique across passes, the first step is 0
    if manifest["workload"]["kind"] == "function":  # the arguments fed, for retrace causes
        sigs = timings["input_signatures"]
        assert sigs["steps"] >= len(timings["steps_s"]) and len(sigs["distinct"]) >= 1
        for d in sigs["distinct"]:      # each argument as text (shown) and as data (decided on)
            assert len(d["kinds"]) == len(d["args"])
            assert all(k["kind"] in ("python", "array", "other") for k in d["kinds"])
    # the workload process records which package each loaded file's base name is from
    files = timings["python_files"]
    assert files[Path(manifest["workload"]["path"]).name] == "user"
    assert "keras" in files.get("layer.py", "") or "tensorflow" in files.get("ops.py", "")
    nums = timings["traced"]["host"]["step_nums"] + timings["step_nums"]
    assert len(nums) == len(set(nums)) and min(nums) >= 1
    return timings


def test_keras_run_folder(keras_run):
    run, status = keras_run
    assert status == 0
    manifest = runfolder.read_manifest(run)
    assert manifest["workload"]["kind"] == "keras"
    assert manifest["workload"]["name"] == "tf2_vs_tf1_small"
    # each mode's kind recorded as data, as the analysis derives it for older folders
    from traceinsight.modekind import from_name
    for name, entry in manifest["modes"].items():
        assert entry["kind"] == from_name(name).to_dict()
    assert len(manifest["workload"]["sha256"]) == 64
    env = manifest["environment"]
    for key in ("tensorflow", "keras", "numpy", "python", "os", "cpu_model", "cpu_cores", "gpus", "env"):
        assert key in env
    assert env["tensorflow"].startswith("2.")
    assert "KERAS_BACKEND" in env["workload_env"]
    assert list(manifest["modes"]) == KERAS_MODES
    for mode in KERAS_MODES:
        _check_ok_mode(run, manifest, mode)
    assert manifest["modes"]["train_on_batch"]["details"]["compile_kwargs"]["jit_compile"] is False
    assert "prefetch" in manifest["modes"]["fit-dataset"]["details"]["dataset"]
    assert "--modes" in manifest["command"]


def test_keras_traces_hold_step_markers_and_xla_compile(keras_run):
    from traceinsight.xplane import XSpace
    run, _ = keras_run
    names_by_mode = {}
    for mode in ("xla", "fit-dataset"):
        (path,) = runfolder.pass_traces(run, runfolder.mode_dir(mode), "host")
        space = XSpace()
        space.ParseFromString(path.read_bytes())
        names = set()
        for plane in space.planes:
            names |= {m.name for m in plane.event_metadata.values()}
        names_by_mode[mode] = names
    assert "train" in names_by_mode["xla"] and "train" in names_by_mode["fit-dataset"]
    # the first step is inside the host trace, so XLA's compilation is in it
    assert any("Compile" in n for n in names_by_mode["xla"])


def test_function_run_folder(function_run):
    run, status = function_run
    assert status == 0
    manifest = runfolder.read_manifest(run)
    assert manifest["workload"]["kind"] == "function"
    for mode in FUNCTION_MODES:
        _check_ok_mode(run, manifest, mode)
    details = manifest["modes"]["v1-session"]["details"]
    assert details["graph_ops"] > 99
    # inputs() gives the same x and w every step: nothing is fed, both are variables set once
    assert details["placeholders"] == 0 and details["fed_args"] == [] and details["constant_args"] == [0, 1]


def test_v1_session_feeds_only_what_changes(tmp_path):
    """step(x, w, n): x changes every step (fed), w is a 1.8 MB array that does not (a variable set
    once), n is a Python int used in range(n) (stays a Python int: 7 MatMul ops run per step)."""
    out = tmp_path / "runs"
    assert main(["capture", str(WORKLOADS / "v1_constants.py"), "--modes", "v1-session", "--out", str(out),
                 "--name", "v1", *FAST, "--no-python-tracer"]) == 0
    entry = runfolder.read_manifest(out / "v1")["modes"]["v1-session"]
    assert entry["status"] == "ok", entry["error"]
    details = entry["details"]
    assert details["placeholders"] == 1 and details["fed_args"] == [0]
    assert details["constant_args"] == [1, 2]
    # the session's graph: one MatMul per loop iteration of the Python int
    from traceinsight.xplane import XSpace
    (path,) = runfolder.pass_traces(out / "v1", "v1-session", "host")
    space = XSpace()
    space.ParseFromString(path.read_bytes())
    names = {m.name for p in space.planes for m in p.event_metadata.values()}
    # the graph's node names (MatMul, MatMul_1 ...), not the kernel after the colon: oneDNN names
    # it _MklMatMul on some CPUs
    import re
    matmuls = {n.split(":")[0] for n in names if re.search(r"(^|/)MatMul(_\d+)?:", n)}
    assert len(matmuls) == 7, sorted(names)


def test_rounds_are_interleaved_and_recorded_with_the_load(function_run):
    """Default --rounds 4: round 0 is each mode's timing phase, then rounds 1 to 3 run A B C A B C
    in the modes' live processes; every round has its steps, start time and load (steal
    included); steps_s holds the steps of every round used; a disturbed round (others took half
    the CPUs or more) was timed again or set aside, and recorded so; the analysis loads them as
    Timing.rounds / Timing.round_loads / Timing.set_aside."""
    import traceinsight
    from traceinsight.capture.machine import MIN_TICKS
    from traceinsight.machineload import disturbed

    run, _ = function_run
    rounds, attempts = {}, {}
    for mode in FUNCTION_MODES:
        timings = runfolder.read_json(run / runfolder.mode_dir(mode) / runfolder.TIMINGS)
        rounds[mode] = timings["rounds"]
        aside = timings.get("rounds_set_aside") or []
        attempts[mode] = timings["rounds"] + aside
        used = [r["round"] for r in timings["rounds"]]
        set_aside = [r["round"] for r in aside if r["action"] == "set aside"]
        assert sorted(used + set_aside) == [0, 1, 2, 3]
        # a round is set aside only while a quieter one is left to use
        assert not set_aside or not all(disturbed(r["other_cpu_busy"]) for r in timings["rounds"])
        assert all(disturbed(r["other_cpu_busy"]) for r in aside)
        assert timings["steps_s"] == [s for r in timings["rounds"] for s in r["steps_s"]]
        assert all(len(r["steps_s"]) >= 3 and len(r["loadavg"]) == 3 for r in attempts[mode])
        assert all(r["t_end_unix"] >= r["t_start_unix"] for r in attempts[mode])
        # a share from too few clock ticks is none (--min-time 0 makes round 0 a few ms long)
        cpus = timings["load"]["cpu_count"]
        for r in attempts[mode]:
            if r["other_cpu_busy"] is None:
                ticks = (r["t_end_unix"] - r["t_start_unix"] + 0.002) * 100 * cpus
                assert ticks < 2 * MIN_TICKS, r
            else:
                assert 0.0 <= r["other_cpu_busy"] <= 1.0
        assert all(r["steal"] is None or 0.0 <= r["steal"] <= 1.0 for r in attempts[mode])
        load = timings["load"]
        assert load["cpu_count"] >= 1 and len(load["loadavg_start"]) == 3
        nums = timings["step_nums"]
        assert len(nums) == len(set(nums)) == len(timings["steps_s"])
        # unique across every pass and round: the rounds come after the python pass
        assert not set(nums) & set(timings["traced"]["python"]["step_nums"])
        later = [n for r in attempts[mode] if r["round"] > 0 for n in r["step_nums"]]
        assert min(later) > max(timings["traced"]["python"]["step_nums"])
    # the order in time: every mode's round i (each attempt), in mode order, before any mode's
    # round i + 1
    order = sorted((r["t_start_unix"], r["round"], FUNCTION_MODES.index(m))
                   for m, rs in attempts.items() for r in rs)
    assert [i for _, i, _ in order] == sorted(i for _, i, _ in order)
    assert [k for _, i, k in order if i == 0] == list(range(len(FUNCTION_MODES)))
    for i in range(3):  # no overlap: a round ends before the next one starts
        ends = [r["t_end_unix"] for m in FUNCTION_MODES for r in attempts[m] if r["round"] == i]
        starts = [r["t_start_unix"] for m in FUNCTION_MODES for r in attempts[m] if r["round"] == i + 1]
        assert max(ends) <= min(starts)
    timing = traceinsight.load(run, use_cache=False).modes["function"].timing
    assert [list(a) for a in timing.rounds] == [r["steps_s"] for r in rounds["function"]]
    assert [r.round for r in timing.round_loads] == [r["round"] for r in rounds["function"]]
    assert all("steps_s" not in r for r in timing.load["rounds"])
    assert len(timing.set_aside) == len(attempts["function"]) - len(rounds["function"])


def test_summary_printed(keras_run, function_run):
    # the table is printed by the fixture's capture; rebuild it from disk the same way
    from rich.console import Console

    from traceinsight.commands.capture import print_summary
    console = Console(record=True, width=120)
    print_summary(console, function_run[0])
    text = console.export_text()
    for mode in FUNCTION_MODES:
        assert mode in text
    # the fastest mode's ratio to itself, without an interval (the same figure as every page)
    assert "1.00×" in text and "1.00× [" not in text


def test_failing_modes_leave_others_intact(crash_run):
    run, status = crash_run
    assert status == 1  # some modes failed
    manifest = runfolder.read_manifest(run)
    modes = manifest["modes"]
    _check_ok_mode(run, manifest, "eager", python_pass=False)
    assert modes["xla"]["status"] == "failed"
    assert modes["xla"]["error"] and "stderr_tail" in modes["xla"]
    assert modes["xla"]["stderr_tail"]
    assert not (run / "xla" / runfolder.TIMINGS).exists()
    assert modes["v1-session"]["status"] == "failed"
    # v1-session calls step() while building its graph, before any trace
    assert modes["v1-session"]["error"] == (
        "died with signal SIGKILL (a SIGKILL nobody asked for is usually the out-of-memory killer), "
        f"during: building the workload; full output: {run / 'v1-session' / 'stderr.log'}")
    assert (run / "v1-session" / "stderr.log").is_file()


def test_resume_recaptures_only_failed_modes(crash_run, capsys):
    run, _ = crash_run
    before = runfolder.read_manifest(run)
    eager_timings = (run / "eager" / runfolder.TIMINGS).read_bytes()
    status = main(["capture", "--resume", str(run), *FAST, "--no-python-tracer"])
    after = runfolder.read_manifest(run)
    assert status == 1  # every resumed mode failed again (the workload did not change)
    assert after["resumed"][-1]["modes"] == ["xla", "v1-session"]
    assert (run / "eager" / runfolder.TIMINGS).read_bytes() == eager_timings
    assert after["modes"]["eager"] == before["modes"]["eager"]
    assert after["modes"]["xla"]["status"] == "failed"


def test_hanging_mode_times_out(tmp_path):
    out = tmp_path / "runs"
    status = main(["capture", str(WORKLOADS / "hang_in_graph.py"), "--modes", "function,eager",
                   "--out", str(out), "--name", "hang", "--timeout", "25", *FAST, "--no-python-tracer"])
    assert status == 1  # a mode failed
    manifest = json.loads((out / "hang" / "run.json").read_text())
    assert manifest["modes"]["function"]["status"] == "failed"
    # tf.function traces step() in the first call, inside the host trace
    assert manifest["modes"]["function"]["error"] == (
        "timed out after 25 s (--timeout), during: host trace: first step; "
        f"full output: {out / 'hang' / 'function' / 'stderr.log'}")
    assert manifest["modes"]["eager"]["status"] == "ok"
    assert (out / "hang" / "eager" / runfolder.TIMINGS).is_file()


def test_first_step_outlasting_the_host_trace_is_captured_again_whole(tmp_path):
    """A first step (1.5 s of injected sleep while tracing, then XLA's compile) longer than a 400 ms
    host trace: the mode starts again in a fresh process with a host trace long enough, so the
    trace holds the whole first step; its marker's length matches the perf_counter wall."""
    import traceinsight
    from traceinsight.xplane import XSpace

    out = tmp_path / "runs"
    status = main(["capture", str(WORKLOADS / "slow_first_step.py"), "--modes", "xla", "--out", str(out),
                   "--name", "slow", *FAST, "--host-trace-ms", "400", "--no-python-tracer"])
    assert status == 0
    run = out / "slow"
    timings = runfolder.read_json(run / "xla" / runfolder.TIMINGS)
    first, second = timings["first_step_attempts"]
    assert first["host_trace_ms"] == 400 and first["first_step_traced_whole"] is False
    assert first["first_step_s"] >= 1.5
    assert second["host_trace_ms"] >= first["first_step_s"] * 1e3 + 400
    assert second["first_step_traced_whole"] is True and timings["first_step_traced"] is True
    assert second["first_step_s"] == timings["first_step_s"] >= 1.5
    # one session in host/, holding step 0 whole: its marker is as long as the perf_counter wall
    (path,) = runfolder.pass_traces(run, "xla", "host")
    space = XSpace()
    space.ParseFromString(path.read_bytes())
    markers = []
    for plane in space.planes:
        for line in plane.lines:
            for ev in line.events:
                if plane.event_metadata[ev.metadata_id].name == "train":
                    nums = [st.int64_value or st.uint64_value for st in ev.stats
                            if plane.stat_metadata[st.metadata_id].name == "step_num"]
                    markers.append((nums[0] if nums else None, ev.duration_ps / 1e12))
    step0 = [d for n, d in markers if n == 0]
    assert len(step0) == 1
    assert step0[0] == pytest.approx(timings["first_step_s"], abs=0.002)
    assert any(n and n > 0 for n, _ in markers)  # and steady steps after it
    manifest = runfolder.read_manifest(run)
    assert any("captured again in a fresh process" in n for n in manifest["modes"]["xla"]["notes"])
    # the analysis sees the injected sleep as tracing, and XLA's compile, inside the first step
    first_row = traceinsight.load(run, use_cache=False).modes["xla"].steps.query("first").iloc[0]
    assert first_row["tracing"] >= 1500
    assert first_row["wall_ms"] == pytest.approx(timings["first_step_s"] * 1e3, abs=2)


def test_error_while_tracing_names_its_root_cause(tmp_path, capsys):
    """A MemoryError raised while tf.function traces step() reaches the user as a StagingError
    whose first line is only "in user code:": the error shown names the MemoryError."""
    out = tmp_path / "runs"
    status = main(["capture", str(WORKLOADS / "raises_while_tracing.py"), "--modes", "function",
                   "--out", str(out), "--name", "oom", *FAST, "--no-python-tracer"])
    assert status == 1
    printed = capsys.readouterr().out
    assert "1 of 1 mode(s) failed: function" in " ".join(printed.split())
    entry = runfolder.read_manifest(out / "oom")["modes"]["function"]
    assert entry["error"].startswith("StagingError, caused by MemoryError: Unable to allocate 8.00 GiB "
                                     "for an array with shape (1073741824,)"), entry["error"]
    assert entry["error"].endswith(f"full output: {out / 'oom' / 'function' / 'stderr.log'}")
    assert (out / "oom" / "function" / "stderr.log").is_file()


def test_workload_that_raises_is_refused_before_writing(tmp_path, capsys):
    out = tmp_path / "runs"
    status = main(["capture", str(WORKLOADS / "raises_in_data.py"), "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert status == 2
    assert err == ("traceinsight: error: raises_in_data.py: data() raised RuntimeError: "
                   "the dataset file is missing")
    assert not out.exists()


def test_interrupted_capture_leaves_a_readable_run_that_resume_completes(tmp_path, capsys):
    """Ctrl-C during the second mode: run.json stays readable with the first mode intact. While the
    capture runs, --resume of its run is refused (the run is locked) and does not touch it."""
    import os
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "runs"
    run = out / "interrupted"
    hold = tmp_path / "hold"     # the function mode waits while it exists: surely running when interrupted
    hold.touch()
    cmd = [sys.executable, "-m", "traceinsight", "capture", str(WORKLOADS / "held_in_graph.py"),
           "--modes", "eager,function", "--out", str(out), "--name", "interrupted", *FAST,
           "--no-python-tracer"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=dict(os.environ, PYTHONPATH=str(ROOT), HOLD_FILE=str(hold)))
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            try:
                modes = json.loads((run / "run.json").read_text())["modes"]
            except (FileNotFoundError, json.JSONDecodeError):
                modes = {}
            if modes.get("function", {}).get("status") == "running":
                break
            time.sleep(0.2)
        time.sleep(2.0)  # the second mode's workload process is under way
        capsys.readouterr()
        assert main(["capture", "--resume", str(run), *FAST, "--no-python-tracer"]) == 2
        err = capsys.readouterr().err
        assert f"being written by another capture (pid {proc.pid}" in err and "--resume" not in err
        assert proc.poll() is None  # the first capture goes on
        assert runfolder.read_manifest(run)["modes"]["function"]["status"] == "running"
        proc.send_signal(signal.SIGINT)
        printed, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert b"interrupted" in err
    # it says how to finish the run
    assert f"traceinsight capture --resume {run}".encode() in printed
    manifest = runfolder.read_manifest(run)
    assert manifest["modes"]["eager"]["status"] == "ok"
    assert manifest["modes"]["function"]["status"] == "failed"
    assert manifest["modes"]["function"]["error"] == "interrupted (Ctrl-C)"
    assert (run / "eager" / runfolder.TIMINGS).is_file()
    # no temporary file is left where the loader looks
    assert not list(run.glob("*.tmp")) and not list((run / "eager").glob("*.tmp"))
    hold.unlink()

    assert main(["capture", "--resume", str(run), *FAST, "--no-python-tracer"]) == 0
    manifest = runfolder.read_manifest(run)
    assert [e["status"] for e in manifest["modes"].values()] == ["ok", "ok"]
    assert manifest["resumed"][-1]["modes"] == ["function"]
    assert not (run / ".capture.lock").exists()     # a finished run keeps no lock file


@pytest.mark.skipif(not __import__("traceinsight.capture.modes", fromlist=["x"]).tf_keras_installed(),
                    reason="tf_keras (legacy Keras 2) is not installed")
def test_tf_keras_and_tf1_modes_run_under_keras_2(tmp_path):
    """tf_keras:train_on_batch is Keras 2 in TF2 (eager, tf.function); tf1:train_on_batch is the TF1
    baseline: Keras 2 with eager disabled, its v1 training loop run by a Session, Adam replaced by
    Keras 2's v1 optimizer. The trace shows the Session's run, and no tf.function call."""
    from traceinsight.xplane import XSpace

    out = tmp_path / "runs"
    modes = ["tf_keras:train_on_batch", "tf1:train_on_batch"]
    assert main(["capture", str(SAMPLES / "tf2_vs_tf1_small.py"), "--modes", ",".join(modes),
                 "--out", str(out), "--name", "legacy", *FAST, "--no-python-tracer", "--rounds", "1"]) == 0
    manifest = runfolder.read_manifest(out / "legacy")
    entry = manifest["modes"]["tf_keras:train_on_batch"]
    assert entry["dir"] == "tf_keras-train_on_batch"
    _check_ok_mode(out / "legacy", manifest, "tf_keras:train_on_batch", python_pass=False)
    assert entry["details"]["keras_module"] == "tf_keras"
    assert entry["details"]["model_class"].startswith("tf_keras.")
    assert entry["details"]["compile_kwargs"]["optimizer"].startswith("tf_keras.")

    tf1 = manifest["modes"]["tf1:train_on_batch"]
    assert tf1["dir"] == "tf1-train_on_batch"
    _check_ok_mode(out / "legacy", manifest, "tf1:train_on_batch", python_pass=False)
    assert tf1["details"]["keras_module"] == "tf_keras"
    assert "executing eagerly: False" in tf1["details"]["graph"]
    assert tf1["details"]["compile_kwargs"]["optimizer"] == "tf_keras.src.optimizers.legacy.adam.Adam"
    names = set()
    for path in runfolder.pass_traces(out / "legacy", "tf1-train_on_batch", "host"):
        space = XSpace()
        space.ParseFromString(path.read_bytes())
        for plane in space.planes:
            names |= {m.name for m in plane.event_metadata.values()}
    assert "SessionRun" in names or any(n.startswith("Session") for n in names), sorted(names)[:80]
    assert not any(n.startswith("__inference_train_function") for n in names)
    # the same Conv1D ops, run as graph ops of the v1 graph (scope/op:OpType)
    assert any(n.endswith(":Conv2D") or "Conv" in n.split(":")[-1] for n in names if ":" in n)


def test_the_profiler_is_calibrated_in_eager_processes_and_taken_out(function_run):
    """Each eager-capable mode times the calibration loop untraced and inside its host pass; the
    trace holds its events; the drawn split adds up to the untraced median. A TF1 process (graph mode) runs none and says so."""
    import traceinsight
    from traceinsight.capture import calibrate
    from traceinsight.model import CorrectionKind
    run, status = function_run
    loaded = traceinsight.load(run, use_cache=False)
    for mode in ("eager", "function"):
        cal = json.loads((run / mode / "timings.json").read_text())["calibration"]
        assert cal["calls"] == calibrate.CALLS
        assert len(cal["untraced_s"]) == 2 * calibrate.BLOCKS and len(cal["traced_s"]) == calibrate.BLOCKS
        m = loaded.modes[mode]
        per_call = m.tracer_events.calibration_events
        assert per_call >= 2      # at least the C fast path and EagerExecute, each call
        assert m.correction.kind in (CorrectionKind.CALIBRATED, CorrectionKind.INCONCLUSIVE)
        assert m.breakdown_ms == pytest.approx(m.median_ms)
        assert all(0 <= v <= m.median_ms for v in m.category_means().values())
    assert "calibration" not in json.loads((run / "v1-session" / "timings.json").read_text())
    assert loaded.modes["v1-session"].correction.kind is CorrectionKind.PROPORTIONAL
