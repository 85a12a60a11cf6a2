"""Real-world traces: GPU device time, multi-GPU / multi-host, traces with no host events, Keras
TensorBoard callback and tf.profiler start/stop traces, repeated step numbers and cut last steps.

Synthetic XSpaces have hand-computed answers (times in µs); the committed real traces are checked
for what their structure decides (step counts, rules) and, for the public GPU demo trace, against
the figures XProf's own converters give on the same file (tools/compare_xprof.py recomputes them).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import numpy as np
import pytest

import traceinsight
from traceinsight.analysis.device import kernel_totals
from traceinsight.analysis.mode import analyze_mode
from traceinsight.cli import main
from traceinsight.stepsource import StepSource

from xspace_builder import Space, session_path

DATA = Path(__file__).parent / "data"
GPU_DEMO = DATA / "gpu_demo"
FOREIGN = DATA / "foreign"
MS = 1e-3  # ms per µs


def only_mode(path):
    run = traceinsight.load(path, use_cache=False)
    assert len(run.modes) == 1
    return next(iter(run.modes.values()))


# ---- synthetic GPU traces -----------------------------------------------------------------------

def gpu_space(steps_line: bool = True, host_api: bool = False) -> Space:
    """Two GPUs, two steps each, on a host with no TF Python-API events (host tracer level 0).

    GPU:0 step 0: window 0..100; kernels k1 10..40 (op a/MatMul:MatMul), k2 50..60 (b/Relu:Relu);
      H2D 0..5, D2H 90..95. busy = 5 + 30 + 10 + 5 = 50 -> idle 50.
    GPU:0 step 1: window 200..280; k1 210..250 (a/MatMul:MatMul). busy 40, idle 40.
    GPU:1 step 0: window 0..120; k1 0..60 (a/MatMul:MatMul); D2D 60..70. busy 70, idle 50.
    GPU:1 step 1: window 200..290; k1 200..230. busy 30, idle 60.
    Steps (the slowest device's window): 0 -> 120 µs (GPU:1), 1 -> 90 µs (GPU:1).
    """
    sp = Space()
    sp.task_environment(host_level=0)
    hp = sp.host()
    host = hp.line("python")
    host.event("MemoryAllocation", 1, 0)
    hp.line("tf_Compute/1").event("ExecutorState::Process", 0, 3)  # graph executor: TF evidence
    if host_api:
        host.event("TFE_Py_Execute", 1, 5)
    k1 = "void gemm_kernel<float, 128>(float const*, float*, int)"
    k2 = "void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Relu>, long>(long)"
    for dev, evs in (
            (0, [(k1, 10, 30, "a/MatMul:MatMul", 0), (k2, 50, 10, "b/Relu:Relu", 0),
                 ("MemcpyH2D", 0, 5, None, 0), ("MemcpyD2H", 90, 5, None, 0),
                 (k1, 210, 40, "a/MatMul:MatMul", 1)]),
            (1, [(k1, 0, 60, "a/MatMul:MatMul", 0), ("MemcpyD2D", 60, 10, None, 0),
                 (k1, 200, 30, "a/MatMul:MatMul", 1)])):
        plane = sp.plane(f"/device:GPU:{dev}")
        stream = plane.line("Stream #1(Compute)", line_id=1)
        for name, start, dur, op, group in evs:
            stats = {"group_id": group}
            if op:
                stats["level 0"] = ("ref", op)
            stream.event(name, start, dur, **stats)
        if steps_line:
            steps = plane.line("Steps", line_id=-559038737)
            windows = {0: [(0, 100), (200, 80)], 1: [(0, 120), (200, 90)]}[dev]
            for g, (start, dur) in enumerate(windows):
                steps.event(str(g), start, dur, group_id=g, step_name=str(g))
            # XProf's derived op line repeats the kernels: never summed
            ops = plane.line("TensorFlow Ops", line_id=-559038734)
            for _name, start, dur, op, group in evs:
                if op:
                    ops.event(op, start, dur, group_id=group)
    return sp


def test_gpu_steps_from_device_step_lines_per_device_and_slowest(tmp_path):
    m = analyze_mode("gpu", [gpu_space().write(tmp_path / "h.xplane.pb")])
    assert m.ok and not m.host_events_recorded
    assert "device-side step grouping" in m.step_rule
    assert m.step_source is StepSource.DEVICE_STEPS_LINE
    assert m.steps["wall_ms"].tolist() == pytest.approx([120 * MS, 90 * MS])
    # host categories: not recorded (NaN), never python
    assert m.steps[["op", "python", "dispatch", "input"]].isna().all().all()
    assert any("host categories not recorded" in n for n in m.notes)
    d = m.device_steps.set_index(["device", "step_num"])
    g0 = d.loc[("/device:GPU:0", 0)]
    assert (g0["wall_ms"], g0["compute_ms"], g0["h2d_ms"], g0["d2h_ms"], g0["idle_ms"]) == \
        pytest.approx((100 * MS, 40 * MS, 5 * MS, 5 * MS, 50 * MS))
    g1 = d.loc[("/device:GPU:1", 0)]
    assert (g1["compute_ms"], g1["d2d_ms"], g1["idle_ms"]) == pytest.approx((60 * MS, 10 * MS, 50 * MS))
    assert d.loc[("/device:GPU:1", 1), "idle_ms"] == pytest.approx(60 * MS)
    # both steps are steady (neither holds tracing): medians over the two
    dev = m.devices.set_index("device")
    assert dev.loc["/device:GPU:1", "wall_ms"] == pytest.approx(105 * MS)
    assert dev["slowest"].tolist() == [False, True]
    assert any("the slowest, /device:GPU:1, sets the step" in n for n in m.notes)
    # kernels: whole names, each with its TF op; derived lines not double counted
    k = m.kernels.set_index(["op", "kernel"])
    gemm = k.loc[("a/MatMul", "void gemm_kernel<float, 128>(float const*, float*, int)")]
    assert (gemm["calls"], gemm["device_ms"]) == (4, pytest.approx(160 * MS))
    assert gemm["ms_per_step"] == pytest.approx(80 * MS)
    relu = m.kernels[m.kernels["op_type"] == "Relu"].iloc[0]
    assert relu["kernel"].startswith("void Eigen::internal::EigenMetaKernel<") and relu["calls"] == 1
    assert m.kernels["device_ms"].sum() == pytest.approx(170 * MS)


def test_gpu_steps_from_group_id_without_step_lines(tmp_path):
    m = analyze_mode("gpu", [gpu_space(steps_line=False).write(tmp_path / "h.xplane.pb")])
    assert "group_id" in m.step_rule and m.step_source is StepSource.DEVICE_GROUPS
    # group 0 spans 0..95 over both devices, group 1 200..250
    assert m.steps["wall_ms"].tolist() == pytest.approx([95 * MS, 50 * MS])
    d = m.device_steps.set_index(["device", "step_num"])
    assert d.loc[("/device:GPU:0", 0), "idle_ms"] == pytest.approx((95 - 50) * MS)


def test_recorded_host_level_0_wins_over_host_events(tmp_path):
    """A recorded host_tracer_level 0 says the host trace has no TraceMe events, whatever the
    main thread holds."""
    m = analyze_mode("gpu", [gpu_space(host_api=True).write(tmp_path / "h.xplane.pb")])
    assert not m.host_events_recorded
    assert any("host_tracer_level 0" in n for n in m.notes)


def test_host_not_recorded_finding_and_reports(tmp_path):
    from traceinsight.findings import find
    path = gpu_space().write(session_path(tmp_path / "logdir"))
    run = traceinsight.load(tmp_path / "logdir", use_cache=False)
    found = [f for f in find(run) if f.rule == "host-not-recorded"]
    # GPU:1 medians over its two steps: kernels (60 + 30) / 2, copies (10 + 0) / 2, idle (50 + 60) / 2
    assert len(found) == 1
    assert "kernels 0.045 ms, copies 0.005 ms, idle 0.055 ms" in found[0].evidence
    assert "host_tracer_level" in found[0].fix
    assert not [f for f in find(run) if f.rule == "tiny-ops"]
    out = tmp_path / "r.md"
    assert main(["report", str(path), "-o", str(out)]) == 0
    md = out.read_text()
    assert "not recorded" in md and "Device side" in md
    assert "`void gemm_kernel<float, 128>(float const*, float*, int)`" in md
    out = tmp_path / "r.json"
    assert main(["report", str(path), "-o", str(out)]) == 0
    import jsonschema
    schema = json.loads((Path(traceinsight.__file__).parent / "schemas" /
                         "report.schema.json").read_text())
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, schema)
    mode = doc["modes"][0]
    assert mode["host_events_recorded"] is False
    assert mode["categories"]["python"] is None
    assert [d["slowest"] for d in mode["devices"]] == [False, True]
    out = tmp_path / "r.html"
    assert main(["report", str(path), "-o", str(out)]) == 0
    assert "not recorded" in out.read_text()


def test_viewer_device_tab(tmp_path):
    from textual.widgets import TabbedContent

    from traceinsight.tui import get_app
    from traceinsight.tui.mode import ModeScreen
    gpu_space().write(session_path(tmp_path / "logdir"))
    run = traceinsight.load(tmp_path / "logdir", use_cache=False)

    async def go():
        app = get_app(run)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            await pilot.press("enter")
            await pilot.pause()
            assert isinstance(app.screen, ModeScreen)
            app.screen.query_one(TabbedContent).active = "tab-device"
            await pilot.pause()
            await pilot.pause()
            text = str(app.screen.query_one("#devices").render())
            assert "/device:GPU:1" in text and "slowest" in text
            assert app.screen.query_one("#kernels") is not None
    asyncio.run(go())


def test_cpu_trace_has_no_device_tables(tmp_path):
    sp = Space()
    main_line = sp.host().line("python")
    main_line.event("train", 0, 100, step_num=1)
    main_line.event("TFE_Py_Execute", 10, 50)
    m = analyze_mode("m", [sp.write(tmp_path / "c.xplane.pb")])
    assert m.host_events_recorded and m.devices.empty and m.kernels.empty


# ---- steps: Keras callback, repeated step_num, cut last step ------------------------------------

def test_keras_profiled_batch_markers_are_steps(tmp_path):
    sp = Space()
    line = sp.host().line("python")
    for i, (start, dur) in enumerate([(0, 30), (40, 20), (70, 20), (100, 18)]):
        line.event("Profiled batch", start, dur, step_num=i + 2)
        line.event("train_function", start + 1, dur - 2, tf_function_call="notTraced-nonXla")
    m = analyze_mode("k", [sp.write(tmp_path / "k.xplane.pb")])
    assert "'Profiled batch'" in m.step_rule
    assert m.steps["wall_ms"].tolist() == pytest.approx([30 * MS, 20 * MS, 20 * MS, 18 * MS])
    assert m.other.empty  # the marker is a window, not an unplaced event
    # its own time (1 µs either side of the call) is python
    assert m.steps.iloc[0]["python"] == pytest.approx(2 * MS)


def test_repeated_step_num_is_said_and_each_marker_a_step(tmp_path):
    sp = Space()
    line = sp.host().line("python")
    for i in range(10):
        line.event("train", i * 10, 8, step_num=7)
        line.event("TFE_Py_Execute", i * 10 + 1, 6)
    m = analyze_mode("d", [sp.write(tmp_path / "d.xplane.pb")])
    assert len(m.steps) == 10
    assert m.steps["step_num"].tolist() == list(range(7, 17))
    assert any("10 step markers repeat a step_num (7 ×10)" in n for n in m.notes)


def test_last_step_cut_by_trace_end_is_not_steady(tmp_path):
    """The recorded stop time falls inside the last marker's window: that step is partial."""
    sp = Space()
    base_ns = 1_000_000_000
    env = sp.task_environment()
    env.stat("profile_start_time", base_ns).stat("profile_stop_time", base_ns + 250_000)  # 250 µs
    line = sp.host().line("python", timestamp_ns=base_ns)
    for i in range(3):
        line.event("train", i * 100, 100, step_num=i + 1)
        line.event("TFE_Py_Execute", i * 100 + 10, 50)
    m = analyze_mode("p", [sp.write(tmp_path / "p.xplane.pb")])
    assert m.steps["partial"].tolist() == [False, False, True]
    assert len(m.steady_steps) == 2
    assert any("cut by the end of the trace" in n for n in m.notes)


def test_cut_last_step_on_a_clock_relative_to_the_profile_start(tmp_path):
    """TF 2.21 CPU traces: line timestamps count from the profile start (here 40 µs after it)."""
    sp = Space()
    start_ns = 1_795_000_000_000_000_000
    sp.task_environment().stat("profile_start_time", start_ns).stat(
        "profile_stop_time", start_ns + 290_000)  # 290 µs after the start = 250 µs on the line
    line = sp.host().line("python", timestamp_ns=40_000)
    for i in range(3):
        line.event("train", i * 100, 100, step_num=i + 1)
        line.event("TFE_Py_Execute", i * 100 + 10, 50)
    m = analyze_mode("p", [sp.write(tmp_path / "p.xplane.pb")])
    assert m.steps["partial"].tolist() == [False, False, True]


def test_nested_markers_outer_ones_are_steps(tmp_path):
    sp = Space()
    line = sp.host().line("python")
    for i in range(3):
        line.event("Profiled batch", i * 100, 90, step_num=i)
        line.event("train", i * 100 + 5, 80, step_num=i)
        line.event("TFE_Py_Execute", i * 100 + 10, 50)
    m = analyze_mode("n", [sp.write(tmp_path / "n.xplane.pb")])
    assert m.steps["wall_ms"].tolist() == pytest.approx([90 * MS] * 3)
    assert any("inside other markers' windows" in n for n in m.notes)


def test_run_markers_inside_keras_2_markers_are_the_steps(tmp_path):
    """Keras 2's fit marks each batch ``train`` (step_num per epoch), around the markers of
    ``traceinsight run``, and goes on marking batches while the profiler stops, past the traced
    window: traceinsight's markers alone are the steps, their walls theirs."""
    from traceinsight.analysis.names import SCRIPT_STEP_MARKER
    from traceinsight.capture.hook import agent
    assert agent.STEP_MARKER == SCRIPT_STEP_MARKER   # the agent keeps its own copy
    sp = Space()
    line = sp.host().line("python")
    for i in range(6):
        line.event("train", i * 100, 95, step_num=i % 3)      # Keras 2's, per epoch
        if i < 4:                                             # the traced window: 4 steps
            line.event(SCRIPT_STEP_MARKER, i * 100 + 5, 80, step_num=10 + i)
        line.event("TFE_Py_Execute", i * 100 + 10, 50)
    m = analyze_mode("k", [sp.write(tmp_path / "k.xplane.pb")])
    assert m.steps["step_num"].tolist() == [10, 11, 12, 13]
    assert m.steps["wall_ms"].tolist() == pytest.approx([80 * MS] * 4)
    assert any(n.startswith("6 other step markers (Keras 2's fit") for n in m.notes)
    assert not any("inside other markers' windows" in n for n in m.notes)


# ---- real foreign traces (tools/make_foreign_traces.py) -----------------------------------------

def test_real_keras_tensorboard_callback_trace():
    """keras.callbacks.TensorBoard(profile_batch=(2, 5)): 4 batches, each a 'Profiled batch'."""
    m = only_mode(FOREIGN / "keras_tb")
    assert "'Profiled batch'" in m.step_rule
    assert len(m.steps) == 4
    assert "Profiled batch" not in set(m.other["name"]) if len(m.other) else True
    assert m.host_events_recorded
    # categories sum to each step's wall time
    cats = m.steps[list(traceinsight.model.CATEGORIES)].sum(axis=1)
    assert np.allclose(cats, m.steps["wall_ms"], rtol=1e-9)


def test_real_start_stop_traces_with_and_without_markers():
    marked = only_mode(FOREIGN / "start_stop_markers")
    assert marked.step_rule.startswith("step markers 'train'") and len(marked.steps) == 6
    plain = only_mode(FOREIGN / "start_stop_plain")
    assert "each top-level tf.function call" in plain.step_rule and len(plain.steps) == 6


def test_real_duplicate_step_num_trace():
    m = only_mode(FOREIGN / "duplicate_step_num")
    assert len(m.steps) == 10
    assert any("repeat a step_num (7 ×10)" in n for n in m.notes)


# ---- the public GPU demo trace (tensorflow/profiler, 2 hosts x 8 GPUs, host trace level 0) -----

# XProf 2.24 on 34.83.195.179_6003.xplane.pb (tools/compare_xprof.py): overview_page step 21.310352
# ms, device compute 14.875539 ms; kernel_stats totals (ms) of the top 5 kernels by name.
XPROF_STEP_MS = 21.310352
XPROF_COMPUTE_MS = 14.875539
XPROF_TOP_KERNELS_MS = [7.908309, 7.507930, 5.476320, 5.211137, 2.397169]


def test_gpu_demo_trace_matches_xprof():
    run = traceinsight.load(GPU_DEMO, use_cache=False)
    assert len(run.modes) == 2  # two hosts kept apart
    m = next(iter(run.modes.values()))
    assert not m.host_events_recorded
    assert len(m.steady_steps) == 1
    assert m.steady_steps["wall_ms"].iloc[0] == pytest.approx(XPROF_STEP_MS, rel=0.05)
    slow = m.devices[m.devices["slowest"].astype(bool)].iloc[0]
    assert slow["device"] == "/device:GPU:6"
    assert slow["compute_ms"] == pytest.approx(XPROF_COMPUTE_MS, rel=0.05)
    top = kernel_totals(m.kernels)["device_ms"].head(5).tolist()
    assert top == pytest.approx(XPROF_TOP_KERNELS_MS, rel=0.05)
    # whole kernel names, each with its TF op
    k = m.kernels.iloc[0]
    assert k["kernel"].startswith("void ") and "<" in k["kernel"] and k["op"] and k["op_type"]
    assert not m.ops["op"].isin(["0", "void"]).any()
    # the two hosts are byte-identical: no straggler is named (tests/test_hosts.py has the rest)
    assert any("all with the same median step: no straggler" in n for n in m.notes)


def test_gpu_demo_trace_against_xprof_converters(tmp_path):
    """The same comparison, with XProf's converters run here (on a copy: XProf writes caches)."""
    pytest.importorskip("xprof.convert.raw_to_tool_data")
    import shutil
    import sys
    sys.path.insert(0, str(Path(__file__).parents[1] / "tools"))
    from compare_xprof import xprof_figures
    src = next((GPU_DEMO / "plugins" / "profile" / "GPU-multi-worker").glob("*.xplane.pb"))
    copy = tmp_path / src.name
    shutil.copy(src, copy)
    x = xprof_figures(copy)
    assert x["step_ms_exact"] == pytest.approx(XPROF_STEP_MS, rel=1e-6)
    assert x["compute_ms"] == pytest.approx(XPROF_COMPUTE_MS, rel=1e-6)
    top = sorted(x["kernels"].values(), reverse=True)[:5]
    assert top == pytest.approx(XPROF_TOP_KERNELS_MS, rel=1e-4)


def test_jax_host_trace_is_analysed(tmp_path):
    """A JAX trace (no TensorFlow events) is analysed with JAX's rules: a jitted call is dispatch,
    and so is the PJRT work inside it that has no rule of its own (tests/test_jax_traces.py has
    real ones)."""
    sp = Space()
    line = sp.host().line("python")
    line.event("PjitFunction(f)", 0, 50)
    line.event("PjRtCpuClient::ExecuteHelper", 5, 40)
    path = sp.write(tmp_path / "jax.xplane.pb")
    m = only_mode(path)
    assert m.ok and len(m.steps) == 1
    assert m.steps["dispatch"].iloc[0] == pytest.approx(50 * MS)
    assert m.steps["wall_ms"].iloc[0] == pytest.approx(50 * MS)


def test_export_writes_the_device_tables(tmp_path):
    gpu_space().write(session_path(tmp_path / "logdir"))
    assert main(["export", str(tmp_path / "logdir"), "--mode", "logdir", "-o", str(tmp_path / "x"),
                 "--trace", "none"]) == 0
    import pandas as pd
    k = pd.read_csv(tmp_path / "x" / "kernels.csv")
    assert k["calls"].sum() == 5 and (tmp_path / "x" / "devices.csv").is_file()
