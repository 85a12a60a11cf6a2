"""GPU work attributed to the host step that launched it, not to the host window it happens to
run in. Synthetic XSpaces (times in µs) with hand-computed answers.

Host: step markers ``train`` step_num 1..3 at 0..100, 100..200, 200..300 (group_id 11, 12, 13),
kernel launches on an executor thread (correlation_id). Device (one stream, as a GPU runs it):

    launch (host)      device event               step   window
    corr 1 at 10       MemcpyH2D   20..30          1      1
    corr 2 at 30       kernel A    60..130         1      1 and 2 (crosses the step-1 marker end)
    corr 3 at 110      kernel B   140..230         2      2 and 3
    corr 5 at 120      kernel C   240..260         2      3 only (runs after step 2's marker)
    corr 4 at 210      kernel D   270..320         3      3, and after the last marker

By group (or correlation):
    step 1: compute 70, h2d 10, busy 80, span 20..130 = 110, idle 30, ends 30 after the marker
    step 2: compute 90 + 20 = 110, busy 110, span 140..260 = 120, idle 10, ends 60 after
    step 3: compute 50, busy 50, span 270..320 = 50, idle 0, ends 20 after
By time window (clipped to each marker):
    step 1: compute 40 (A 60..100), h2d 10, busy 50, idle 50
    step 2: compute 30 (A) + 60 (B 140..200) = 90, busy 90, idle 10
    step 3: compute 30 (B) + 20 (C) + 30 (D 270..300) = 80, busy 80, idle 20
"""

from __future__ import annotations

import math

import pytest

from traceinsight.analysis.mode import analyze_mode

from xspace_builder import Space

MS = 1e-3  # ms per µs


def async_gpu_space(group: bool, corr: bool, steps_line: bool = False) -> Space:
    sp = Space()
    hp = sp.host()
    main = hp.line("python")
    for i, gid in enumerate((11, 12, 13)):
        stats = {"step_num": i + 1}
        if group:
            stats["group_id"] = gid
        main.event("train", i * 100, 100, **stats)
    launches = hp.line("tf_Compute/1")
    launches.event("ExecutorState::Process", 1, 8)  # TF's graph executor: a TensorFlow trace
    gpu = sp.plane("/device:GPU:0")
    dev = gpu.line("Stream #7(Compute)", line_id=7)
    for c, at, name, start, dur, gid in ((1, 10, "MemcpyH2D", 20, 10, 11),
                                         (2, 30, "kernel_A", 60, 70, 11),
                                         (3, 110, "kernel_B", 140, 90, 12),
                                         (5, 120, "kernel_C", 240, 20, 12),
                                         (4, 210, "kernel_D", 270, 50, 13)):
        lstats, dstats = {}, {}
        if corr:
            lstats["correlation_id"] = dstats["correlation_id"] = c
        if group:
            lstats["group_id"] = dstats["group_id"] = gid
        launches.event("cudaLaunchKernel" if name.startswith("kernel") else "cudaMemcpyAsync",
                       at, 2, **lstats)
        dev.event(name, start, dur, **dstats)
    if steps_line:
        # XProf's derived Steps line (a preprocessed trace): the device's own step per group
        line = gpu.line("Steps", line_id=-559038737)
        for gid, start, dur in ((11, 20, 110), (12, 140, 120), (13, 270, 50)):
            line.event(str(gid), start, dur, group_id=gid)
    return sp


def rows(m):
    d = m.device_steps.set_index("step_num")
    return {k: tuple(round(float(d.loc[k, c]) / MS, 6) if not math.isnan(d.loc[k, c]) else None
                     for c in ("wall_ms", "compute_ms", "h2d_ms", "busy_ms", "span_ms", "idle_ms",
                               "after_host_ms"))
            for k in d.index}


BY_LAUNCH = {1: (100, 70, 10, 80, 110, 30, 30),
             2: (100, 110, 0, 110, 120, 10, 60),
             3: (100, 50, 0, 50, 50, 0, 20)}


@pytest.mark.parametrize("group,corr,how", [(True, True, "group_id"), (True, False, "group_id"),
                                            (False, True, "launch correlation")])
def test_kernels_count_in_the_step_that_launched_them(tmp_path, group, corr, how):
    m = analyze_mode("gpu", [async_gpu_space(group, corr).write(tmp_path / "h.xplane.pb")])
    assert m.ok and m.steps["step_num"].tolist() == [1, 2, 3]
    assert rows(m) == BY_LAUNCH
    assert any(f"device work attributed to steps by {how}" in n for n in m.notes)
    # all device work counted once: 70 + 110 + 50 compute, nothing left out
    assert m.device_steps["compute_ms"].sum() == pytest.approx(230 * MS)
    assert not any("belong to no step" in n for n in m.notes)


def test_without_group_or_correlation_the_time_window_rule_is_named(tmp_path):
    m = analyze_mode("gpu", [async_gpu_space(False, False).write(tmp_path / "h.xplane.pb")])
    assert rows(m) == {1: (100, 40, 10, 50, 100, 50, None),
                       2: (100, 90, 0, 90, 100, 10, None),
                       3: (100, 80, 0, 80, 100, 20, None)}
    assert any("by time window" in n and "land in the next step or in none" in n for n in m.notes)


def test_device_events_of_no_step_are_counted_in_a_note(tmp_path):
    """A kernel whose group is no host step's (e.g. launched before the first marker) is said."""
    sp = async_gpu_space(True, False)
    sp.proto.planes[1].lines[0].events[0].stats[0].int64_value = 99  # MemcpyH2D: group 99
    m = analyze_mode("gpu", [sp.write(tmp_path / "h.xplane.pb")])
    assert rows(m)[1][2] == 0  # the copy is in no step
    assert any("1 device events belong to no step" in n for n in m.notes)


def test_preprocessed_trace_device_steps_lines_keyed_by_the_host_steps_group(tmp_path):
    """A trace XProf preprocessed holds each device's Steps line, keyed by group_id, beside the
    host markers (step_num 1..3, groups 11..13): each device step is the host step of its group."""
    m = analyze_mode("gpu", [async_gpu_space(True, True, steps_line=True)
                             .write(tmp_path / "h.xplane.pb")])
    d = m.device_steps.set_index("step_num")
    assert d["wall_ms"].tolist() == pytest.approx([110 * MS, 120 * MS, 50 * MS])
    assert d["compute_ms"].tolist() == pytest.approx([70 * MS, 110 * MS, 50 * MS])
    assert d["idle_ms"].tolist() == pytest.approx([30 * MS, 10 * MS, 0])
