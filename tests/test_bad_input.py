"""Bad input: one clear line on stderr, exit status 2, never a traceback."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

import traceinsight
from traceinsight.cli import main
from traceinsight.errors import TraceinsightError

from xspace_builder import Space, session_path

DATA_JAX = Path(__file__).parent / "data" / "jax"


@pytest.fixture(scope="module")
def good_trace(tmp_path_factory):
    """A small real trace (retracing sample, eager host pass)."""
    from conftest import RUNS
    src = sorted((RUNS / "retracing" / "eager" / "host").rglob("*.xplane.pb"))[0]
    dst = tmp_path_factory.mktemp("good") / "good.xplane.pb"
    shutil.copy(src, dst)
    return dst


def run_cli(capsys, *argv):
    code = main(["analyze", *map(str, argv)])
    err = capsys.readouterr().err
    return code, err


def assert_one_line_error(code, err):
    assert code == 2
    lines = [ln for ln in err.strip().splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("traceinsight: error:")
    assert "Traceback" not in err


def test_good_trace_is_fine(capsys, good_trace):
    assert main(["analyze", str(good_trace)]) == 0


def test_missing_path(capsys, tmp_path):
    assert_one_line_error(*run_cli(capsys, tmp_path / "nope.xplane.pb"))


def test_empty_file(capsys, tmp_path):
    p = tmp_path / "empty.xplane.pb"
    p.write_bytes(b"")
    code, err = run_cli(capsys, p)
    assert_one_line_error(code, err)
    assert "empty" in err


def test_not_an_xspace(capsys, tmp_path):
    p = tmp_path / "text.xplane.pb"
    p.write_text("this is not a protobuf, just some text\n" * 10)
    assert_one_line_error(*run_cli(capsys, p))


def test_truncated(capsys, tmp_path, good_trace):
    p = tmp_path / "trunc.xplane.pb"
    p.write_bytes(good_trace.read_bytes()[: len(good_trace.read_bytes()) // 2])
    assert_one_line_error(*run_cli(capsys, p))


def test_folder_without_traces(capsys, tmp_path):
    (tmp_path / "plugins" / "profile" / "s").mkdir(parents=True)
    (tmp_path / "plugins" / "profile" / "s" / "ALL_HOSTS.op_stats_v2.pb").write_bytes(b"x")
    code, err = run_cli(capsys, tmp_path)
    assert_one_line_error(code, err)
    assert "no *.xplane.pb" in err


def test_trace_of_another_framework_is_refused(capsys, tmp_path):
    """No TF event, no JAX event, no device work (a PyTorch-like host trace): one line, exit 2.
    (A JAX trace is analysed: tests/test_jax_traces.py.)"""
    sp = Space()
    host = sp.host().line("python")
    host.event("aten::matmul", 0, 100)
    host.event("aten::mm", 10, 50)
    p = sp.write(tmp_path / "torch.xplane.pb")
    code, err = run_cli(capsys, p)
    assert_one_line_error(code, err)
    assert "no TensorFlow or JAX events and no device work" in err


def test_jax_like_trace_is_analysed(capsys, tmp_path):
    sp = Space()
    host = sp.host().line("python")
    host.event("PjitFunction(f)", 0, 100)
    host.event("CpuExecutable::ExecuteAsyncOnStream", 10, 50)
    tpu = sp.plane("/device:TPU:0").line("XLA Ops")
    tpu.event("fusion.1", 0, 10, hlo_op="fusion.1")
    p = sp.write(tmp_path / "jax.xplane.pb")
    code, _ = run_cli(capsys, p)
    assert code == 0


def test_not_a_trace_file_name(capsys, tmp_path):
    p = tmp_path / "notes.txt"
    p.write_text("hello")
    assert_one_line_error(*run_cli(capsys, p))


def test_bad_run_json(capsys, tmp_path):
    (tmp_path / "run.json").write_text("{not json")
    assert_one_line_error(*run_cli(capsys, tmp_path))


def test_one_corrupt_mode_does_not_lose_the_others(tmp_path):
    """A run whose one mode's trace is damaged still shows the other modes."""
    from conftest import RUNS
    run = tmp_path / "run"
    shutil.copytree(RUNS / "retracing", run)
    victim = sorted((run / "function" / "host").rglob("*.xplane.pb"))[0]
    victim.write_bytes(victim.read_bytes()[:100])
    loaded = traceinsight.load(run)
    assert loaded.modes["eager"].ok
    assert loaded.modes["function"].status == "failed"
    assert "xplane.pb" in loaded.modes["function"].error


def mutate(data: bytes, rng: np.random.Generator) -> bytes:
    b = bytearray(data)
    kind = int(rng.integers(0, 5))
    if kind == 0:  # truncate
        return bytes(b[: int(rng.integers(0, len(b)))])
    if kind == 1:  # flip bits
        for _ in range(int(rng.integers(1, 20))):
            i = int(rng.integers(0, len(b)))
            b[i] ^= 1 << int(rng.integers(0, 8))
        return bytes(b)
    if kind == 2:  # overwrite a run of bytes with random ones
        i = int(rng.integers(0, len(b)))
        n = int(rng.integers(1, 64))
        b[i:i + n] = rng.integers(0, 256, size=min(n, len(b) - i), dtype=np.uint8).tobytes()
        return bytes(b)
    if kind == 3:  # delete a run
        i = int(rng.integers(0, len(b)))
        del b[i:i + int(rng.integers(1, 64))]
        return bytes(b)
    i = int(rng.integers(0, len(b)))  # insert random bytes
    b[i:i] = rng.integers(0, 256, size=int(rng.integers(1, 32)), dtype=np.uint8).tobytes()
    return bytes(b)


def mutate_line(data: bytes, rng: np.random.Generator) -> bytes:
    """Damage the inside of one thread line, keeping the file's outer structure valid, so that the
    C decoder (not protobuf) meets the damage: flip bits, or overwrite a run with random bytes or
    with a huge varint (extreme times, ids and lengths)."""
    from traceinsight.analysis import native
    spans = [sp for _, lines in native.split_space(data) for sp in lines if sp[1]]
    off, n = spans[int(rng.integers(0, len(spans)))]
    b = bytearray(data)
    i = off + int(rng.integers(0, n))
    kind = int(rng.integers(0, 3))
    if kind == 0:
        for _ in range(int(rng.integers(1, 8))):
            j = off + int(rng.integers(0, n))
            b[j] ^= 1 << int(rng.integers(0, 8))
    elif kind == 1:
        k = min(int(rng.integers(1, 16)), off + n - i)
        b[i:i + k] = rng.integers(0, 256, size=k, dtype=np.uint8).tobytes()
    else:  # a 10-byte varint of a large value, where the bytes fit
        v = int(rng.integers(1 << 40, 1 << 63, dtype=np.uint64))
        enc = bytearray()
        while True:
            enc.append((v & 0x7F) | (0x80 if v >> 7 else 0))
            v >>= 7
            if not v:
                break
        k = min(len(enc), off + n - i)
        b[i:i + k] = enc[:k]
    return bytes(b)


def small_trace_bytes() -> bytes:
    sp = Space()
    sp.task_environment()
    main_line = sp.host().line("python")
    for i in range(4):
        t0 = i * 100
        main_line.event("train", t0, 100, step_num=i)
        main_line.event("f", t0 + 5, 90, tf_function_call="notTraced-nonXla", tracing_count=1)
        main_line.event("tf.constant", t0 + 10, 10)
        main_line.event("KernelAndDeviceFunc::Run", t0 + 30, 50)
    sp.host().line("tf_Compute/1").event("a/b:MatMul", 35, 20)
    return sp.bytes()


@pytest.mark.parametrize("source", ["synthetic", "real"])
def test_fuzz_mutated_traces_never_crash(tmp_path, good_trace, source):
    """300 + 300 mutated traces (half damaged anywhere, half inside a thread line, where the C
    decoder reads): each loads or is refused with TraceinsightError, nothing else."""
    data = small_trace_bytes() if source == "synthetic" else good_trace.read_bytes()
    rng = np.random.default_rng(1234 if source == "synthetic" else 4321)
    p = tmp_path / "m.xplane.pb"
    outcomes = {"loaded": 0, "refused": 0}
    for k in range(300):
        p.write_bytes(mutate(data, rng) if k % 2 else mutate_line(data, rng))
        try:
            run = traceinsight.load(p)
            for m in run.ok_modes():
                s = m.steps
                if len(s) and m.host_events_recorded:  # whatever survives is fully attributed
                    np.testing.assert_allclose(
                        s[["op", "dispatch", "tracing", "compile", "input", "python", "other"]]
                        .sum(axis=1), s["wall_ms"], rtol=0.01, atol=1e-9)
            outcomes["loaded"] += 1
        except TraceinsightError as e:
            assert "\n" not in str(e)
            outcomes["refused"] += 1
    assert outcomes["loaded"] + outcomes["refused"] == 300
    assert outcomes["refused"] > 0


def test_session_path_layout_loads(tmp_path):
    sp = Space()
    line = sp.host().line("python")
    line.event("train", 0, 10, step_num=1)
    line.event("TFE_Py_FastPathExecute_C", 1, 5)
    sp.write(session_path(tmp_path, "runA"))
    run = traceinsight.load(tmp_path)
    assert list(run.modes) == ["runA"]


# Found by fuzzing the C decoder under UBSan: well-formed traces with extreme times.
EXTREME_TIMES = {
    # one event with offset_ps = duration_ps = 2**62: start + duration overflows int64
    "offset_plus_duration": "0a3512105461736b20456e7669726f6e6d656e742a17080112130801120f70726f66"
    "696c655f6f7074696f6e73320808013204100318010a44080112092f686f73743a4350551a2a0801120670797468"
    "6f6e2216080110808080808080808040188080808080808080405a06707974686f6e220908011205080112016"
    "6",
    # two events 2**63 ps apart: window arithmetic would overflow
    "events_far_apart": "0a3512105461736b20456e7669726f6e6d656e742a17080112130801120f70726f66696c"
    "655f6f7074696f6e73320808013204100318010a51080112092f686f73743a4350551a3708011206707974686f6e"
    "221108011080d39dfbffffffffbf0118c0843d221008011080ade284808080804018c0843d5a06707974686f6e22"
    "09080112050801120166",
    # two lines whose timestamps are 2**62 ns apart
    "line_timestamps_far_apart": "0a3512105461736b20456e7669726f6e6d656e742a17080112130801120f7072"
    "6f66696c655f6f7074696f6e73320808013204100318010a67080112092f686f73743a4350551a1c080112067079"
    "74686f6e22080801100018c0843d5a06707974686f6e1a24080212056f746865721880808080808080804022080"
    "802100018c0843d5a056f7468657222090802120508021201672209080112050801120166",
}


@pytest.mark.parametrize("case", sorted(EXTREME_TIMES))
def test_extreme_times_are_refused_in_one_line(capsys, tmp_path, case):
    p = tmp_path / "x.xplane.pb"
    p.write_bytes(bytes.fromhex(EXTREME_TIMES[case]))
    assert_one_line_error(*run_cli(capsys, p))


# ---------------------------------------------------------- escape codes on every surface
# Strings from a run folder or a trace are data: a mode name, an error, an environment field, a
# trace's file name holding ESC, BEL, OSC 52 (writes the clipboard), OSC 0 (renames the window),
# RLO (turns text around) or a newline is shown escaped, and an error is always one line.
HOSTILE = "\x1b]52;c;cm0gLXJmIH4=\x07\x1b]0;pwned\x07\u202eevil\nline2\r\x1b[2J"
RAW = ("\x1b", "\x07", "\u202e", "\r")


def hostile_run(tmp_path):
    import json

    from test_runfolder_fuzz import GOOD_RUN, GOOD_TIMINGS, tiny_trace
    run = tmp_path / "run"
    manifest = json.loads(json.dumps(GOOD_RUN))
    manifest["modes"] = {HOSTILE: {"dir": "eager", "status": "ok"},
                         "function": {"dir": "function", "status": "failed", "error": HOSTILE}}
    manifest["environment"] = {"tensorflow": HOSTILE, "keras": HOSTILE, "cores": HOSTILE}
    manifest["workload"]["path"] = f"/x/{HOSTILE}.py"
    for mode in ("eager", "function"):
        tiny_trace(run / mode / "host" / "plugins" / "profile" / "s" / "h.xplane.pb")
        (run / mode / "timings.json").write_text(json.dumps(GOOD_TIMINGS))
    (run / "run.json").write_text(json.dumps(manifest))
    return run


def assert_inert(text: str, where: str) -> None:
    for c in RAW:
        assert c not in text, (where, c, text[:400])


@pytest.mark.parametrize("argv", [
    ["analyze", "{run}"], ["report", "{run}", "--format", "md"],
    ["report", "{run}", "--format", "html"], ["report", "{run}", "--format", "json"],
    ["export", "{run}", "--tables", "csv", "-o", "{tmp}/fleet"],
    ["export", "{run}", "--mode", HOSTILE, "--trace", "none", "-o", "{tmp}/mode"],
])
def test_hostile_strings_are_escaped_in_every_output(tmp_path, capsys, argv):
    run = hostile_run(tmp_path)
    code = main([a.format(run=run, tmp=tmp_path) for a in argv])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert_inert(out, "stdout")
    assert_inert(err, "stderr")
    for f in sorted(tmp_path.rglob("*.csv")):
        text = f.read_text()
        assert_inert(text, f.name)
        assert "\\x1b]52" in text or f.name != "modes.csv"   # shown, escaped


@pytest.mark.parametrize("argv", [
    ["analyze", "{run}", "--mode", "nope\x1b]0;x\x07"],
    ["diff", "{run}", "--modes", f"{HOSTILE},nope"],
    ["diff", "{run}", "--modes", "nope,x"],
    ["export", "{run}", "--mode", "nope"],
    ["export", "{run}", "--mode", "function"],
])
def test_error_lines_naming_hostile_modes_are_one_inert_line(tmp_path, capsys, argv):
    run = hostile_run(tmp_path)
    code = main([a.format(run=run) for a in argv])
    err = capsys.readouterr().err
    assert_one_line_error(code, err)
    assert_inert(err, "error line")


def test_schema_error_field_path_and_corrupt_trace_paths_are_escaped(tmp_path, capsys):
    import json
    run = hostile_run(tmp_path)
    manifest = json.loads((run / "run.json").read_text())
    manifest["modes"][HOSTILE]["status"] = 5     # the field path names the mode
    (run / "run.json").write_text(json.dumps(manifest))
    code, err = run_cli(capsys, run)
    assert_one_line_error(code, err)
    assert_inert(err, "schema error")
    bad = tmp_path / f"{HOSTILE}.xplane.pb"
    bad.write_bytes(b"\x0a\xff\xff\xff")
    code, err = run_cli(capsys, bad)
    assert_one_line_error(code, err)
    assert_inert(err, "corrupt trace")


def test_the_viewer_header_escapes_the_environment(tmp_path):
    from traceinsight.tui.overview import run_title
    run = traceinsight.load(hostile_run(tmp_path))
    title = run_title(run).plain
    assert_inert(title, "header")
    assert "\\x1b]52" in title and "\n" not in title


def test_the_viewer_shows_a_hostile_run_inert(tmp_path):
    """Every widget of the overview and of a mode's screen, rendered: no raw escape code."""
    import asyncio

    from textual.widgets import DataTable

    from traceinsight.tui import get_app

    from tui_runs import settle
    run = traceinsight.load(hostile_run(tmp_path))

    def text_of(app) -> str:
        strips = app.screen._compositor.render_strips()
        return "\n".join("".join(seg.text for seg in strip) for strip in strips)

    async def go():
        app = get_app(run)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            shown = [text_of(app)]
            app.screen.query_one(DataTable).focus()
            await pilot.press("enter")
            await settle(pilot)
            shown.append(text_of(app))
            return shown

    shown = asyncio.run(go())
    assert len(shown) == 2
    for text in shown:
        assert_inert(text, "viewer")
    assert "\\x1b]52" in shown[0]


@pytest.mark.parametrize("output", [
    b"Welcome to the cluster!\nnot a version\n",     # a wrapper's banner, no version
    b"\xff\xfe3.\x80\n",                             # not UTF-8
    b"3.",                                           # a line cut short
    b"",                                             # nothing at all
    b"3.11.7\n",                                     # three parts: not what we asked for
])
def test_capture_python_with_odd_version_output_is_one_line(capsys, tmp_path, output):
    """``capture --python PATH`` whose version output is not ``X.Y``: one line, exit 2."""
    fake = tmp_path / "python"
    (tmp_path / "out.bin").write_bytes(output)
    fake.write_text(f"#!/bin/sh\ncat {tmp_path / 'out.bin'}\n")
    fake.chmod(0o755)
    model = tmp_path / "model.py"
    model.write_text("def step(x):\n    return x\n\ndef inputs():\n    return (1.0,)\n")
    code = main(["capture", str(model), "--python", str(fake), "--out", str(tmp_path / "runs")])
    assert_one_line_error(code, capsys.readouterr().err)


def test_capture_python_banner_before_the_version_is_accepted(tmp_path):
    """A wrapper that prints a banner first: the version is its output's last line."""
    from traceinsight.capture import environment
    fake = tmp_path / "python"
    fake.write_text(f"#!/bin/sh\necho 'module load python'\nexec {sys.executable} \"$@\"\n")
    fake.chmod(0o755)
    try:
        environment.set_workload_python(str(fake))
        assert environment.workload_python == str(fake)
    finally:
        environment.set_workload_python(None)


# ----------------------------------------------------------------------------- device-only traces

def _device_space(name: str):
    from traceinsight.xplane import XSpace
    space = XSpace()
    space.ParseFromString((DATA_JAX / name).read_bytes())
    return space


def _string_device_stats(space) -> None:
    for plane in space.planes:
        if plane.name.startswith("/device:"):
            names = {k: v.name for k, v in plane.stat_metadata.items()}
            for st in plane.stats:
                if names.get(st.metadata_id) in ("memory_size", "clock_rate", "core_count",
                                                  "compute_cap_major"):
                    st.str_value = "lots"


def _negative_offsets(space) -> None:
    plane = next(p for p in space.planes if p.name.startswith("/device:") and p.lines)
    for ev in plane.lines[0].events[:2]:
        ev.offset_ps = -1


def _tpu_duration_min(space) -> None:
    for plane in space.planes:
        ids = {k for k, v in plane.stat_metadata.items() if v.name == "device_duration_ps"}
        for line in plane.lines:
            for ev in line.events:
                for st in ev.stats:
                    if st.metadata_id in ids:
                        st.int64_value = -2**63
                        return


def test_device_stats_of_another_type_are_left_out(capsys, tmp_path):
    space = _device_space("jax08_gemm.xplane.pb")
    _string_device_stats(space)
    path = tmp_path / "s.xplane.pb"
    path.write_bytes(space.SerializeToString())
    code, err = run_cli(capsys, path)
    assert code == 0, err
    mode = next(iter(traceinsight.load(path, use_cache=False).modes.values()))
    assert not any("lots" in n for n in mode.notes)


def test_duplicated_device_planes_are_read_once(tmp_path):
    space = _device_space("jax08_gemm.xplane.pb")
    for plane in [p for p in space.planes if p.name.startswith("/device:")]:
        space.planes.add().CopyFrom(plane)
    path = tmp_path / "d.xplane.pb"
    path.write_bytes(space.SerializeToString())
    once = next(iter(traceinsight.load(DATA_JAX / "jax08_gemm.xplane.pb", use_cache=False)
                     .modes.values()))
    twice = next(iter(traceinsight.load(path, use_cache=False).modes.values()))
    assert twice.device_steps["busy_ms"].sum() == once.device_steps["busy_ms"].sum()
    assert any(n.startswith("devices: 8 × ") for n in twice.notes)
    assert any("plane(s) twice, read once" in n for n in twice.notes)


@pytest.mark.parametrize("name, mutate", [("jax08_gemm.xplane.pb", _negative_offsets),
                                          ("tpu_inference_2.xplane.pb", _tpu_duration_min)])
def test_negative_device_times_are_refused_in_one_line(capsys, tmp_path, name, mutate):
    """A negative event offset or TPU device duration is refused, as a negative duration is."""
    space = _device_space(name)
    mutate(space)
    path = tmp_path / "n.xplane.pb"
    path.write_bytes(space.SerializeToString())
    code, err = run_cli(capsys, path)
    assert_one_line_error(code, err)
    assert "corrupt trace (negative" in err


def test_hlo_protos_beyond_the_memory_left_are_refused_in_one_line(capsys, monkeypatch):
    """The HLO path parses the whole XSpace again: refused before it would run out of memory."""
    from traceinsight.analysis import events, hlo_protos
    real = events.available_memory
    size = (DATA_JAX / "tpu_inference_2.xplane.pb").stat().st_size
    calls = []

    def memory():   # enough for the event table's pre-check, not for the HLO protos' parse
        calls.append(1)
        return size * (events.MEMORY_PER_TRACE_BYTE + 1) if len(calls) == 1 else \
            size * hlo_protos.PARSE_PER_TRACE_BYTE - 1
    monkeypatch.setattr(events, "available_memory", memory)
    hlo_protos._HLO_CACHE.clear()
    code, err = run_cli(capsys, DATA_JAX / "tpu_inference_2.xplane.pb")
    monkeypatch.setattr(events, "available_memory", real)
    assert code == 2 and "HLO protos" in err and "Traceback" not in err
