"""capture's checks that need no TensorFlow: workload files, mode table, options decoding, bad input."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from traceinsight.capture import modes, options, workload
from traceinsight.capture.orchestrate import summary_of
from traceinsight.cli import main
from traceinsight.errors import TraceinsightError

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
WORKLOADS = Path(__file__).parent / "workloads"


def _one_line_error(capsys, argv, out_dir: Path) -> str:
    status = main(argv)
    err = capsys.readouterr().err.strip()
    assert status == 2
    assert len(err.splitlines()) == 1, err
    assert err.startswith("traceinsight: error: ")
    assert not out_dir.exists() or not any(out_dir.iterdir()), "nothing may be written"
    return err


def test_missing_file(tmp_path, capsys):
    err = _one_line_error(capsys, ["capture", str(tmp_path / "nope.py"), "--out", str(tmp_path / "runs")],
                          tmp_path / "runs")
    assert "no such file" in err


def test_syntax_error(tmp_path, capsys):
    bad = tmp_path / "bad.py"
    bad.write_text("def step(x):\n    return x +\n\ndef inputs():\n    return (1,)\n")
    err = _one_line_error(capsys, ["capture", str(bad), "--out", str(tmp_path / "runs")], tmp_path / "runs")
    assert "bad.py:2: syntax error" in err


def test_missing_functions(tmp_path, capsys):
    err = _one_line_error(capsys, ["capture", str(WORKLOADS / "no_functions.py"), "--out",
                                   str(tmp_path / "runs")], tmp_path / "runs")
    assert "defines model() but not data()" in err


def test_not_a_workload(tmp_path, capsys):
    f = tmp_path / "empty.py"
    f.write_text("x = 1\n")
    err = _one_line_error(capsys, ["capture", str(f), "--out", str(tmp_path / "runs")], tmp_path / "runs")
    assert "define model() and data()" in err


def test_mode_of_the_other_kind_refused_before_running(tmp_path, capsys):
    err = _one_line_error(capsys, ["capture", str(SAMPLES / "retracing.py"), "--modes", "eager,fit",
                                   "--out", str(tmp_path / "runs")], tmp_path / "runs")
    assert "'fit' applies to keras workloads only" in err


def test_unknown_mode_refused(tmp_path, capsys):
    err = _one_line_error(capsys, ["capture", str(SAMPLES / "retracing.py"), "--modes", "warp-speed",
                                   "--out", str(tmp_path / "runs")], tmp_path / "runs")
    assert "unknown mode 'warp-speed'" in err
    assert "did you mean" not in err
    # a typo of a real mode is answered with the modes it is close to
    err = _one_line_error(capsys, ["capture", str(SAMPLES / "retracing.py"), "--modes", "fucntion",
                                   "--out", str(tmp_path / "runs")], tmp_path / "runs")
    assert "unknown mode 'fucntion' (did you mean 'function'" in err


def test_no_workload_given(capsys):
    assert main(["capture"]) == 2
    assert "give a workload file" in capsys.readouterr().err


def test_list_modes(capsys):
    assert main(["capture", "--list-modes"]) == 0
    out = capsys.readouterr().out
    for name in ("eager", "train_on_batch-xla", "fit-dataset", "+tensor", "v1-session", "tf_keras:",
                 "tf1:train_on_batch", "tf1:fit", "tf1:predict_on_batch"):
        assert name in out
    # concise: each base mode once, the variants (+tensor, tf_keras:, tf1:) in one sentence
    assert len(out.splitlines()) <= 40
    assert "predict_on_batch+tensor" not in out and "tf_keras:fit" not in out


def test_tf1_modes_are_keras_2_without_eager():
    m = modes.check("keras", "tf1:train_on_batch", True) if modes.tf_keras_installed() \
        else modes.get("keras", "tf1:train_on_batch")
    assert m.tf1 and m.legacy_keras and m.needs_y and m.base == "train_on_batch"
    assert modes.get("keras", "tf1:fit").driver == "fit"
    assert modes.get("function", "tf1:fit") is None
    assert not any(n.startswith("tf1:") for n in modes.default_modes("keras", True))


def test_every_sample_is_a_valid_workload():
    kinds = {}
    for path in sorted(SAMPLES.glob("*.py")):
        wf = workload.inspect_file(path)
        kinds[path.name] = wf.kind
        assert wf.doc.strip(), f"{path.name}: the sample's question goes in its docstring"
        for m in wf.modes or ():
            mode = modes.get(wf.kind, m)
            assert mode is not None, f"{path.name}: unknown mode {m}"
            if mode.backend == "jax" and not modes.jax_installed():
                continue  # a sample's Keras-on-JAX modes are skipped without JAX (said at capture)
            modes.check(wf.kind, m, has_y=True, legacy_keras=True)   # valid names, whatever is installed
    assert "keras" in kinds.values() and "function" in kinds.values()


def test_inspect_reads_modes_and_kind(tmp_path):
    f = tmp_path / "w.py"
    f.write_text('"""Doc."""\nMODES = ["eager", "xla"]\ndef step(x):\n    return x\n'
                 'def inputs():\n    return (1,)\n')
    wf = workload.inspect_file(f)
    assert (wf.kind, wf.modes, wf.name, wf.doc) == ("function", ("eager", "xla"), "w", "Doc.")
    assert len(wf.sha256) == 64


def test_inspect_refuses_non_literal_modes(tmp_path):
    f = tmp_path / "w.py"
    f.write_text("MODES = make()\ndef step(x):\n    return x\ndef inputs():\n    return (1,)\n")
    with pytest.raises(TraceinsightError, match="MODES must be a literal list"):
        workload.inspect_file(f)


def test_mode_table():
    assert modes.default_modes("function", False) == ["eager", "function", "xla", "v1-session"]
    keras_default = modes.default_modes("keras", True)
    assert keras_default[:3] == ["eager", "function", "xla"] and "fit-dataset" in keras_default
    assert not any(m.endswith("+tensor") or m.startswith("tf_keras:") for m in keras_default)
    assert "train_on_batch" not in modes.default_modes("keras", False)  # no y: no training
    with pytest.raises(ValueError, match="returned no y"):
        modes.check("keras", "fit", has_y=False)
    assert modes.check("keras", "eager+tensor", True).tensor_inputs
    assert "fit-dataset+tensor" not in {m.name for m in modes.keras_modes()}


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def test_decode_profile_options():
    # field 1 version=1, 2 host=3, 3 device=1, 4 python=1, 8 duration_ms=1000 (varint > 127),
    # 10 repository_path (length-delimited), then a fixed64 field 13 (skipped)
    buf = (b"\x08\x01" + b"\x10\x03" + b"\x18\x01" + b"\x20\x01" + b"\x40" + _varint(1000)
           + b"\x52\x04/tmp" + b"\x69" + b"\0" * 8)
    assert options.decode_profile_options(buf) == {"host_tracer_level": 3, "device_tracer_level": 1,
                                                   "python_tracer_level": 1}
    # proto3: an absent field is 0
    assert options.decode_profile_options(b"\x10\x02")["python_tracer_level"] == 0


def test_options_check_reports_mismatch(tmp_path):
    from traceinsight.xplane import XSpace
    space = XSpace()
    plane = space.planes.add(name="Task Environment")
    plane.stat_metadata[1].id = 1
    plane.stat_metadata[1].name = "profile_options"
    plane.stats.add(metadata_id=1, bytes_value=b"\x10\x02\x18\x01")  # host 2, python 0 (the TF 2.21 bug)
    path = tmp_path / "h.xplane.pb"
    path.write_bytes(space.SerializeToString())
    res = options.check({"host_tracer_level": 3, "python_tracer_level": 1}, path)
    assert res["ok"] is False
    assert res["recorded"]["host_tracer_level"] == 2
    assert "host_tracer_level asked 3, recorded 2" in res["problem"]
    ok = options.check({"host_tracer_level": 2, "device_tracer_level": 1}, path)
    assert ok["ok"] is True
    assert options.check({"host_tracer_level": 3}, None)["ok"] is False


def test_summary_of_timings():
    t = {"steps_s": [0.001, 0.002, 0.003, 0.004], "first_step_s": 0.5,
         "traced": {"host": {"steps_s": [0.0033, 0.0027]}}}
    s = summary_of(t)
    assert s["median_ms"] == pytest.approx(2.5)
    assert s["first_step_ms"] == pytest.approx(500)
    assert s["distortion"] == pytest.approx(3.0 / 2.5 - 1)
    assert s["n"] == 4


def test_capture_command_does_not_import_tensorflow(tmp_path):
    import subprocess
    code = ("import sys; from traceinsight.cli import main; "
            "main(['capture', '--list-modes']); "
            "main(['capture', sys.argv[1]]); "
            "assert 'tensorflow' not in sys.modules, 'tensorflow imported'")
    r = subprocess.run([sys.executable, "-c", code, str(tmp_path / "missing.py")], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@given(host=st.integers(0, 3), device=st.integers(0, 2), python=st.integers(0, 1),
       duration=st.integers(0, 2**40), path=st.binary(max_size=300))
def test_decode_profile_options_any_message(host, device, python, duration, path):
    fields = [(2, host), (3, device), (4, python)]
    buf = b"\x08\x01" + b"\x40" + _varint(duration) + b"\x52" + _varint(len(path)) + path
    for number, value in fields:
        if value:  # proto3 omits zeros
            buf += _varint(number << 3) + _varint(value)
    assert options.decode_profile_options(buf) == {"host_tracer_level": host, "device_tracer_level": device,
                                                   "python_tracer_level": python}


def test_capture_settings_from_the_workload_file(tmp_path):
    from traceinsight.capture.planning import Options
    f = tmp_path / "w.py"
    f.write_text('CAPTURE = {"host_trace_ms": 9000, "python_tracer": False, "min_time": 1}\n'
                 "def step(x):\n    return x\ndef inputs():\n    return (1,)\n")
    wf = workload.inspect_file(f)
    assert wf.capture == {"host_trace_ms": 9000, "python_tracer": False, "min_time": 1}
    # built-in defaults < the file's CAPTURE < flags given on the command line
    opts = Options.resolve(wf.capture, {"host_trace_ms": 500, "min_steps": None})
    assert (opts.host_trace_ms, opts.python_tracer, opts.min_time, opts.min_steps) == (500, False, 1.0, 30)
    with pytest.raises(TraceinsightError, match="host_trace_ms must be positive"):
        Options.resolve({"host_trace_ms": 0})


@pytest.mark.parametrize("text, message", [
    ('CAPTURE = {"host_trace": 5}', "CAPTURE key 'host_trace' is not one of"),
    ('CAPTURE = {"min_steps": 2.5}', "CAPTURE['min_steps'] must be int"),
    ('CAPTURE = {"python_tracer": 1}', "CAPTURE['python_tracer'] must be bool"),
    ("CAPTURE = dict(min_steps=3)", "CAPTURE must be a literal dict"),
])
def test_bad_capture_settings_are_one_line(tmp_path, capsys, text, message):
    f = tmp_path / "w.py"
    f.write_text(text + "\ndef step(x):\n    return x\ndef inputs():\n    return (1,)\n")
    err = _one_line_error(capsys, ["capture", str(f), "--out", str(tmp_path / "runs")], tmp_path / "runs")
    assert message in err


def test_bad_flag_value_is_one_line(tmp_path, capsys):
    err = _one_line_error(capsys, ["capture", str(SAMPLES / "retracing.py"), "--min-steps", "0",
                                   "--out", str(tmp_path / "runs")], tmp_path / "runs")
    assert "min_steps must be at least 1" in err


def test_options_mismatch_is_recorded_and_shown(tmp_path, monkeypatch, capsys):
    """A trace whose recorded levels differ from the requested ones: run.json and the screen say so."""
    from rich.console import Console

    from traceinsight.capture import orchestrate as orch
    from traceinsight.capture import planning
    from traceinsight.capture.children import ChildResult
    from traceinsight.commands.capture import print_summary

    bad = {"requested": {"host_tracer_level": 3, "python_tracer_level": 0},
           "recorded": {"host_tracer_level": 2, "python_tracer_level": 0}, "ok": False,
           "trace": None, "problem": "host_tracer_level asked 3, recorded 2"}
    timings = {"mode": "eager", "first_step_s": 0.1, "first_step_traced": True,
               "steps_s": [0.002, 0.002, 0.003], "warmup_steps": 2,
               "traced": {"host": {"steps_s": [0.0025], "step_nums": [1], "profile_options": bad}}}

    def fake_run_child(what, spec, workdir, timeout, env, stderr_path=None, poll=None, keep_alive=False):
        return ChildResult(True, json.loads(json.dumps(timings)), None, "", 0)

    monkeypatch.setattr(orch, "run_child", fake_run_child)
    wf = workload.inspect_file(SAMPLES / "retracing.py")
    run = tmp_path / "run"
    run.mkdir()
    manifest = {"schema_version": 1, "modes": {"eager": planning.mode_entry("eager")}}
    writer = planning.RunWriter(run, manifest)
    plan = planning.Plan(wf, ["eager"], {}, run, planning.Options())
    state = orch.capture_mode(plan, writer, "eager", plan.opts)
    assert state.status == "ok"
    assert state.notes == ["host pass: profiler options not as requested: host_tracer_level asked 3, "
                           "recorded 2"]
    saved = json.loads((run / "run.json").read_text())["modes"]["eager"]
    assert saved["profile_options"]["host"]["ok"] is False
    assert saved["notes"] == state.notes
    assert json.loads((run / "eager" / "timings.json").read_text())["traced"]["host"]["profile_options"] == bad
    console = Console(record=True, width=120)
    print_summary(console, run)
    assert "eager" in console.export_text()


def test_missing_tensorflow_is_one_line_about_the_setup(tmp_path, monkeypatch, capsys):
    fake = tmp_path / "site"
    (fake / "tensorflow").mkdir(parents=True)
    (fake / "tensorflow" / "__init__.py").write_text("raise ImportError('no TensorFlow here (test)')\n")
    monkeypatch.setenv("PYTHONPATH", str(fake))
    err = _one_line_error(capsys, ["capture", str(SAMPLES / "retracing.py"), "--out", str(tmp_path / "runs")],
                          tmp_path / "runs")
    assert "capture needs a working TensorFlow" in err and "is installed but does not import" in err
    assert "traceinsight[" not in err     # another project's name: it would replace TensorFlow
    assert "retracing.py" not in err  # not the workload's fault


def test_one_line_names_the_root_cause():
    """The error line shown for a failed mode (TF and Keras wrap the real error; messages copied from
    TF 2.21's StagingError and Keras 3.15's layer-call error)."""
    from traceinsight.capture.loading import one_line

    class StagingError(Exception):
        pass

    staging = StagingError('in user code:\n\n    File "w.py", line 4, in step  *\n        raise MemoryError('
                           '"Unable to allocate 8.00 GiB")\n\n    MemoryError: Unable to allocate 8.00 GiB\n')
    assert one_line(staging) == "StagingError, caused by MemoryError: Unable to allocate 8.00 GiB"
    keras = ValueError("Exception encountered when calling Sequential.call().\n\n\x1b[1mInput 0 of layer "
                       "'dense' is incompatible with the layer: expected axis -1 of input shape to have "
                       "value 4, but received input with shape (2, 3)\x1b[0m\n\nArguments received by "
                       "Sequential.call():\n  • inputs=tf.Tensor(shape=(2, 3), dtype=float32)")
    assert one_line(keras) == ("ValueError: Input 0 of layer 'dense' is incompatible with the layer: "
                                "expected axis -1 of input shape to have value 4, but received input "
                                "with shape (2, 3)")
    try:
        try:
            raise KeyError("missing")
        except KeyError as inner:
            raise RuntimeError("wrapper") from inner
    except RuntimeError as e:
        assert one_line(e) == "RuntimeError from KeyError: 'missing'"
    assert one_line(MemoryError()) == "MemoryError"
    assert len(one_line(ValueError("x" * 5000))) == 300


def test_machine_usage_records_load_of_an_interval():
    from traceinsight.capture import machine

    usage = machine.Usage()
    t_end = __import__("time").perf_counter() + 0.3
    while __import__("time").perf_counter() < t_end:  # this process busy: own share > 0
        pass
    u = usage.finish()
    assert u["t_end_unix"] >= u["t_start_unix"] and len(u["loadavg"]) == 3
    assert 0.0 <= u["other_cpu_busy"] <= 1.0 and 0.0 < u["own_cpu_busy"] <= 1.0
    assert machine.cpu_count()["cpu_count"] == __import__("os").cpu_count()


def test_python_without_tensorflow_is_one_line(tmp_path, capsys):
    """capture --python: an interpreter without TensorFlow (here a bare venv, not even numpy) gets
    one line naming what to install there and the right distribution, never the unrelated
    ``traceinsight`` project."""
    import subprocess
    import sys
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "bare")], check=True)
    err = _one_line_error(capsys, ["capture", str(SAMPLES / "retracing.py"), "--python",
                                   str(tmp_path / "bare" / "bin" / "python"), "--out", str(tmp_path / "runs")],
                          tmp_path / "runs")
    assert "capture needs a working TensorFlow in" in err and "No module named 'numpy'" in err
    assert "traceinsight-tf[cpu]" in err and "--python" in err
    assert "traceinsight[" not in err


def test_python_that_is_not_a_python(tmp_path, capsys):
    err = _one_line_error(capsys, ["capture", str(SAMPLES / "retracing.py"), "--python", "/bin/false",
                                   "--out", str(tmp_path / "runs")], tmp_path / "runs")
    assert err.startswith("traceinsight: error: --python /bin/false: not a Python interpreter")


def test_every_modes_recorded_kind_is_the_one_its_name_reads_back_as():
    """run.json records each mode's kind from the mode table (``Mode.mode_kind``); a folder
    without it derives the kind from the name (``modekind.from_name``): the two agree for every
    mode the capture can run, so old and new run folders pair their modes the same way."""
    from traceinsight.capture import modes
    from traceinsight.modekind import from_name
    table = modes.keras_modes() + modes.function_modes()
    assert len(table) > 30
    for m in table:
        assert m.mode_kind() == from_name(m.name), m.name
    kinds = {m.name: m.mode_kind() for m in modes.keras_modes()}
    assert kinds["fit-dataset"].input == "dataset" and kinds["tf_keras:fit+tensor"].input == "tensor"
    assert kinds["tf1:fit"].flavour == "tf1" and kinds["jax:fit"].backend == "jax"


def test_the_capture_summary_quotes_the_figures_every_page_shows():
    """The table the capture prints once the modes are timed reads run.json and timings.json as
    the full load does (``load_timings``, no trace read): the same statuses, kinds, medians and
    ratios to the fastest as the report of the analysed run."""
    import traceinsight
    from traceinsight.analysis.load import load_timings
    for name in ("conv1d", "costly-loop", "retracing"):
        path = Path(__file__).parent / "data" / "runs" / name
        quick, full = load_timings(path), traceinsight.load(path, use_cache=False)
        assert list(quick.modes) == list(full.modes)
        for n, m in quick.modes.items():
            assert (m.status, m.kind) == (full.modes[n].status, full.modes[n].kind), n
        cols = ["mode", "status", "median_ms", "ci_lo_ms", "ci_hi_ms", "ratio", "ratio_lo",
                "ratio_hi", "vs_fastest"]
        got = quick.summary()[cols].to_dict("records")
        want = full.summary()[cols].to_dict("records")
        assert json.dumps(got, default=str) == json.dumps(want, default=str), name
