"""Capture and ``run`` on the oldest supported TensorFlow (tensorflow-cpu 2.12.1, Keras 2 as
tf.keras), in an environment of its own that holds nothing but TensorFlow, driven through
``capture --python`` / ``run -- <its python>`` as a user with that version would: the tool's own
environment (the newest TensorFlow) stays as it is.

The environment is made once by tools/make_tf_envs.py into the git-ignored ``.tf-envs/`` folder
(or the folder named by TRACEINSIGHT_TF_ENVS) and reused while its TensorFlow imports."""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from pathlib import Path

import numpy as np
import pytest

import traceinsight
from traceinsight import runfolder
from traceinsight.cli import main
from traceinsight.model import CATEGORIES

pytestmark = pytest.mark.capture

ROOT = Path(__file__).resolve().parents[1]
OLDEST = "2.12.1"   # compat.OLDEST: the oldest supported minor, its last patch release
SMALL = ["--min-steps", "5", "--min-time", "0.2", "--max-time", "3", "--warmup", "2", "--rounds", "1",
         "--host-trace-ms", "1500", "--host-max-steps", "6", "--no-python-tracer"]


_FROZEN_BEFORE: list[str] = []   # the environment's packages before the captures


def _tools():
    spec = importlib.util.spec_from_file_location("make_tf_envs", ROOT / "tools" / "make_tf_envs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def tf_oldest() -> str:
    if sys.version_info >= (3, 12):
        pytest.skip(f"tensorflow-cpu {OLDEST} has no wheel for Python {sys.version_info[0]}.{sys.version_info[1]}")
    tools = _tools()
    cache = Path(os.environ.get("TRACEINSIGHT_TF_ENVS") or tools.DEFAULT_CACHE)
    return str(tools.make_env(OLDEST, cache))


def _freeze(python: str) -> list[str]:
    import subprocess
    return subprocess.run([python, "-m", "pip", "freeze", "--all"], capture_output=True, text=True,
                          check=True).stdout.splitlines()


@pytest.fixture(scope="module")
def runs_oldest(tf_oldest, tmp_path_factory):
    out = tmp_path_factory.mktemp("tf_oldest")
    _FROZEN_BEFORE[:] = _freeze(tf_oldest)
    keras = main(["capture", str(ROOT / "tests" / "data" / "versions" / "keras_small.py"), "--python", tf_oldest,
                  "--modes", "fit,xla,tf1:fit", "--out", str(out), "--name", "keras", *SMALL])
    # with a python-tracer pass: its Python frames show the tracer levels reached the session
    with_python = [a for a in SMALL if a != "--no-python-tracer"] + ["--python-max-steps", "3"]
    fn = main(["capture", str(ROOT / "tests" / "data" / "versions" / "fn_small.py"), "--python", tf_oldest,
               "--modes", "function,v1-session", "--out", str(out), "--name", "fn", *with_python])
    script = main(["run", "--out", str(out), "--name", "script", "--skip-steps", "3", "--steps", "5",
                   "--", tf_oldest, str(ROOT / "tests" / "scripts" / "custom_loop.py"), "20"])
    # Keras 2's fit marks every batch "train" itself, around run's own markers
    fit = main(["run", "--out", str(out), "--name", "fit", "--skip-steps", "5", "--steps", "6",
                "--", tf_oldest, str(ROOT / "tests" / "scripts" / "keras_fit.py"), "0", "6"])
    return out, (keras, fn, script, fit)


def _check_steps(mode, timings: dict) -> None:
    """Categories sum to each traced step's wall, and the trace's step walls agree with the
    workload's own perf_counter times of the same steps (two clocks, one interval)."""
    steps = mode.steps
    assert len(steps) > 0
    np.testing.assert_allclose(steps[list(CATEGORIES)].sum(axis=1).to_numpy(), steps["wall_ms"].to_numpy(),
                               rtol=0.01)
    host = timings["traced"]["host"]
    by_num = dict(zip(host["step_nums"], host["steps_s"]))
    if timings.get("first_step_traced") and timings.get("first_step_s") is not None:
        by_num[timings["first_step_num"]] = timings["first_step_s"]   # capture keeps step 0 apart
    assert set(steps["step_num"]) <= set(by_num)
    np.testing.assert_allclose(steps["wall_ms"].to_numpy(), [by_num[n] * 1e3 for n in steps["step_num"]],
                               atol=0.5)


def test_every_mode_captures_on_the_oldest_tensorflow(runs_oldest, tf_oldest):
    out, statuses = runs_oldest
    assert statuses == (0, 0, 0, 0)
    for name, modes in (("keras", ["fit", "xla", "tf1:fit"]), ("fn", ["function", "v1-session"])):
        manifest = runfolder.read_manifest(out / name)
        env = manifest["environment"]
        assert env["tensorflow"] == OLDEST and env["python_executable"] == tf_oldest
        if name == "keras":
            assert env["keras"].startswith("2.12")
        loaded = traceinsight.load(out / name, use_cache=False)
        for m in modes:
            entry = manifest["modes"][m]
            assert entry["status"] == "ok", (m, entry["error"], entry["stderr_tail"])
            # 2.12 records no profile_options: said, not taken for a wrong level
            po = entry["profile_options"]["host"]
            assert po["ok"] is None and "records no profile_options" in po["unverified"]
            assert any("records no profile_options" in n for n in entry["notes"])
            assert loaded.modes[m].ok
            _check_steps(loaded.modes[m], runfolder.read_json(out / name / entry["dir"] / runfolder.TIMINGS))
    # the tracer levels reached 2.12's in-process profiler session (it records no profile_options):
    # the python-tracer pass holds Python frames ("$file:line function"), which only
    # python_tracer_level 1 records
    from traceinsight.analysis.events import load_files
    python_pass = sorted((out / "fn" / "function" / "python").rglob("*.xplane.pb"))
    table = load_files(python_pass)
    assert sum(table.names[i].startswith("$") for i in set(table.name.tolist())) > 10
    # tf1: under 2.12's own Keras 2, no tf-keras package needed
    assert runfolder.read_manifest(out / "keras")["modes"]["tf1:fit"]["details"]["keras_module"] == "keras"


def test_run_marks_a_custom_loop_on_the_oldest_tensorflow(runs_oldest):
    out, _ = runs_oldest
    entry = runfolder.read_manifest(out / "script")["modes"]["custom_loop"]
    assert entry["status"] == "ok", entry["error"]
    timings = runfolder.read_json(out / "script" / entry["dir"] / runfolder.TIMINGS)
    assert timings["details"]["versions"]["tensorflow"] == OLDEST
    assert timings["details"]["step_kinds"] == {"tf.function": 20}
    loaded = traceinsight.load(out / "script", use_cache=False)
    _check_steps(loaded.modes["custom_loop"], timings)



def test_run_of_a_loop_waiting_on_its_input_on_the_oldest_tensorflow(tf_oldest, tmp_path):
    """Each step is the loop's iteration on 2.12 too (tests/test_run.py says what is checked)."""
    from test_run import check_a_loop_waiting_on_its_input
    check_a_loop_waiting_on_its_input(tf_oldest, tmp_path, "input_loop", tmp_path / "own.json")


def test_run_of_a_tf1_session_loop_on_the_oldest_tensorflow(tf_oldest, tmp_path):
    """TF1 scripts are where the TF1-vs-TF2 question comes from: their Session.run loop steps."""
    from test_run import check_a_tf1_session_loop
    check_a_tf1_session_loop(tf_oldest, tmp_path, "tf1_loop", tmp_path / "own.json")


def test_run_of_a_keras_2_fit_in_a_tf1_graph_on_the_oldest_tensorflow(tf_oldest, tmp_path):
    """Eager execution disabled, a Keras 2 model is its TF1-graph class (``training_v1.Model``,
    whose fit overrides the one run wraps first): its batches are the steps, as the script's own
    callback times them (before, the script had no step at all)."""
    import json

    import numpy as np
    from test_run import SCRIPTS
    own_file = tmp_path / "own.json"
    rc = main(["run", "--out", str(tmp_path), "--name", "tf1fit", "--skip-steps", "5",
               "--steps", "6", "--", tf_oldest, str(SCRIPTS / "keras_tf1_fit.py"), "3",
               str(own_file)])
    assert rc == 0
    entry = runfolder.read_manifest(tmp_path / "tf1fit")["modes"]["keras_tf1_fit"]
    assert entry["status"] == "ok", entry["error"]
    timings = runfolder.read_json(tmp_path / "tf1fit" / entry["dir"] / runfolder.TIMINGS)
    assert timings["step_span"] == "batch"
    assert timings["details"]["step_kinds"] == {"fit batch": 96}     # 3 epochs of 32 batches
    own = np.asarray(json.loads(own_file.read_text()))
    ours, theirs = np.asarray(timings["steps_s"]), own[timings["step_nums"]]
    assert len(ours) and np.median(ours) == pytest.approx(np.median(theirs), rel=0.05)


def test_run_of_a_keras_2_fit_takes_its_own_markers_as_the_steps(runs_oldest):
    """Keras 2's fit wraps each batch in its own ``train`` marker (numbered per epoch) around
    run's, and goes on marking batches while the profiler stops: the steps are run's 6, their
    walls the script's own perf_counter times of the same steps."""
    out, _ = runs_oldest
    entry = runfolder.read_manifest(out / "fit")["modes"]["keras_fit"]
    assert entry["status"] == "ok", entry["error"]
    timings = runfolder.read_json(out / "fit" / entry["dir"] / runfolder.TIMINGS)
    assert timings["details"]["step_kinds"] == {"fit batch": 240}
    m = traceinsight.load(out / "fit", use_cache=False).modes["keras_fit"]
    assert m.steps["step_num"].tolist() == timings["traced"]["host"]["step_nums"] == list(range(5, 11))
    _check_steps(m, timings)
    assert any(re.match(r"\d+ other step markers \(Keras 2's fit", n) for n in m.notes)
    # untraced steps after the window, or, where the script ended while the trace was saved,
    # a note that says there were none
    untraced = timings["details"]["untraced_steps"]
    assert untraced == len(timings["steps_s"])
    assert untraced > 0 or any(n.startswith("no untraced step was timed") for n in entry["notes"])


def test_trace_decoder_works_with_the_old_protobuf(tf_oldest):
    """TF 2.12 needs protobuf < 5: the trace decoder (traceinsight.xplane, protobuf's descriptor
    API, no TensorFlow) runs in that environment's interpreter on a committed trace of that version."""
    import json
    import subprocess

    from traceinsight.capture.environment import package_path
    trace = next((ROOT / "tests" / "data" / "versions" / OLDEST / "function").rglob("*.xplane.pb"))
    code = ("import json, sys; from google.protobuf import __version__ as v; "
            "from traceinsight.xplane import XSpace; s = XSpace(); "
            "s.ParseFromString(open(sys.argv[1], 'rb').read()); "
            "print(json.dumps([v, sum(len(line.events) for p in s.planes for line in p.lines)]))")
    out = subprocess.run([tf_oldest, "-c", code, str(trace)], capture_output=True, text=True, check=True,
                         env=dict(os.environ, PYTHONPATH=package_path()))
    version, events = json.loads(out.stdout)
    assert version.startswith("4.")
    from traceinsight.xplane import XSpace
    here = XSpace()
    here.ParseFromString(trace.read_bytes())
    assert events == sum(len(line.events) for p in here.planes for line in p.lines) > 0


def test_the_users_environment_is_left_as_it_was(runs_oldest, tf_oldest):
    """Capturing and running through the oldest TF's interpreter installs or changes nothing there:
    the same packages at the same versions after as before (TensorFlow, numpy < 2, protobuf < 5
    included)."""
    after = _freeze(tf_oldest)
    assert after == _FROZEN_BEFORE
    pins = {line.split("==")[0].lower(): line.split("==")[1] for line in after if "==" in line}
    assert pins["tensorflow-cpu"] == OLDEST
    assert pins["numpy"].startswith("1.") and pins["protobuf"].startswith("4.")


def test_jax_modes_are_checked_in_the_workloads_interpreter(tf_oldest, tmp_path, capsys):
    """A ``jax:`` mode runs Keras on JAX in the workload's interpreter, so whether JAX is there is
    asked of that interpreter (the probe), not of the tool's: the oldest TF's environment holds nothing
    but TensorFlow, whatever the tool's own environment has."""
    code = main(["capture", str(ROOT / "tests" / "data" / "versions" / "keras_small.py"),
                 "--python", tf_oldest, "--modes", "jax:predict_on_batch", "--out", str(tmp_path),
                 "--name", "jax", *SMALL])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "JAX is not installed" in err and "Traceback" not in err
    assert not (tmp_path / "jax").exists()      # refused before a run folder is written


@pytest.mark.parametrize("route", ["run", "profile", "callback"])
def test_no_listener_off_loopback_on_the_oldest_tensorflow(tmp_path, tf_oldest, route):
    """run, profile() and the Keras callback on the oldest TF: a profiler session in the process,
    nothing listening off loopback (the sockets read from /proc while the window traced)."""
    from test_inprocess_faults import no_listener_off_loopback
    no_listener_off_loopback(tmp_path, route, tf_oldest)
