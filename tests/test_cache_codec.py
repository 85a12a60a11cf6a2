"""The analysis cache's one codec (``analysis.codec``, walking the result's dataclass fields by
their type hints): every analysed mode of the committed real runs, and a hand-made mode with every
optional part filled, read back equal field by field; a file that is stale, damaged or not JSON
at all is ignored (never unpickled, never evaluated) and the mode analysed again."""

from __future__ import annotations

import dataclasses
import json
import math
import pickle
import shutil
import typing
from pathlib import Path

import numpy as np
import pytest

import traceinsight
from traceinsight.analysis import cache, codec
from traceinsight.columns import Columns, same_value, text
from traceinsight.modekind import mode_kind
from traceinsight.model import (
    CATEGORIES,
    TABLES,
    CompileCall,
    CompileEstimate,
    CompileKind,
    ModeResult,
    Table,
    Timing,
    TracerEvents,
)
from traceinsight.stepsource import StepSource

RUNS = Path(__file__).parent / "data" / "runs"
KEY = ["k", 1]


def stored_fields() -> list[str]:
    return [f.name for f in dataclasses.fields(ModeResult)
            if f.init and f.compare and f.name not in cache.NOT_STORED]


def across(mode: ModeResult) -> ModeResult | None:
    """``mode`` through the cache's JSON, as a file holds it (no NaN literal: strict JSON)."""
    text_ = json.dumps(cache.to_dict(mode, KEY), allow_nan=False)
    return cache.from_dict(json.loads(text_), KEY, mode.timing)


def assert_same_fields(back: ModeResult, mode: ModeResult, but: tuple[str, ...] = ()) -> None:
    for name in stored_fields():
        if name not in but:
            assert same_value(back.__dict__[name], mode.__dict__[name]), name
    assert back.kind == mode_kind(mode.name)         # from the name (the loader sets run.json's)
    if mode.known_boot_medians is not None:
        assert np.array_equal(back.known_boot_medians, mode.known_boot_medians)


def test_the_frames_are_the_models_tables():
    hints = typing.get_type_hints(ModeResult)
    assert cache.FRAMES == TABLES == tuple(n for n, h in hints.items() if h is Table)
    assert set(TABLES) <= set(stored_fields())


@pytest.mark.parametrize("run_name", sorted(p.name for p in RUNS.iterdir() if p.is_dir()))
def test_every_mode_of_a_real_run_reads_back_field_by_field(tmp_path, run_name):
    path = shutil.copytree(RUNS / run_name, tmp_path / run_name,
                           ignore=shutil.ignore_patterns(".traceinsight"))
    run = traceinsight.load(path, use_cache=False)
    for mode in run.modes.values():
        mode.boot_medians   # noqa: B018  (resampled, so the cache keeps them too)
        back = across(mode)
        assert back is not None, mode.name
        assert_same_fields(back, mode)
        assert back.timing is mode.timing                 # given, not stored
    # and through the files: a second load reads every mode from the cache, equal to the first
    first = traceinsight.load(path)
    files = sorted((path / ".traceinsight").rglob("*.json"))
    assert len(files) == sum(m.ok for m in first.modes.values())
    again = traceinsight.load(path)
    for name, mode in again.modes.items():
        assert_same_fields(mode, first.modes[name])
        assert mode == first.modes[name], name


def hand_made() -> ModeResult:
    """Every optional part filled, with NaN, infinities, -0.0, text and booleans in its tables."""
    steps = Columns({"step_num": np.array([0, 1], dtype=np.int64),
                     "wall_ms": np.array([np.nan, -0.0]), "first": np.array([True, False]),
                     "note": text(["α\n", None])})
    return ModeResult(
        name="train_on_batch-xla", status="ok", error=None,
        timing=Timing(steps_s=np.array([0.1, 1 / 3])), steps=steps,
        breakdown=Columns({"median": np.array([1.5, np.inf])}, index=["op", "total"]),
        first_step={c: (np.nan if c == "compile" else 0.1 * i) for i, c in enumerate(CATEGORIES)},
        step_rule="by hand", step_source=StepSource.DEVICE_GROUPS,
        profile_options={"host": {"requested": {"host_tracer_level": 2}, "ok": False}},
        notes=("a note", "ünïcode"), trace_paths=("a/b.xplane.pb",), host_events_recorded=False,
        compile_estimate=CompileEstimate(CompileKind.NOT_SEPARABLE, (
            CompileCall("f", None, 12.5, None, None), CompileCall("g", 3, 1 / 3, 0.25, 1 / 12))),
        tracer_events=TracerEvents({c: float(i) for i, c in enumerate(CATEGORIES)}, 2.0))


def test_a_mode_with_every_part_reads_back_field_by_field():
    mode = hand_made()
    back = across(mode)
    assert back is not None
    assert_same_fields(back, mode)
    assert back.timing is mode.timing
    assert back.compile_estimate.kind is CompileKind.NOT_SEPARABLE
    assert back.step_source is StepSource.DEVICE_GROUPS
    assert np.isnan(back.first_step["compile"]) and back.table("steps")["note"][1] is None


def test_timings_read_back_to_the_bit():
    t = Timing(steps_s=np.array([0.1, -0.0, 5e-324]), first_step_s=float("inf"),
               rounds=(np.array([np.nan]),), memory={"peak_rss_bytes": 10, "basis": "phase"})
    back = cache.timing_from_dict(json.loads(json.dumps(cache.timing_to_dict(t), allow_nan=False)))
    assert back == t and np.signbit(back.steps_s[1])


def damaged(how: str) -> dict:
    data = json.loads(json.dumps(cache.to_dict(hand_made(), KEY)))
    if how == "missing-field":
        del data["notes"]
    elif how == "unknown-enum":
        data["compile_estimate"]["kind"] = "guessed"
    elif how == "float-as-code":           # a string in a float field is never evaluated
        data["compile_estimate"]["calls"][0]["first_op_ms"] = "__import__('os').getcwd()"
    elif how == "bool-for-int":
        data["compile_estimate"]["calls"][1]["step_num"] = True
    elif how == "tuple-as-text":
        data["notes"] = "a note"
    elif how == "category-missing":
        del data["tracer_events"]["per_step"]["op"]
    elif how == "negative-count":
        data["tracer_events"]["per_step"]["op"] = -1.0
    elif how == "bad-status":
        data["status"] = "fine"
    elif how == "ragged-table":
        data["steps"]["values"].pop()
    elif how == "object-in-text-column":
        data["steps"]["values"][3] = [{"x": 1}, None]
    return data


@pytest.mark.parametrize("how", ["missing-field", "unknown-enum", "float-as-code", "bool-for-int",
                                 "tuple-as-text", "category-missing", "negative-count",
                                 "bad-status", "ragged-table", "object-in-text-column"])
def test_a_damaged_entry_is_not_read(how):
    assert cache.from_dict(damaged(how), KEY, None) is None


def test_another_key_or_format_is_stale():
    data = json.loads(json.dumps(cache.to_dict(hand_made(), KEY)))
    assert cache.from_dict(data, KEY, None) is not None
    assert cache.from_dict(data, ["other"], None) is None
    assert cache.from_dict(dict(data, format="0" * 16), KEY, None) is None


class Marker:
    """Unpickling this would write a file: the cache must never do it."""
    path = ""

    def __reduce__(self):
        return (Path(self.path).write_text, ("unpickled",))


@pytest.mark.parametrize("how", ["pickle", "truncated", "other-format"])
def test_a_cache_file_that_is_not_ours_is_ignored_and_rebuilt(tmp_path, how):
    path = shutil.copytree(RUNS / "retracing", tmp_path / "retracing",
                           ignore=shutil.ignore_patterns(".traceinsight"))
    fresh = traceinsight.load(path)                     # analysed, the cache written
    f = cache.cache_path(path, "eager")
    assert f.is_file()
    marker = tmp_path / "unpickled.txt"
    if how == "pickle":
        Marker.path = str(marker)
        f.write_bytes(pickle.dumps(Marker()))
    elif how == "truncated":
        f.write_bytes(f.read_bytes()[:1000])
    else:
        data = json.loads(f.read_text())
        f.write_text(json.dumps(dict(data, format="0" * 16)))
    again = traceinsight.load(path)
    assert not marker.exists()
    eager = again.modes["eager"]
    # analysed again, the same mode; a stale format says nothing, a damaged file says so
    assert_same_fields(eager, fresh.modes["eager"], but=("notes",))
    said = "analysis cache not used (not readable JSON): analysed again"
    assert tuple(n for n in eager.notes if n != said) == fresh.modes["eager"].notes
    assert (said in eager.notes) == (how != "other-format")
    assert json.loads(f.read_text())["format"] == cache.FORMAT      # rewritten by that load


@dataclasses.dataclass(frozen=True)
class Point:
    x: float
    tags: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class Shape:
    points: tuple[Point, ...]
    kind: CompileKind | None = None


def test_any_dataclass_of_hinted_fields_round_trips_and_its_schema_names_its_fields():
    s = Shape((Point(float("nan"), ("a",)), Point(-0.0)), CompileKind.DERIVED)
    back = codec.decode(json.loads(json.dumps(codec.encode(s, Shape), allow_nan=False)), Shape)
    assert back.kind is CompileKind.DERIVED and back.points[1] == Point(-0.0)
    assert np.isnan(back.points[0].x) and back.points[0].tags == ("a",)
    # the same class name with one field more, or one field less stored: another schema
    grown = dataclasses.make_dataclass("Shape", [("points", tuple[Point, ...]),
                                                 ("kind", CompileKind | None, None),
                                                 ("area", float, 0.0)], frozen=True)
    assert len({codec.schema(Shape), codec.schema(grown), codec.schema(Shape, ("kind",))}) == 3
    with pytest.raises(TypeError, match="no codec"):
        codec.to_json(1, int | str)       # a hint the codec cannot say is refused, not guessed
    with pytest.raises(codec.CodecError):
        codec.decode({"points": [{"x": 1.0}]}, Shape)      # a field missing: not what it wrote


def test_an_array_of_numbers_reads_back_every_bit_and_nothing_else():
    """``np.ndarray`` hints (the bootstrap medians): numbers read at once, the same bits as one by
    one; a bool, a number as text or null is refused, the non-finite spellings read."""
    values = [0.1, 1, -0.0, 2**53 + 1, 1e308, 5e-324, 3]
    a = codec.from_json(values, np.ndarray)
    assert a.tobytes() == np.array([float(v) for v in values]).tobytes()
    assert codec.from_json(["nan", "inf", 1.5], np.ndarray)[1:].tolist() == [math.inf, 1.5]
    for bad in ([1.0, True], [1.0, "1.5"], [None, 1.0], [[1.0]]):
        with pytest.raises(codec.CodecError):
            codec.from_json(bad, np.ndarray)
