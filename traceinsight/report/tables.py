"""A mode's tables, or every mode's tables of a run, as CSV or Parquet files.

``render(run, TableOptions(mode, format))`` gives ``(file name, bytes)`` pairs, one table at a
time (``report.write_files`` writes them, each atomically):

* with a mode: the mode's tables as the viewer and the reports show them (breakdown, steps, ops,
  retraces, hotspots, other, tf.data stages, and the device tables of GPU traces; empty ones
  left out);
* without (``mode`` None): the modes, steps, categories, ops and hotspots tables of every mode
  and host, stacked, with the run's metadata as their first columns, so the tables of many runs
  can be queried together (docs/reports.md: DuckDB).

CSV cells are made inert (``csv_safe``); Parquet keeps every string as it is.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pandas as pd

from traceinsight.errors import TraceinsightError
from traceinsight.model import ModeResult, Run
from traceinsight.report.options import TABLE_FORMATS, TableOptions

FLEET_TABLES = ("modes", "steps", "categories", "ops", "hotspots")
# run metadata, the first columns of every fleet table (so tables of many runs stack by name)
RUN_COLUMNS = ("run", "run_path", "created_utc", "workload", "tool", "tensorflow", "keras",
               "python", "hostname", "cpu_model", "command", "mode", "host")


def render(run: Run, options: TableOptions) -> Iterator[tuple[str, bytes]]:
    """The tables as ``(<name>.<format>, file bytes)``, made one at a time as they are taken.
    A bad format, a missing pyarrow or an unknown mode raise here, before any table is made."""
    fmt = options.format
    if fmt not in TABLE_FORMATS:
        raise TraceinsightError(f"table format {fmt!r} is not one of {', '.join(TABLE_FORMATS)}")
    if options.mode is None:
        if fmt == "parquet":
            _need_pyarrow("pip install 'traceinsight-tf[tables]' (or use --tables csv)")
        return _files(fleet_tables(run), fmt, fleet=True)
    mode = run.modes.get(options.mode)
    if mode is None:
        raise TraceinsightError(f"{run.name} has no mode {options.mode!r}; modes: "
                                f"{', '.join(run.modes) or 'none'}")
    if fmt == "parquet":
        _need_pyarrow("pip install pyarrow (or use --tables csv)")
    return _files(tables(mode), fmt, fleet=False)


def _files(frames: dict[str, pd.DataFrame], fmt: str, fleet: bool) -> Iterator[tuple[str, bytes]]:
    for name, df in frames.items():
        if fmt == "csv":
            data = csv_safe(df).to_csv(index=False).encode("utf-8")
        else:
            if fleet:
                # object columns of mixed None / str stay strings; all-None metadata columns too
                df = df.astype({c: "string" for c in df.columns if df[c].dtype == object
                                and df[c].map(lambda v: v is None or isinstance(v, str)).all()})
            buf = io.BytesIO()
            df.to_parquet(buf, index=False)
            data = buf.getvalue()
        yield f"{name}.{fmt}", data


def with_untraced(mode: ModeResult, bd: pd.DataFrame, column: str = "untraced") -> pd.DataFrame:
    """A breakdown (one row per category and "total", traced figures) with the user's step beside
    them: each category's ms/step with the profiler's cost taken out
    (``ModeResult.category_means``), the total the untraced median they add up to."""
    if bd.empty:
        return bd
    user = mode.category_means()
    return bd.assign(**{column: [user[c] if c in user else mode.breakdown_ms for c in bd["category"]]})


def tables(mode: ModeResult) -> dict[str, pd.DataFrame]:
    """The mode's tables as the TUI and reports show them (empty ones left out), as the public
    API's DataFrames: pandas writes the CSV and Parquet files."""
    out = {
        "breakdown": with_untraced(mode, mode.breakdown.rename_axis("category").reset_index())
        if not mode.breakdown.empty else mode.breakdown,
        "steps": mode.steps, "ops": mode.ops, "retraces": mode.retraces,
        "hotspots": mode.hotspots, "other": mode.other, "stages": mode.stages,
        # GPU traces: the device side (empty, so left out, on CPU-only traces)
        "devices": mode.devices, "device_steps": mode.device_steps, "kernels": mode.kernels,
    }
    return {k: v for k, v in out.items() if not v.empty}


def _host_of(mode: ModeResult) -> str:
    """The host(s) a mode's traces were recorded on (``<host>.xplane.pb``)."""
    hosts = sorted({Path(p).name[:-len(".xplane.pb")] for p in mode.trace_paths
                    if Path(p).name.endswith(".xplane.pb")})
    return ",".join(hosts)


def run_metadata(run: Run) -> dict[str, object]:
    m, env = run.manifest or {}, run.environment or {}
    return {"run": run.name, "run_path": str(run.path) if run.path else None,
            "created_utc": m.get("created_utc"), "workload": (m.get("workload") or {}).get("name"),
            "tool": m.get("tool"), "tensorflow": env.get("tensorflow"), "keras": env.get("keras"),
            "python": env.get("python"), "hostname": env.get("hostname"),
            "cpu_model": env.get("cpu_model"), "command": m.get("command")}


def fleet_tables(run: Run) -> dict[str, pd.DataFrame]:
    """Every mode's (and host's) tables of one run, stacked, with the run's metadata as columns:
    ``modes`` (the summary: untraced median ms/step, CI, ratio, first step, distortion, status),
    ``steps`` (one row per traced step with its category split), ``categories`` (median / p25 /
    p75 / mean ms per steady traced step, and untraced_ms: the user's step with the profiler's
    cost taken out, long form), ``ops`` and ``hotspots``."""
    meta = run_metadata(run)
    per_mode: dict[str, list[pd.DataFrame]] = {k: [] for k in FLEET_TABLES}
    summary = run.summary()
    for m in run.modes.values():
        cols = dict(meta, mode=m.name, host=_host_of(m))
        per_mode["modes"].append(summary[summary["mode"] == m.name].drop(columns="mode")
                                 .assign(**cols))
        if not m.ok:
            continue
        bd = m.breakdown.rename_axis("category").reset_index().rename(
            columns={c: f"{c}_ms" for c in ("median", "p25", "p75", "mean")})
        bd = with_untraced(m, bd, "untraced_ms")
        for name, df in (("steps", m.steps), ("categories", bd), ("ops", m.ops),
                         ("hotspots", m.hotspots)):
            if not df.empty:
                per_mode[name].append(df.assign(**cols))
    out = {}
    for name, frames in per_mode.items():
        df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(RUN_COLUMNS))
        out[name] = df[list(RUN_COLUMNS) + [c for c in df.columns if c not in RUN_COLUMNS]]
    return out


def _need_pyarrow(how: str) -> None:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise TraceinsightError(f"Parquet needs pyarrow: {how}") from None


def csv_safe(df: pd.DataFrame) -> pd.DataFrame:
    """The table with every text cell passed through ``present.safe`` without a length limit:
    control characters, terminal escape codes and bidi controls written as visible escapes
    (``\\x1b``, ``\\u202e``), so a CSV shown in a terminal or a spreadsheet cannot act on it. Names
    holding such characters are not names TensorFlow makes; Parquet keeps every string as it is."""
    from traceinsight.present import safe
    out = df.copy()
    for c in out.columns:
        if out[c].dtype == object or pd.api.types.is_string_dtype(out[c].dtype):
            out[c] = out[c].map(lambda v: safe(v, None) if isinstance(v, str) else v)
    return out
