"""Our own Chrome / Perfetto trace-event export (report.chrome_trace): hand-computed synthetic
traces, the committed real trace checked against XProf's own converter, a strict schema of the
trace-event format, and proper nesting of every track (what a trace viewer needs)."""

from __future__ import annotations

import collections
import gzip
import json
from pathlib import Path

import pytest

from traceinsight import cli, load
from traceinsight.analysis.timeline import pass_analysis
from traceinsight.errors import TraceinsightError
from traceinsight.model import CATEGORIES
from traceinsight.report import chrome_trace
from traceinsight.report.options import TraceOptions

from xspace_builder import Space

DATA = Path(__file__).parent / "data" / "runs"
REAL = sorted((DATA / "conv1d" / "eager" / "host").rglob("*.xplane.pb"))

NAME = {"type": "string"}
INT = {"type": "integer", "minimum": 0}
NUM = {"type": "number", "minimum": 0}
# The trace-event format ("Trace Event Format" doc, JSON Object Format), restricted to what we
# write: complete events (ph X) and metadata events (ph M); nothing else, no unknown keys.
SCHEMA = {
    "type": "object",
    "required": ["traceEvents", "displayTimeUnit"],
    "additionalProperties": False,
    "properties": {
        "displayTimeUnit": {"enum": ["ns", "ms"]},
        "metadata": {"type": "object"},
        "traceEvents": {"type": "array", "items": {"oneOf": [
            {"type": "object", "additionalProperties": False,
             "required": ["ph", "pid", "tid", "name", "ts", "dur", "args"],
             "properties": {"ph": {"const": "X"}, "pid": INT, "tid": INT, "name": NAME,
                            "ts": NUM, "dur": NUM, "args": {"type": "object"}}},
            {"type": "object", "additionalProperties": False,
             "required": ["ph", "pid", "tid", "name", "args"],
             "properties": {"ph": {"const": "M"}, "pid": INT, "tid": INT,
                            "name": {"enum": ["process_name", "process_sort_index", "thread_name",
                                              "thread_sort_index"]},
                            "args": {"type": "object", "minProperties": 1, "maxProperties": 1,
                                     "properties": {"name": NAME, "sort_index": {"type": "integer"}}}}},
        ]}},
    },
}


def check_document(doc: dict) -> None:
    """Schema; every slice has a category; every track properly nested (integer ns, as viewers
    read µs floats back)."""
    import jsonschema
    jsonschema.validate(doc, SCHEMA)
    tracks = collections.defaultdict(list)
    named = {(e["pid"], e["tid"]) for e in doc["traceEvents"] if e["name"] == "thread_name"}
    for e in doc["traceEvents"]:
        if e["ph"] == "X":
            assert (e["pid"], e["tid"]) in named, e
            if not e["name"].startswith("step "):
                assert e["args"]["category"] in CATEGORIES, e
            s = round(e["ts"] * 1000)
            tracks[(e["pid"], e["tid"])].append((s, -(s + round(e["dur"] * 1000))))
    for key, evs in tracks.items():
        stack: list[int] = []
        for s, neg_end in sorted(evs):
            end = -neg_end
            while stack and stack[-1] <= s:
                stack.pop()
            assert not stack or end <= stack[-1], f"track {key}: a slice crosses its parent's end"
            stack.append(end)


def hand_space() -> Space:
    """Two steps on the main thread (times in µs), one worker op; answers worked out by hand:
    step 1 [0, 100): op 20 (the kernel), dispatch 20 (TFE_Py 40 minus the kernel), input 10
    (tf.constant and its _EagerConst), python 50; step 2 [100, 200): op 50 (the function's run), dispatch 30, python 20."""
    sp = Space()
    sp.task_environment()
    h = sp.host()
    main = h.line("python")
    main.event("train", 0, 100, step_num=1, _r=1)
    main.event("TFE_Py_FastPathExecute_C", 10, 40)
    main.event("EagerExecute", 15, 30, eager_op="MatMul", is_func=0)
    main.event("KernelAndDeviceFunc::Run", 20, 20)
    main.event('tf.constant', 60, 10)
    main.event("EagerLocalExecute: _EagerConst", 62, 6)   # a conversion that converts (input)
    main.event("train", 100, 100, step_num=2, _r=1)
    main.event('f "quoted" </script>', 110, 80, tf_function_call="notTraced-nonXla", tracing_count=1)
    main.event("KernelAndDeviceFunc::Run", 125, 50)
    worker = h.line("tf_Compute/1")
    worker.event("model/MatMul:MatMul", 130, 40)
    return sp


@pytest.fixture(scope="module")
def hand(tmp_path_factory):
    path = hand_space().write(tmp_path_factory.mktemp("x") / "h.xplane.pb")
    return load(path)


def _doc(run, select=None) -> dict:
    steps = None if select is None else tuple(select)
    return json.loads(b"".join(chrome_trace.render(run, TraceOptions("h", steps=steps,
                                                                     gzip_level=None))))


def _by_track(doc: dict) -> dict[str, list[dict]]:
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in doc["traceEvents"]
             if e["name"] == "thread_name"}
    out = collections.defaultdict(list)
    for e in doc["traceEvents"]:
        if e["ph"] == "X":
            out[names[(e["pid"], e["tid"])]].append(e)
    return out


def test_hand_computed_trace(hand):
    doc = _doc(hand)
    check_document(doc)
    tracks = _by_track(doc)
    main = {(e["name"], e["ts"]): e for e in tracks["python"]}
    # times in µs from the first event, each event with its category
    assert main[("TFE_Py_FastPathExecute_C", 10)]["dur"] == 40
    assert main[("TFE_Py_FastPathExecute_C", 10)]["args"] == {"category": "dispatch"}
    assert main[("KernelAndDeviceFunc::Run", 20)]["args"]["category"] == "op"
    assert main[("tf.constant", 60)]["args"]["category"] == "input"
    assert main[('f "quoted" </script>', 110)]["dur"] == 80           # names are data, escaped
    assert [e["args"]["category"] for e in tracks["tf_Compute/1"]] == ["op"]
    # the step markers cross the frames around them: their own track
    assert sorted(e["ts"] for e in tracks["python (crossing events)"]) == [0, 100]
    # steps as spans with their split
    steps = {e["name"]: e for e in tracks["steps"]}
    assert (steps["step 1"]["ts"], steps["step 1"]["dur"]) == (0, 100)
    s1 = steps["step 1"]["args"]
    assert (s1["op_ms"], s1["dispatch_ms"], s1["input_ms"], s1["python_ms"]) == \
        pytest.approx((0.020, 0.020, 0.010, 0.050))
    assert steps["step 2"]["args"]["op_ms"] == pytest.approx(0.050)
    # one track per category on the main thread: per step, the time of each track is the hand split
    for step, want in (((0, 100), {"op": 20, "dispatch": 20, "input": 10, "python": 50}),
                       ((100, 200), {"op": 50, "dispatch": 30, "python": 20})):
        got = collections.Counter()
        for c in CATEGORIES:
            for e in tracks.get(f"python · {c}", []):
                lo, hi = max(e["ts"], step[0]), min(e["ts"] + e["dur"], step[1])
                got[c] += max(0, hi - lo)
        assert {k: pytest.approx(v) for k, v in want.items()} == {k: v for k, v in got.items() if v}


def test_selected_steps_only(hand):
    doc = _doc(hand, select=[2])
    check_document(doc)
    tracks = _by_track(doc)
    names = {e["name"] for e in tracks["python"]}
    assert "tf.constant" not in names and 'f "quoted" </script>' in names   # 60-70 is step 1
    assert [e["name"] for e in tracks["steps"]] == ["step 2"]
    # category tracks are clipped to the step: their times add up to its wall time
    total = sum(e["dur"] for t, evs in tracks.items() if " · " in t for e in evs)
    assert total == pytest.approx(100)
    assert doc["metadata"]["traceinsight"]["steps"] == [2]
    with pytest.raises(TraceinsightError, match="no such step"):
        _doc(hand, select=[7])


def test_parse_steps():
    assert chrome_trace.parse_steps("5-7,9") == [5, 6, 7, 9]
    assert chrome_trace.parse_steps(None) is None and chrome_trace.parse_steps("all") is None
    for bad in ("x", "7-5", "1,,2"):
        with pytest.raises(TraceinsightError):
            chrome_trace.parse_steps(bad)


@pytest.mark.skipif(not REAL, reason="committed real run missing")
def test_real_trace_agrees_with_xprof():
    """Every slice XProf's own converter writes for the committed trace is in ours with the same
    name, start and duration to the nanosecond, except the names XProf rewrites (step markers
    become "train N"; ThreadpoolListener Start/Stop pairs become a Region); ours has in addition
    only the zero-length events XProf drops."""
    pytest.importorskip("xprof")
    paths = [str(p) for p in REAL]
    run = load(DATA / "conv1d", use_cache=False)
    tr = pass_analysis(run.modes["eager"], "host")
    table, steps = tr.table, tr.steps.to_pandas()
    ours = json.loads(b"".join(chrome_trace.render(run, TraceOptions("eager", gzip_level=None))))
    check_document(ours)
    xprof = json.loads(chrome_trace.via_xprof(paths))
    rewritten = ("train", "ThreadpoolListener")

    def key(e, t0):
        return (e["name"], round((e["ts"] - t0) * 1000), round(e.get("dur", 0) * 1000))

    x_events = [e for e in xprof["traceEvents"] if e.get("ph") in ("X", "i")]
    x0 = min(e["ts"] for e in x_events if e["name"] == f"train {int(steps['step_num'].iloc[0])}")
    o_events = [e for e in ours["traceEvents"] if e["ph"] == "X" and e["tid"] >= chrome_trace.LINE_TID0]
    o0 = min(e["ts"] for e in o_events if e["name"] == "train")
    xs = collections.Counter(key(e, x0) for e in x_events if not e["name"].startswith(rewritten))
    os_ = collections.Counter(key(e, o0) for e in o_events if not e["name"].startswith(rewritten))
    assert len(xs) > 1000
    assert not xs - os_
    assert all(k[2] == 0 for k in os_ - xs)
    assert len(o_events) == len(table)     # every event of the trace, once


@pytest.mark.skipif(not REAL, reason="committed real run missing")
def test_cli_export_writes_gzip(tmp_path, capsys):
    import shutil
    out = tmp_path / "out"
    # a copy: loading a run caches its analysis in it
    run = shutil.copytree(DATA / "conv1d", tmp_path / "conv1d",
                          ignore=shutil.ignore_patterns(".traceinsight"))
    assert cli.main(["export", str(run), "--mode", "eager", "-o", str(out), "--tables", "none",
                     "--steps", "3-4"]) == 0
    doc = json.loads(gzip.decompress((out / "trace.json.gz").read_bytes()))
    check_document(doc)
    assert sorted(e["name"] for e in doc["traceEvents"] if e["tid"] == chrome_trace.STEPS_TID
                  and e["ph"] == "X") == ["step 3", "step 4"]
    assert cli.main(["export", str(run), "--mode", "eager", "-o", str(out), "--tables", "none",
                     "--no-gzip", "--trace", "python"]) == 0
    check_document(json.loads((out / "trace.json").read_text()))
    capsys.readouterr()
    assert cli.main(["export", str(run), "--mode", "eager", "-o", str(out), "--steps", "9999"]) == 2
    assert capsys.readouterr().err.startswith("traceinsight: error: --steps: no such step")
    assert cli.main(["export", str(run), "--mode", "eager", "-o", str(out), "--steps", "a"]) == 2


def test_number_formatting_against_python():
    """The numpy digit writer against Python's own formatting: µs with 3 decimals, right-aligned."""
    import numpy as np
    rng = np.random.default_rng(7)
    ns = np.concatenate([[0, 1, 9, 10, 999, 1000, 1001, 99_999, 100_000, 10**13 - 1],
                         rng.integers(0, 10**13, 500)]).astype(np.int64)
    for width in range(1, 11):
        vals = ns[ns // 1000 < 10**width]
        arr = np.zeros((len(vals), width + 4), dtype=np.uint8)
        chrome_trace._put_us(arr, 0, width, vals)
        got = [bytes(r).decode() for r in arr]
        want = [f"{v // 1000:>{width}d}.{v % 1000:03d}" for v in vals.tolist()]
        assert got == want
