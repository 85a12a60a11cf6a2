"""Exports of one mode: a Chrome-trace JSON (Perfetto, chrome://tracing) and CSV / Parquet tables.

The Chrome trace comes from XProf's own converter, ``raw_to_tool_data.xspace_to_tool_data(paths,
"trace_viewer", {})`` (xprof 2.24): it already writes the catapult trace-event format
(``{"displayTimeUnit": "ns", "metadata": ..., "traceEvents": [...]}``, ``ts``/``dur`` in µs, one
``pid`` per plane, one ``tid`` per line, stats in ``args``) that Perfetto and chrome://tracing open.
We only drop the empty ``{}`` it appends as the last event. xprof is an optional dependency.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path

import pandas as pd

from traceinsight.errors import TraceinsightError
from traceinsight.model import ModeResult

TABLE_FORMATS = ("csv", "parquet")
PASSES = ("host", "python")


def pass_paths(mode: ModeResult, pass_name: str = "host") -> list[str]:
    """The trace files of one capture pass of a mode (all of them for foreign traces)."""
    paths = [str(p) for p in mode.trace_paths]
    if not paths:
        raise TraceinsightError(f"mode {mode.name!r} has no trace files to export")
    marked = [p for p in paths if _pass_of(p) == pass_name]
    if marked:
        return marked
    present = sorted(p for p in {_pass_of(p) for p in paths} if p is not None)
    if present:
        raise TraceinsightError(f"mode {mode.name!r} has no {pass_name} pass trace "
                                f"(passes present: {', '.join(present)})")
    return paths


def _pass_of(path: str) -> str | None:
    """``<mode>/<pass>/plugins/profile/<session>/<host>.xplane.pb`` -> pass (run folder layout)."""
    parts = Path(path).parts
    if len(parts) >= 5 and parts[-4:-2] == ("plugins", "profile") and parts[-5] in PASSES:
        return parts[-5]
    return None


@contextlib.contextmanager
def _quiet_stderr():
    """xprof's C++ logs every conversion step to fd 2: keep it, show it only on failure."""
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        try:
            saved = os.dup(2)
        except OSError:  # no fd 2 (embedded interpreters)
            yield tmp
            return
        os.dup2(tmp.fileno(), 2)
        try:
            yield tmp
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def chrome_trace(paths: list[str]) -> str:
    """The Chrome trace-event JSON of some xplane files, via XProf's trace_viewer converter."""
    try:
        from xprof.convert import raw_to_tool_data
    except ImportError:
        raise TraceinsightError("the Chrome-trace export needs xprof: pip install xprof") from None
    with _quiet_stderr() as log:
        try:
            data, _content_type = raw_to_tool_data.xspace_to_tool_data(list(paths), "trace_viewer", {})
        except Exception as e:  # xprof raises plain exceptions on unreadable files
            log.seek(0)
            tail = log.read().decode(errors="replace").strip().splitlines()[-1:] or [""]
            raise TraceinsightError(f"xprof could not convert {paths[0]}: {e} {tail[0]}".strip()) from None
    if isinstance(data, bytes):
        data = data.decode("utf-8")
    if not data:
        raise TraceinsightError(f"xprof returned no trace for {paths[0]}")
    doc = json.loads(data)
    doc["traceEvents"] = [e for e in doc.get("traceEvents", []) if e]
    return json.dumps(doc, separators=(",", ":"))


def tables(mode: ModeResult) -> dict[str, pd.DataFrame]:
    """The mode's tables as the TUI and reports show them (empty ones left out)."""
    out = {
        "breakdown": mode.breakdown.rename_axis("category").reset_index()
        if not mode.breakdown.empty else mode.breakdown,
        "steps": mode.steps, "ops": mode.ops, "retraces": mode.retraces,
        "hotspots": mode.hotspots, "other": mode.other,
        # GPU traces: the device side (empty, so left out, on CPU-only traces)
        "devices": mode.devices, "device_steps": mode.device_steps, "kernels": mode.kernels,
    }
    return {k: v for k, v in out.items() if not v.empty}


def write_tables(mode: ModeResult, outdir: Path, fmt: str = "csv") -> list[Path]:
    if fmt not in TABLE_FORMATS:
        raise TraceinsightError(f"table format {fmt!r} is not one of {', '.join(TABLE_FORMATS)}")
    if fmt == "parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise TraceinsightError("Parquet needs pyarrow: pip install pyarrow (or use --tables csv)") \
                from None
    outdir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, df in tables(mode).items():
        path = outdir / f"{name}.{fmt}"
        if fmt == "csv":
            df.to_csv(path, index=False)
        else:
            df.to_parquet(path, index=False)
        written.append(path)
    return written
