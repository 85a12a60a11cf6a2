"""Traces without TensorFlow events: public jax.profiler traces (AMD GPU, TPU) and a Keras model
recorded under the JAX backend on CPU (tests/data/jax/README.md says where each comes from).

The kernel and framework-op figures are XProf 2.24.2's own, from ``kernel_stats`` and
``framework_op_stats`` on the same files, written here as XProf prints them (µs, 3 decimals):
the tool must give the same numbers to the last digit.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import traceinsight
from traceinsight.analysis.steps import RULE_MODULE_RUNS
from traceinsight.cli import main
from traceinsight.stepsource import StepSource

from xspace_builder import Space

DATA = Path(__file__).parent / "data" / "jax"

# kernel_stats: total_duration_us summed over rows of the same (kernel, op) (XProf splits a kernel's
# rows by launch configuration as well); the kernel named by its first 40 characters
XPROF_KERNELS = {
    "jax08_gemm": [
        ("Cijk_Ailk_Bljk_BBS_BH_MT256x224x64_MI16x", "jit(dot)/dot_general", 1833.003),
        ("Cijk_Ailk_Bljk_BBS_BH_MT256x128x32_MI16x", "jit(dot)/dot_general", 552.961),
        ("Cijk_Ailk_Bljk_BBS_BH_MT256x240x64_MI16x", "jit(dot)/dot_general", 449.28),
        ("Cijk_Ailk_Bljk_BBS_BH_MT128x128x64_MI16x", "jit(dot)/dot_general", 352.28),
        ("wrapped_broadcast.kd", "jit(broadcast_in_dim)/broadcast_in_dim", 153.72),
        ("__amd_rocclr_copyBuffer.kd", "", 87.88),
        ("Cijk_Ailk_Bljk_BBS_BH_MT128x32x64_MI16x1", "jit(dot)/dot_general", 31.36),
        ("gemm_fusion_dot_general_1.kd", "jit(dot)/dot_general", 15.0)],
    "jax08_elementwise": [
        ("loop_convert_fusion.kd", "", 3286.363), ("fusion_5.kd", "", 184.4),
        ("input_reduce_fusion.kd", "jit(_mean)/reduce_sum", 166.48),
        ("input_reduce_fusion.kd", "jit(_reduce_sum)/reduce_sum", 158.561),
        ("__amd_rocclr_copyBuffer.kd", "", 44.8),
        ("loop_convert_fusion.kd", "jit(_mean)/convert_element_type", 20.44),
        ("input_reduce_fusion_1.kd", "jit(_reduce_sum)/convert_element_type", 19.68)],
    "jax08_conv": [
        ("input_transpose_fusion.kd", "jit(forward_3d_conv)/conv_general_dilated", 14344.14),
        ("Cijk_Ailk_Bljk_BBS_BH_MT256x128x64_MI16x", "jit(forward_3d_conv)/conv_general_dilated",
         11852.414),
        ("Im3d2Col.kd", "jit(forward_3d_conv)/conv_general_dilated", 679.202),
        ("__amd_rocclr_copyBuffer.kd", "", 563.521), ("input_transpose_fusion_1.kd", "x", 481.4),
        ("loop_transpose_fusion.kd", "kernel", 193.52), ("Im3d2Col.kd", "", 16.08),
        ("input_transpose_fusion_1.kd", "", 6.8)],
}
# framework_op_stats, device rows: (operation, type, total_self_time µs)
XPROF_OPS = {
    "jax08_gemm": [("jit(dot)/dot_general", "dot_general", 3233.884),
                   ("jit(broadcast_in_dim)/broadcast_in_dim", "broadcast_in_dim", 153.72),
                   ("copy.1", "Unknown", 27.64)],
    "jax08_elementwise": [("loop_convert_fusion", "Unknown", 3286.363), ("fusion.5", "Unknown", 184.4),
                          ("jit(_mean)/reduce_sum", "reduce_sum", 166.48),
                          ("jit(_reduce_sum)/reduce_sum", "reduce_sum", 158.561),
                          ("jit(_mean)/convert_element_type", "convert_element_type", 20.44),
                          ("jit(_reduce_sum)/convert_element_type", "convert_element_type", 19.68)],
    "jax08_conv": [("jit(forward_3d_conv)/conv_general_dilated", "conv_general_dilated", 26875.756),
                   ("x", "x", 481.4), ("kernel", "kernel", 193.52)],
}


def only_mode(path):
    run = traceinsight.load(path, use_cache=False)
    assert len(run.modes) == 1
    return next(iter(run.modes.values()))


@pytest.mark.parametrize("name", sorted(XPROF_KERNELS))
def test_amd_gpu_kernels_match_xprof_to_the_last_digit(name):
    m = only_mode(DATA / f"{name}.xplane.pb")
    assert m.step_rule.startswith(RULE_MODULE_RUNS) and m.step_source is StepSource.MODULE_RUNS
    # every device event is in a steady step: the tables cover the whole trace, as XProf's do
    n = len(m.steady_steps)
    assert n == len(m.steps) and n > 1
    ours: dict[tuple[str, str], float] = {}
    for r in m.kernels.itertuples():
        key = (r.kernel[:40], r.op)
        ours[key] = ours.get(key, 0.0) + r.device_ms * 1000
    assert {k: round(v, 3) for k, v in ours.items()} == {(k, o): us for k, o, us in XPROF_KERNELS[name]}


@pytest.mark.parametrize("name", sorted(XPROF_OPS))
def test_amd_gpu_framework_ops_match_xprof_to_the_last_digit(name):
    m = only_mode(DATA / f"{name}.xplane.pb")
    n = len(m.steady_steps)
    dev = m.ops[m.ops["thread"] == "device"]
    ours = {(r.op, r.type): round(r.self_ms_per_step * n * 1000, 3) for r in dev.itertuples()}
    assert ours == {(op, t): us for op, t, us in XPROF_OPS[name]}


def test_amd_gpu_trace_devices_and_host_categories():
    m = only_mode(DATA / "jax08_gemm.xplane.pb")
    # the steps come from the device: the host categories are not claimed
    assert not m.host_events_recorded
    assert np.isnan(m.steps["op"]).all()
    # XProf's overview_page on this file: device_type "AMD GPU - gfx942" (compute capability 9.4),
    # device_core_count 8 (the trace's GPU planes; one ran work)
    assert ("devices: 8 × AMD GPU (compute capability 9.4, 304 compute units), 1 with activity "
            "(/device:GPU:0)") in m.notes
    # copies and idle per device step: busy + idle = the step's device span
    d = m.device_steps
    assert len(d) == len(m.steps)
    assert np.allclose(d["busy_ms"] + d["idle_ms"], d["span_ms"])
    # ROCm runs copies as kernels (__amd_rocclr_copyBuffer.kd, 87.88 µs in XProf's kernel_stats):
    # their kind comes from the host call that launched them. The device-to-device ones are the
    # module's argument copy, XProf's framework op copy.1 (27.64 µs); the rest came from
    # hipMemcpyHtoDAsync. Compute is the framework ops' kernels: dot_general 3233.884 +
    # broadcast_in_dim 153.72 µs
    assert round(d["d2d_ms"].sum() * 1000, 3) == 27.64
    assert round((d["h2d_ms"].sum() + d["d2d_ms"].sum()) * 1000, 3) == 87.88
    assert round(d["compute_ms"].sum() * 1000, 3) == round(3233.884 + 153.72, 3)
    assert d["d2h_ms"].sum() == 0


# kernel_stats of the NVIDIA trace (XProf 2.24.2): (kernel, total_duration_us), every kernel of
# the train steps (op name "XlaModule": XLA ran them in one command buffer). XProf also lists
# wrapped_add (jit(add)/add, 50 occurrences, 41.761 µs): the 50 small adds after the steps
XPROF_CUDA_STEP_KERNELS = [
    ("gemm_fusion_dot", 121.922), ("gemm_fusion_dot_1", 92.543), ("gemm_fusion_dot_4", 72.513),
    ("gemm_fusion_dot_3", 68.48), ("gemm_fusion_dot_6", 55.808), ("loop_reduce_fusion", 45.632),
    ("gemm_fusion_dot_2", 25.151), ("loop_select_fusion_1", 24.958),
    ("loop_select_fusion", 17.44), ("gemm_fusion_dot_5", 14.817),
    ("gemm_fusion_dot_general_12", 14.016), ("input_reduce_fusion", 9.952),
    ("loop_subtract_fusion", 9.121), ("loop_multiply_fusion", 6.753)]


def test_nvidia_gpu_trace_steps_kernels_and_device_ops():
    """A JAX training loop on an H200: 8 annotated steps, their kernels tied to them by launch
    correlation, and the 50 adds that ran after the steps counted in none."""
    import json
    m = only_mode(DATA / "jax_cuda_mlp.xplane.pb")
    timed = json.loads((DATA / "jax_cuda_mlp.json").read_text())
    assert m.step_rule.startswith("step markers 'train'")
    assert m.steps["step_num"].tolist() == list(range(timed["steps"]))
    # each step's traced wall is the annotation's: inside perf_counter's timing of the same call,
    # short of it by the annotation's own enter and exit (a few µs)
    gap = np.array(timed["traced_step_ms"]) - np.array(m.steps["wall_ms"], dtype=float)
    assert (gap > 0).all() and (gap < 0.05).all()
    assert ("devices: 1 × Nvidia GPU (compute capability 9.0, 132 compute units), 1 with "
            "activity (/device:GPU:0)") in m.notes
    assert any("by launch correlation" in n and f"{timed['small_adds']} device events belong "
               "to no step" in n for n in m.notes)
    d = m.device_steps
    assert d["kernels"].tolist() == [15] * timed["steps"]
    # a foreign trace: no step is known to be the process's first, all 8 are steady, and the
    # kernel table (the steady steps') covers what XProf's does, less the adds outside the steps
    assert len(m.steady_steps) == timed["steps"]
    ours: dict[str, float] = {}
    for r in m.kernels.itertuples():
        ours[r.kernel] = ours.get(r.kernel, 0.0) + r.device_ms * 1000
    assert {k: round(v, 3) for k, v in ours.items()} == dict(XPROF_CUDA_STEP_KERNELS)
    # the device's ops: the command buffer holding each step's 15 kernels, steps only (the
    # adds after the steps are in none)
    dev = m.ops[m.ops["thread"] == "device"]
    assert dev["op"].tolist() == ["command_buffer_1"]
    row = next(dev.itertuples())
    assert row.calls_per_step == 15
    assert round(row.self_ms_per_step * 8 * 1000, 3) == round(sum(us for _, us in
                                                                  XPROF_CUDA_STEP_KERNELS), 3)


def test_op_families_of_jax_primitives():
    from traceinsight.analysis import opfamily
    assert opfamily.family("jit(dot)/dot_general", "dot_general") == opfamily.MATMUL
    assert opfamily.family("jit(f)/conv_general_dilated", "conv_general_dilated") == opfamily.CONVOLUTION
    assert opfamily.family("jit(_mean)/reduce_sum", "reduce_sum") == opfamily.REDUCTION
    assert opfamily.family("jit(f)/broadcast_in_dim", "broadcast_in_dim") == opfamily.DATA_MOVEMENT
    # XLA's own ops (no primitive): CPU's wrapped single ops, GPU fusions named after their kind
    assert opfamily.family("wrapped_broadcast", "wrapped_broadcast") == opfamily.DATA_MOVEMENT
    assert opfamily.family("loop_convert_fusion", "Unknown") == opfamily.ELEMENTWISE
    assert opfamily.family("input_reduce_fusion.1", "Unknown") == opfamily.REDUCTION
    assert opfamily.family("input_transpose_fusion", "Unknown") == opfamily.DATA_MOVEMENT
    assert opfamily.family("gemm_fusion_dot_general.1", "Unknown") == opfamily.MATMUL
    assert opfamily.family("copy.1", "Unknown") == opfamily.DATA_MOVEMENT


# framework_op_stats of the TPU trace, device rows: (operation, type, total_self_time µs); XProf
# sums the ops' device_duration_ps over the 4 cores
XPROF_TPU_OPS = [
    ("copy-done.4", "Unknown", 77773215.73125), ("copy-done.2", "Unknown", 77642772.81875),
    ("copy-done", "Unknown", 75671038.51375), ("copy-done.5", "Unknown", 72946182.6625),
    ("jit(f)/jit(main)/add", "add", 9619893.6375),
    ("jit(_psum)/jit(main)/reduce_sum", "reduce_sum", 1460345.25875),
    ("jit(broadcast_in_dim)/jit(main)/broadcast_in_dim", "broadcast_in_dim", 4443.76625),
    ("copy-start.4", "Unknown", 2.4), ("copy-start.2", "Unknown", 2.2975),
    ("copy-start", "Unknown", 2.16875), ("copy-done.1", "Unknown", 1.18875),
    ("copy-done.3", "Unknown", 1.1475), ("copy-start.3", "Unknown", 0.725),
    ("copy-start.5", "Unknown", 0.70875), ("copy-start.1", "Unknown", 0.68125)]


def test_tpu_ops_match_xprof_to_the_last_digit():
    m = only_mode(DATA / "tpu_inference_2.xplane.pb")
    # the device events are not assigned to steps here: the ops are the whole trace's, per step
    assert any(n.startswith("device ops: all device work of the trace over its") for n in m.notes)
    n = len(m.steps)
    dev = m.ops[m.ops["thread"] == "device"]
    ours = {(r.op, r.type): round(r.self_ms_per_step * n * 1000, 5) for r in dev.itertuples()}
    assert ours == {(op, t): us for op, t, us in XPROF_TPU_OPS}


def test_tpu_trace_is_read():
    m = only_mode(DATA / "tpu_inference_2.xplane.pb")
    # XProf's overview_page: device_type "TPU v6 Lite", device_core_count 4
    assert ("devices: 4 × TPU v6 Lite, 4 with activity (/device:TPU:0, /device:TPU:1, "
            "/device:TPU:2, /device:TPU:3)") in m.notes
    assert any(n.startswith("TPU: per-core busy time and HLO ops are read") for n in m.notes)
    assert sorted(m.devices["device"]) == [f"/device:TPU:{i}" for i in range(4)]
    assert (m.devices["compute_ms"] > 0).all()
    dev = m.ops[m.ops["thread"] == "device"]
    # HLO ops by instruction name (the event names are the HLO text)
    assert {"copy-done", "copy-start"} <= set(dev["op"]) and not dev["op"].str.contains("=").any()


def test_keras_jax_cpu_trace_steps_and_host_categories():
    """A Keras model under the JAX backend: 4 train_on_batch calls in StepTraceAnnotation("train",
    step_num=i): 4 steps from the markers; the first holds JAX's tracing and XLA's compile."""
    m = only_mode(DATA / "keras_jax_cpu_train_on_batch.xplane.pb")
    assert m.step_rule.startswith("step markers 'train'")
    assert m.steps["step_num"].tolist() == [0, 1, 2, 3]
    assert m.host_events_recorded
    first = m.steps.iloc[0]
    assert first["compile"] > 0 and first["tracing"] > 0
    steady = m.steady_steps
    assert (steady["compile"] == 0).all() and (steady["tracing"] == 0).all()
    assert (steady["dispatch"] > 0).all()


def test_trace_without_tf_jax_or_device_work_is_refused_in_one_line(tmp_path, capsys):
    sp = Space()
    line = sp.host().line("python")
    line.event("SomethingElse", 0, 50)
    path = sp.write(tmp_path / "other.xplane.pb")
    assert main(["analyze", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no TensorFlow or JAX events" in err[0]


def test_jax_host_trace_without_markers_steps_are_the_jitted_calls(tmp_path):
    """No step markers, no device: each top-level call of the jitted function with the most
    main-thread time is a step (a nested jitted call and a lighter function are not).

    step(): 0..100 µs (inside: trace_to_jaxpr_dynamic 5..25 tracing, backend_compile_and_load
    30..80 compile, a nested PjitFunction(inner) 82..90), 200..240, 300..340 µs; helper(): 150..160
    and 260..270 µs (10 µs each: less time than step).
    Step 0: tracing 20, compile 50, dispatch 30 (the rest of the call); steps 1, 2: dispatch 40.
    """
    sp = Space()
    main_line = sp.host().line("python")
    main_line.event("PjitFunction(step)", 0, 100)
    main_line.event("trace_to_jaxpr_dynamic", 5, 20)
    main_line.event("backend_compile_and_load", 30, 50)
    main_line.event("PjitFunction(inner)", 82, 8)
    main_line.event("PjitFunction(helper)", 150, 10)
    main_line.event("PjitFunction(step)", 200, 40)
    main_line.event("PjitFunction(helper)", 260, 10)
    main_line.event("PjitFunction(step)", 300, 40)
    m = only_mode(sp.write(tmp_path / "jax.xplane.pb"))
    assert m.step_rule.startswith("no step markers: each top-level call of the jitted function step")
    us = 1e-3
    assert m.steps["wall_ms"].tolist() == pytest.approx([100 * us, 40 * us, 40 * us])
    first = m.steps.iloc[0]
    assert (first["tracing"], first["compile"], first["dispatch"]) == pytest.approx(
        (20 * us, 50 * us, 30 * us))
    assert m.steps["dispatch"].tolist()[1:] == pytest.approx([40 * us, 40 * us])


def test_device_ops_join_the_main_threads_host_ops_not_the_launches():
    from traceinsight.analysis.jaxtrace import with_device_ops
    from traceinsight.columns import Columns, text

    def ops(rows):
        return Columns({"op": text([r[0] for r in rows]), "type": text([r[1] for r in rows]),
                        "thread": text([r[2] for r in rows]),
                        "calls_per_step": np.array([1.0] * len(rows)),
                        "self_ms_per_step": np.array([r[3] for r in rows]),
                        "share": np.array([1.0] * len(rows))})

    host = ops([("PjitFunction(f)", "(runtime)", "main", 0.1), ("fusion.1", "fusion", "worker", 0.2)])
    dev = ops([("jit(f)/dot_general", "dot_general", "device", 0.3)])
    both = with_device_ops(host, dev, host_recorded=True)
    assert [(r["op"], r["thread"]) for r in both.records()] == [
        ("PjitFunction(f)", "main"), ("jit(f)/dot_general", "device")]
    # a trace that cannot split host time lists the device's ops only
    assert [r["op"] for r in with_device_ops(host, dev, host_recorded=False).records()] == [
        "jit(f)/dot_general"]


def test_waits_for_the_executable_are_op(tmp_path):
    """JAX's asynchronous dispatch on CPU: the executable's ops run on XLA's threads while the main
    thread is inside PJRT's execute call or back in Python. Hand-computed (µs):

    main: step marker 0..150; PjitFunction(f) 0..100 > ExecuteHelperOnSingleDevice 10..90; Python
    (no event) 100..140; PjitFunction(g) 140..150. XLA thread: fusion.1 (an HLO op) 40..70 and
    100..130. op = 30 (the execute call's own time under the first op) + 30 (Python under the
    second); dispatch = 100 - 30 + 10 = 80; python = 40 - 30 = 10."""
    sp = Space()
    host = sp.host()
    main_line = host.line("python")
    main_line.event("train", 0, 150, step_num=0)
    main_line.event("PjitFunction(f)", 0, 100)
    main_line.event("CommonPjRtLoadedExecutable::ExecuteHelperOnSingleDevice", 10, 80)
    main_line.event("PjitFunction(g)", 140, 10)
    xla = host.line("tf_XLAEigen/1")
    xla.event("fusion.1", 40, 30, hlo_op="fusion.1")
    xla.event("fusion.1", 100, 30, hlo_op="fusion.1")
    m = only_mode(sp.write(tmp_path / "jax.xplane.pb"))
    s = m.steps.iloc[0]
    us = 1e-3
    assert (s["op"], s["dispatch"], s["python"]) == pytest.approx((60 * us, 80 * us, 10 * us))
    assert s["wall_ms"] == pytest.approx(150 * us)
    assert any("counted as op, not Python" in n for n in m.notes)
