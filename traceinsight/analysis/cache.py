"""A cache of analysed modes inside a run folder, so reopening a run (view, report) skips the
trace analysis. JSON only (never pickle): ``<run>/.traceinsight/analysis-v<N>/<mode dir>.json``,
valid while the analysis version and every input file's size and mtime are unchanged.

Tables are stored column by column with their dtype, and read back as the same ``Columns`` the
analysis made (no pandas: ``traceinsight analyze`` of a run folder never imports it). The
analysis processes of ``analysis.parallel`` send their results in this form too."""

from __future__ import annotations

import dataclasses
import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from traceinsight.columns import Columns, text
from traceinsight.model import (
    CATEGORIES,
    Calibration,
    CompileCall,
    CompileEstimate,
    CompileKind,
    ModeResult,
    Timing,
    TracerEvents,
)
from traceinsight.resample import BOOTSTRAP_SAMPLES
from traceinsight.runfolder import atomic_write_json
from traceinsight.stepsource import StepSource

# Bump when the analysis changes what it computes: old caches are then ignored. The key also holds
# a digest of the analysis source (``source_digest``), so a change nobody bumped for still counts.
# 5: tables as typed columns. 7: the tf.data stage table. 8: the profiler's events per step.
# 9: older TF's kernel runs, one-call steps, compile not separable.
ANALYSIS_VERSION = 9


def source_digest() -> str:
    """sha256 of the analysis package's source files, Python and C (the code the cached results
    came from)."""
    import hashlib
    global _DIGEST
    if _DIGEST is None:
        h = hashlib.sha256()
        here = Path(__file__).parent
        for f in sorted([*here.glob("*.py"), *here.glob("*.c")]):
            h.update(f.name.encode())
            h.update(f.read_bytes())
        _DIGEST = h.hexdigest()[:16]
    return _DIGEST


_DIGEST: str | None = None
FRAMES = ("steps", "breakdown", "ops", "retraces", "hotspots", "other", "device_steps", "devices",
          "kernels", "stages", "memory", "layers")


def cache_path(run: Path, mode_folder: str) -> Path:
    return Path(run) / ".traceinsight" / f"analysis-v{ANALYSIS_VERSION}" / f"{mode_folder}.json"


def fingerprint(files: list[Path]) -> list[list]:
    out = []
    for f in files:
        try:
            st = Path(f).stat()
            out.append([str(f), st.st_size, st.st_mtime_ns])
        except OSError:
            out.append([str(f), None, None])
    return out


_DTYPES = {"f": "float64", "i": "int64", "u": "int64", "b": "bool"}


def _table_to_json(t: Columns) -> dict:
    """Column names, dtypes ("float64", "int64", "bool" or "object"), row labels and the values
    column by column, as plain JSON values; floats keep every bit (Python's repr), NaN and
    infinities become null."""
    names = t.columns
    return {"columns": names, "dtypes": [_DTYPES.get(t[c].dtype.kind, "object") for c in names],
            "index": None if t.index is None else _clean(t.index),
            "values": [_clean(t[c].tolist()) for c in names]}


def _table_from_json(d: dict) -> Columns:
    cols: dict[str, np.ndarray] = {}
    for name, dtype, values in zip(d["columns"], d["dtypes"], d["values"], strict=True):
        if dtype == "float64":
            cols[name] = np.array([math.nan if v is None else v for v in values], dtype=float)
        elif dtype in ("int64", "bool"):
            cols[name] = np.array(values, dtype=dtype)
        elif dtype == "object":
            if not all(v is None or isinstance(v, (str, int, float)) for v in values):
                raise ValueError("a text column holds a list or an object")
            cols[name] = text(values)
        else:
            raise ValueError(f"unknown column dtype {dtype!r}")
    return Columns(cols, index=d.get("index"))


def _clean(o: Any) -> Any:
    if isinstance(o, dict):
        return {str(k): _clean(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_clean(v) for v in o]
    if isinstance(o, (bool, np.bool_)):
        return bool(o)
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating, float)):
        return None if not math.isfinite(float(o)) else float(o)
    if isinstance(o, np.ndarray):
        return _clean(o.tolist())
    return o


def to_dict(mode: ModeResult, key: list) -> dict:
    """A ModeResult as plain JSON data (its timing is not included: it is read from timings.json)."""
    data = {"key": key, "name": mode.name, "status": mode.status, "error": mode.error,
            "step_rule": mode.step_rule, "step_source": mode.step_source.value, "notes": list(mode.notes),
            "trace_paths": list(mode.trace_paths), "profile_options": _clean(mode.profile_options),
            "host_events_recorded": mode.host_events_recorded,
            "first_step": _clean(mode.first_step),
            "compile_estimate": _estimate_to_json(mode.compile_estimate),
            "tracer_events": _events_to_json(mode.tracer_events)}
    for name in FRAMES:
        data[name] = _table_to_json(mode.table(name))
    boot = mode.known_boot_medians      # kept when computed (``ModeResult.boot_medians``)
    if boot is not None:
        data["boot"] = {"digest": mode.boot_digest, "medians": _exact_floats(boot)}
    return data


def _adopt_boot(mode: ModeResult, boot: Any) -> ModeResult:
    """Give ``mode`` the bootstrap medians ``to_dict`` kept, where they were resampled from the
    very samples the mode has now (its timing is read from timings.json on every load, so the
    digest is compared each time); anything else in their place is ignored (resampled again)."""
    if not isinstance(boot, dict) or boot.get("digest") != mode.boot_digest:
        return mode
    values = boot.get("medians")
    if not isinstance(values, list) or len(values) != BOOTSTRAP_SAMPLES or not all(
            (isinstance(v, (int, float)) and not isinstance(v, bool)) or v in ("nan", "inf", "-inf")
            for v in values):
        return mode
    return mode.replace(boot=np.asarray(_floats(values), dtype=float))


def _exact_floats(a: np.ndarray) -> list:
    """A float array as JSON values that read back to the same bits: finite floats as numbers
    (Python's repr round-trips), NaN and infinities as the strings "nan", "inf", "-inf"."""
    values = np.asarray(a, dtype=float).tolist()
    if np.isfinite(a).all():
        return values
    return [v if math.isfinite(v) else repr(v) for v in values]


def _floats(values: list) -> np.ndarray:
    return np.array([float(v) for v in values], dtype=float)


def timing_to_dict(t: Timing) -> dict:
    """A ``Timing`` as plain JSON data that ``timing_from_dict`` reads back exactly (every float's
    bits; None stays None). The cache does not store timings (``load`` is given the ones read
    from timings.json); the analysis processes of ``analysis.parallel`` are sent them this way.
    ``load`` is passed on as it is: it comes from timings.json (finite JSON values)."""
    first: Any = t.first_step_s
    if isinstance(first, float) and not math.isfinite(first):
        first = repr(first)
    return {"steps_s": _exact_floats(t.steps_s), "first_step_s": first,
            "traced_steps_s": None if t.traced_steps_s is None else _exact_floats(t.traced_steps_s),
            "rounds": None if t.rounds is None else [_exact_floats(r) for r in t.rounds],
            "load": t.load, "memory": t.memory,
            "calibration": None if t.calibration is None else
            {"calls": t.calibration.calls, "untraced_s": _exact_floats(np.asarray(t.calibration.untraced_s)),
             "traced_s": _exact_floats(np.asarray(t.calibration.traced_s))}}


def timing_from_dict(d: dict) -> Timing:
    first = d.get("first_step_s")
    return Timing(steps_s=_floats(d["steps_s"]),
                  first_step_s=float(first) if isinstance(first, str) else first,
                  traced_steps_s=None if d.get("traced_steps_s") is None else
                  _floats(d["traced_steps_s"]),
                  rounds=None if d.get("rounds") is None else
                  tuple(_floats(r) for r in d["rounds"]),
                  load=d.get("load"), memory=d.get("memory"),
                  calibration=None if d.get("calibration") is None else
                  Calibration(int(d["calibration"]["calls"]),
                              tuple(_floats(d["calibration"]["untraced_s"]).tolist()),
                              tuple(_floats(d["calibration"]["traced_s"]).tolist())))


def save(path: Path, mode: ModeResult, key: list) -> None:
    data = to_dict(mode, key)
    try:
        atomic_write_json(path, data)
    except OSError:
        pass  # a read-only run: analyse again next time


def load(path: Path, key: list, timing: Timing | None) -> ModeResult | None:
    return _read(path, key, timing)[0]


# A cache file is our own JSON of one mode's tables: a file larger than this was not written by
# us for any trace we analyse (the largest runs' caches are a few MB); refused before reading.
MAX_CACHE_BYTES = 256 << 20


def _unsafe_dirs(run: Path, path: Path) -> str | None:
    """Why the cache file's folders may not be used: ``.traceinsight`` or ``analysis-v<N>`` is a
    symlink or not a folder, or the file resolves outside the run folder. None when fine."""
    from traceinsight.runfolder import is_inside
    run = Path(run)
    for d in (run / ".traceinsight", path.parent):
        if d.is_symlink():
            return f"{d.relative_to(run)} is a symlink"
        if os.path.lexists(d) and not d.is_dir():
            return f"{d.relative_to(run)} is not a folder"
    if not is_inside(run, path.parent):
        return "the cache folder is outside the run folder"
    return None


def load_checked(run: Path, path: Path, key: list, timing: Timing | None
                 ) -> tuple[ModeResult | None, str | None]:
    """The cached mode of a run folder, or None and, when a cache file was there but not used
    for a reason the user may want to know (damaged, not a regular file, a symlinked folder), a
    note saying so. The cache is disposable: whatever is wrong with it, the mode is analysed
    again, never a traceback."""
    path = Path(path)
    if not os.path.lexists(path):
        return None, None
    why = _unsafe_dirs(run, path)
    if why is None and path.is_symlink():
        why = "the cache file is a symlink"
    if why is not None:
        return None, f"analysis cache not used ({why}): analysed again"
    mode, why = _read(path, key, timing)
    return mode, None if why is None else f"analysis cache not used ({why}): analysed again"


def _read(path: Path, key: list, timing: Timing | None) -> tuple[ModeResult | None, str | None]:
    from traceinsight.errors import TraceinsightError
    from traceinsight.runfolder import open_regular
    try:
        with open_regular(path, MAX_CACHE_BYTES) as f:
            data = json.loads(f.read(MAX_CACHE_BYTES + 1))
    except FileNotFoundError:
        return None, None
    except TraceinsightError as e:
        return None, str(e).split(": ", 1)[-1]
    except OSError as e:
        return None, f"cannot read it: {e.strerror or e}"
    except RecursionError:
        return None, "nested too deeply"
    except (ValueError, MemoryError):
        return None, "not readable JSON"
    if not isinstance(data, dict) or data.get("key") != key:
        return None, None       # another analysis version or other inputs: simply stale
    mode = from_dict(data, key, timing)
    return mode, None if mode is not None else "damaged"


def save_checked(run: Path, path: Path, mode: ModeResult, key: list) -> str | None:
    """Write a mode's cache inside the run folder, never through a symlink out of it (the run's
    ``.traceinsight`` could point anywhere); a note when it was not written for that reason. A
    full disk or a read-only run is not worth a note: the mode is analysed again next time."""
    run = Path(run)
    why = _unsafe_dirs(run, Path(path))
    if why is not None:
        return f"analysis cache not written ({why})"
    try:
        (run / ".traceinsight").mkdir(exist_ok=True)
        Path(path).parent.mkdir(exist_ok=True)
    except OSError:
        return None
    why = _unsafe_dirs(run, Path(path))     # made by someone else between the check and mkdir
    if why is not None:
        return f"analysis cache not written ({why})"
    save(path, mode, key)
    return None


_STEP_SOURCES = frozenset(s.value for s in StepSource)


def _plain(data: dict) -> bool:
    """The scalar fields have the types ``to_dict`` writes (a hand-made file may hold anything)."""
    def strs(v: Any) -> bool:
        return isinstance(v, list) and all(isinstance(x, str) for x in v)
    return (isinstance(data.get("name"), str) and data.get("status") in ("ok", "failed", "missing")
            and isinstance(data.get("error"), (str, type(None)))
            and isinstance(data.get("step_rule", ""), str)
            and data.get("step_source") in _STEP_SOURCES
            and strs(data.get("notes") or []) and strs(data.get("trace_paths") or [])
            and isinstance(data.get("profile_options") or {}, dict)
            and isinstance(data.get("first_step") or {}, dict)
            and all(isinstance(data.get(n), dict) and isinstance(data[n].get("columns"), list)
                    and all(isinstance(c, str) for c in data[n]["columns"]) for n in FRAMES))


def from_dict(data: Any, key: list, timing: Timing | None) -> ModeResult | None:
    """The ModeResult ``to_dict`` wrote, or None when ``data`` is not that (or of another key)."""
    if not isinstance(data, dict) or data.get("key") != key or not _plain(data):
        return None
    try:
        frames = {name: _table_from_json(data[name]) for name in FRAMES}
        first = data.get("first_step")
        return _adopt_boot(ModeResult(
            name=data["name"], status=data["status"], error=data.get("error"), timing=timing,
            steps=frames["steps"], breakdown=frames["breakdown"],
            first_step=None if first is None else
            {str(k): math.nan if v is None else float(v) for k, v in first.items()},
            ops=frames["ops"], retraces=frames["retraces"], hotspots=frames["hotspots"],
            other=frames["other"], step_rule=data.get("step_rule", ""),
            step_source=StepSource(data["step_source"]),
            profile_options=data.get("profile_options") or {}, notes=tuple(data.get("notes") or ()),
            trace_paths=tuple(data.get("trace_paths") or ()),
            host_events_recorded=bool(data.get("host_events_recorded", True)),
            device_steps=frames["device_steps"], devices=frames["devices"],
            kernels=frames["kernels"], stages=frames["stages"], memory=frames["memory"],
            layers=frames["layers"],
            compile_estimate=_estimate_from_json(data.get("compile_estimate")),
            tracer_events=_events_from_json(data.get("tracer_events"))), data.get("boot"))
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError, IndexError,
            RecursionError, MemoryError):
        return None   # not what to_dict wrote (a damaged or hand-made file): analysed again


def _estimate_to_json(est: CompileEstimate | None) -> dict | None:
    if est is None:
        return None
    return {"kind": est.kind.value, "calls": [_clean(dataclasses.asdict(c)) for c in est.calls]}


def _estimate_from_json(d: Any) -> CompileEstimate | None:
    """The estimate as ``_estimate_to_json`` wrote it; anything else raises (TypeError,
    ValueError), so a damaged cache entry is analysed again rather than shown."""
    if d is None:
        return None
    kind = CompileKind(d["kind"])      # ValueError for anything else

    def ms(v: Any, optional: bool = True) -> float | None:
        if v is None and optional:
            return None
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise ValueError("compile_estimate: not a finite number")
        return float(v)

    calls = []
    for c in d["calls"]:
        step = c["step_num"]
        if step is not None and (isinstance(step, bool) or not isinstance(step, int)):
            raise ValueError("compile_estimate.step_num")
        calls.append(CompileCall(str(c["function"]), step, ms(c["first_op_ms"], False),  # type: ignore[arg-type]
                                 ms(c["steady_op_ms"]), ms(c["compile_ms"])))
    return CompileEstimate(kind, tuple(calls))


def _events_to_json(ev: TracerEvents | None) -> dict | None:
    if ev is None:
        return None
    return {"per_step": _clean(ev.per_step), "calibration_events": _clean(ev.calibration_events)}


def _events_from_json(d: Any) -> TracerEvents | None:
    """The events as ``_events_to_json`` wrote them; anything else raises (a damaged cache entry
    is analysed again)."""
    if d is None:
        return None

    def count(v: Any) -> float:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            raise ValueError("tracer_events: not a count")
        return float(v)

    per = d["per_step"]
    cal = d.get("calibration_events")
    return TracerEvents({c: count(per[c]) for c in CATEGORIES}, None if cal is None else count(cal))
