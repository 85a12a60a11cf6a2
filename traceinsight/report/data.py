"""The report document: one JSON-ready dict built from a Run and its findings.

The JSON renderer writes it as is (schema: ``traceinsight/schemas/report.schema.json``); the
markdown and HTML renderers format the same dict, so the three formats always agree.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from traceinsight import present
from traceinsight.columns import Columns
from traceinsight.compare import is_distorted
from traceinsight.findings import fmt_ratio
from traceinsight.model import CATEGORIES, CATEGORY_HELP, ModeResult, Run
from traceinsight.report import hosts_prose
from traceinsight.report.document import FindingEntry, ModeEntry, ReportDocument, ReportJSON, RunInfo
from traceinsight.stats import VsFastest, material

if TYPE_CHECKING:
    from traceinsight.finding import Finding

SCHEMA_VERSION = 1
FLOAT_DIGITS = 6


def clean(obj: Any) -> Any:
    """JSON-ready copy: numpy scalars to Python, NaN/inf to None, tuples to lists, paths to str."""
    t = type(obj)
    # the plain Python values a table's rows are made of first (most of a document), each
    # returned as the general rules below return it
    if t is float:
        return float(f"{obj:.{FLOAT_DIGITS}g}") if math.isfinite(obj) else None
    if t is str or t is int or t is bool or obj is None:
        return obj
    if isinstance(obj, dict):
        return {str(k): clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, np.ndarray)):
        return [clean(v) for v in list(obj)]
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        f = float(obj)
        # 6 significant digits: µs on ms figures, and no float noise in the last digits
        return float(f"{f:.{FLOAT_DIGITS}g}") if math.isfinite(f) else None
    if obj is None or isinstance(obj, str):
        return obj
    if isinstance(obj, Path):
        return str(obj)
    return str(obj)


def _clean_float(v: float) -> float | None:
    return float(f"{v:.{FLOAT_DIGITS}g}") if math.isfinite(v) else None


# 10**0 .. 10**22: every one exactly a double
_POW10 = np.array([float(10 ** i) for i in range(23)])


def _clean_floats(a: np.ndarray) -> list[float | None]:
    """``_clean_float`` of each value of a float column, bit for bit, most of them at once: a
    value's 6 significant digits are the integer m nearest to |v| * 10**k (k = 5 - its decimal
    exponent), and the double nearest to m * 10**-k (what ``float(f"{v:.6g}")`` reads back) is
    m / 10**k or m * 10**-k, one correctly rounded operation on two exact doubles; a zero stays
    itself, NaN and infinities become None. A value this cannot settle for sure (m within a
    millionth of a half, the exponent in doubt, beyond 10**±22) is formatted as
    ``_clean_float`` formats it."""
    v = np.asarray(a, dtype=np.float64)
    if len(v) < 32:     # a short column: one by one is as fast
        return [_clean_float(x) for x in v.tolist()]
    mag = np.abs(v)
    with np.errstate(all="ignore"):
        k = 5 - np.floor(np.log10(mag))
        sure = np.isfinite(k) & (k >= -22) & (k <= 22)
        ki = np.where(sure, k, 0).astype(np.int64)
        p = _POW10[np.abs(ki)]
        up = ki >= 0
        scaled = np.where(up, mag * p, mag / p)
        m = np.floor(scaled + 0.5)
        sure &= (scaled >= 1e5 * (1 + 1e-9)) & (scaled < 1e6 * (1 - 1e-9)) \
            & (np.abs(scaled - np.floor(scaled) - 0.5) > 1e-6)
        zero = mag == 0
        sure |= zero
        out: list[float | None] = np.copysign(np.where(zero, 0.0, np.where(up, m / p, m * p)),
                                             v).tolist()
    finite = np.isfinite(v)
    for i in np.flatnonzero(~sure & finite).tolist():
        out[i] = _clean_float(float(v[i]))
    for i in np.flatnonzero(~finite).tolist():
        out[i] = None
    return out


def records(table: Columns) -> list[dict]:
    """JSON-ready rows of a table (a mode's or a comparison's ``Columns``): ``clean`` of each of
    its rows, made column by column (a column of numbers is cleaned by its type at once)."""
    if table is None or table.empty:
        return []
    names = table.columns
    cols = []
    for k in names:
        a = table[k]
        kind = a.dtype.kind
        if kind == "f":
            cols.append(_clean_floats(a))
        elif kind in "iub":
            cols.append(a.tolist())         # Python ints and bools, as clean returns them
        else:
            vals = a.tolist()
            # a column of names: clean returns each as it is
            cols.append(vals if all(type(v) is str for v in vals) else [clean(v) for v in vals])
    keys = [str(k) for k in names]
    return [dict(zip(keys, vals)) for vals in zip(*cols)]


def generator_name() -> str:
    from traceinsight import __version__
    return f"traceinsight {__version__}"


def run_info(run: Run) -> RunInfo:
    m = run.manifest
    return clean({"name": run.name, "path": str(run.path) if run.path is not None else None,
                  "source": run.source, "command": run.command,
                  "workload": m.get("workload", {}),
                  "created": m.get("created_utc", m.get("created"))})


def summary_rows(summary: Columns) -> dict[str, dict[str, Any]]:
    """The summary's rows by mode, each value typed as its column is: a column of numbers with a
    float or a missing value among them holds floats (``5.0``, not ``5``; a missing value NaN,
    written as null). The document has always written the summary's figures so (they came
    from a DataFrame of these rows), and a JSON reader sees one type per field."""
    records = summary.records()
    for k in summary.columns:
        vals = [r.get(k) for r in records]
        present_ = [v for v in vals if v is not None]
        numeric = all(isinstance(v, (int, float, np.integer, np.floating))
                      and not isinstance(v, (bool, np.bool_)) for v in present_)
        if present_ and numeric and (len(present_) < len(vals)
                                     or any(isinstance(v, (float, np.floating)) for v in present_)):
            for r in records:
                v = r.get(k)
                r[k] = math.nan if v is None else float(v)
    return {r["mode"]: r for r in records}


def mode_entry(run: Run, m: ModeResult, summary_row: dict[str, Any] | None) -> ModeEntry:
    e: dict[str, Any] = {"name": m.name, "status": m.status, "error": m.error}
    if summary_row is not None:
        for k in ("median_ms", "p25_ms", "p75_ms", "ci_lo_ms", "ci_hi_ms", "n", "ratio", "ratio_lo",
                  "ratio_hi", "ratio_note", "first_step_ms", "distortion"):
            e[k] = summary_row.get(k)
        v = summary_row.get("vs_fastest")    # stats.VsFastest's value, decided by the summary
        e["vs_fastest"] = v if isinstance(v, str) else None
    untraced = m.timing is not None and len(m.timing.steps_s) > 0
    e["timing_source"] = "untraced" if untraced else "traced" if m.n_steady else None
    e["categories"] = m.category_medians()
    e["traced_categories"] = m.traced_category_medians()
    e["traced_step_ms"] = m.traced_ms      # NaN (no breakdown) is written as null
    # the user's step split into categories (mean ms/step, the profiler's cost taken out: they
    # add up to the untraced median) and each one's share of it, beside the typical step's
    # medians above; the traced means they were made from, and how (the correction)
    e["category_means"] = m.category_means()
    e["category_shares"] = m.category_shares()
    e["category_total_ms"] = m.breakdown_ms
    e["traced_category_means"] = m.traced_category_means()
    e["traced_step_mean_ms"] = m.traced_mean_ms
    e["correction"] = correction_entry(m)
    # the profiler lengthened the traced steps a lot (compare.is_distorted): their split is less sure
    d = m.timing.distortion if m.timing is not None else None
    # costs concentrated in a few steps (stalls, periodic work), with the steps they hit
    e["concentrated"] = {c: {"steps": [{"step_num": n, "ms": v} for n, v in h["steps"]],
                             "n_steps": h["n_steps"], "excess_ms": h["excess_ms"], "share": h["share"],
                             "median_ms": h["median_ms"], "mean_ms": h["mean_ms"],
                             "material": material(c, h)}
                         for c, h in run.concentrated_costs(m.name).items()}
    e["categories_distorted"] = is_distorted(d)
    b = m.table("breakdown")
    e["breakdown"] = ([{"category": k, **r} for k, r in
                       zip(b.index if b.index is not None else range(len(b)), b.records())]
                      if not b.empty else [])
    e["first_step"] = m.first_step
    e["step_rule"] = m.step_rule
    e["notes"] = list(m.notes)
    e["profile_options"] = m.profile_options
    e["trace_paths"] = list(m.trace_paths)
    # the tables' rows are clean as made (``records``): set aside while the rest is cleaned
    tables: dict[str, list[dict]] = {}
    for name in ("steps", "ops", "retraces"):
        e[name] = tables[name] = records(m.table(name))
    e["hotspots"] = tables["hotspots"] = records(
        run.figures.hotspots_listed[m.name] if run.figures is not None
        and m.name in run.figures.hotspots_listed else m.table("hotspots"))
    e["other"] = tables["other"] = records(m.table("other"))
    # the device side (GPU traces) and whether the host trace can split host time at all
    e["host_events_recorded"] = bool(m.host_events_recorded)
    for name in ("devices", "device_steps", "kernels"):
        e[name] = tables[name] = records(m.table(name))
    mem = m.memory_figures()
    # whole bytes (a median of two sizes rounded), not 6 significant digits
    whole = lambda v: int(round(v)) if math.isfinite(v) else None   # noqa: E731
    e["memory"] = {"peak_rss_bytes": whole(mem.peak_rss_bytes), "rss_basis": mem.rss_basis,
                   "allocations_per_step": mem.allocations,
                   "requested_bytes_per_step": whole(mem.requested_bytes),
                   "peak_in_use_bytes": whole(mem.peak_in_use_bytes)}
    e["layers"] = tables["layers"] = records(m.table("layers"))
    if not m.table("stages").empty:     # only traces with a tf.data pipeline have the section
        e["tfdata_stages"] = tables["tfdata_stages"] = records(m.table("stages"))
    rest = clean({k: v for k, v in e.items() if k not in tables})
    return cast("ModeEntry", {k: tables[k] if k in tables else rest[k] for k in e})


def correction_entry(m: ModeResult) -> dict | None:
    """How the mode's drawn split was made from its traced one (``ModeResult.correction``)."""
    c = m.correction
    if c is None:
        return None
    return {"kind": c.kind.value, "method": c.method, "traced_mean_ms": c.traced_ms,
            "untraced_median_ms": c.untraced_ms, "scale": c.scale,
            "per_event_us": c.per_event_us, "events_per_step": c.events_per_step,
            "event_cost_ms": dict(c.event_cost), "removed_ms": c.removed}


def skipped_modes(run: Run) -> dict[str, str]:
    """Modes the workload asked for that the capture did not run here, with why (run.json's
    ``skipped_modes``; none in older run folders)."""
    v = run.manifest.get("skipped_modes") if isinstance(run.manifest, dict) else None
    return {str(k): str(w) for k, w in v.items()} if isinstance(v, dict) else {}


def summary_line(run: Run, modes: Sequence[ModeEntry], findings: Sequence[FindingEntry]) -> str:
    ok = [m for m in modes if m["status"] == "ok" and m.get("median_ms") is not None]
    skipped = skipped_modes(run)
    parts = [f"{run.name}: {len(ok)} of {len(modes) + len(skipped)} modes measured"
             + (f" (skipped: {', '.join(f'{n} ({why})' for n, why in skipped.items())})"
                if skipped else "")]
    fastest = next((m for m in ok if m.get("vs_fastest") == VsFastest.FASTEST), None)
    if fastest:
        parts.append(f"fastest {fastest['name']} {present.ms(fastest['median_ms'])} ms/step")
        slower = sorted((m for m in ok if m.get("vs_fastest") == VsFastest.SLOWER), key=lambda m: (-(m.get("ratio") or 0.0), m["name"]))
        if slower:
            parts.append(", ".join(f"{m['name']} {fmt_ratio(m['ratio'])}× slower" for m in slower[:3])
                         + (f" (+{len(slower) - 3} more)" if len(slower) > 3 else ""))
        same = [m["name"] for m in ok if m.get("vs_fastest") == VsFastest.SAME]
        if same:
            parts.append("no measurable difference: " + ", ".join(same[:3]))
    error = run.figures.findings_error if run.figures is not None else None
    if error:
        parts.append(f"no findings: a rule failed on this run ({error})")
    top = next((f for f in findings if f.get("saving_ms") is not None), None)
    if top:
        parts.append(f"top finding: {top['title']} (≈ {present.ms(top['saving_ms'])} ms/step)")
    others = [m["name"] for m in ok if m.get("vs_fastest") == VsFastest.ANOTHER_PROGRAM]
    if others:
        parts.append(f"not compared with {fastest['name'] if fastest else 'the others'}, since "
                     f"their ops show another program: {', '.join(others[:5])}"
                     + (f" (+{len(others) - 5} more)" if len(others) > 5 else ""))
    disagree = run.traced_disagreements()
    if disagree:
        parts.append("traced steps contradict the untraced medians for "
                     + ", ".join(f"{c.a} vs {c.b} (untraced {present.ms(c.a_ms)} vs {present.ms(c.b_ms)}, traced "
                                 f"{present.ms(c.traced_a_ms)} vs {present.ms(c.traced_b_ms)} ms)"
                                 for c in disagree[:3])
                     + ": their category splits do not explain those differences")
    for g in run.host_groups():
        parts.append(host_summary(g))
    failed = [m["name"] for m in modes if m["status"] != "ok"]
    if failed:
        parts.append(f"{len(failed)} failed: " + ", ".join(failed[:3]))
    return "; ".join(parts) + "."


def host_summary(g) -> str:
    """One clause on a multi-host profile session (a ``HostGroup``) for the summary line."""
    head = f"profile session {g.session}: {len(g.hosts)} hosts"
    if g.straggler is None:
        return head + (", equal medians, no straggler" if len(g.fastest) == len(g.hosts)
                       else f", {' and '.join(g.slowest)} tie for the slowest")
    why = [f"mostly {g.explained_by}"] if g.explained_by else []
    why += ["n=1"] if g.one_step else ["within noise"] if g.significant is False else []
    return (f"{head}, straggler {g.straggler} {fmt_ratio(g.spread_ratio)}× the fastest host"
            + (f" ({', '.join(why)})" if why else ""))


def build(run: Run, findings: tuple[Finding, ...] | None = None) -> ReportDocument:
    """The report of ``run`` (with ``findings`` in place of the run's, when given), built once
    for every writer: the JSON document and what the pictures and tables show beside it, read
    from the run's figures."""
    figures = run.figures
    return ReportDocument(
        report_data(run, findings),
        step_marks=figures.step_marks if figures is not None else MappingProxyType({}),
        host_categories=tuple(g.category_records() for g in run.host_groups()))


def report_data(run: Run, findings: tuple[Finding, ...] | None = None) -> ReportJSON:
    """Everything the TUI shows about a run, as one JSON-ready document (``ReportJSON``)."""
    if findings is None:
        findings = run.findings
    rows = summary_rows(run.table("summary"))
    modes = [mode_entry(run, m, rows.get(m.name)) for m in run.modes.values()]
    fdicts = [clean(f.to_dict()) for f in findings]
    doc: ReportJSON = {
        "schema_version": SCHEMA_VERSION,
        "kind": "report",
        "generator": generator_name(),
        "run": run_info(run),
        "summary": summary_line(run, modes, fdicts),
        "environment": clean(run.environment),
        "categories": [{"name": c, "help": CATEGORY_HELP[c]} for c in CATEGORIES],
        "modes": modes,
        "findings": fdicts,
        # the same layer in every mode with a layers table, its ratio and interval
        # (traceinsight.layer_matrix)
        "layer_matrix": records(run.figures.layer_matrix) if run.figures is not None else [],
        # the hosts of each multi-host profile session compared (traceinsight.analysis.hosts)
        "host_sessions": [clean(g.to_dict() | {"sentences": hosts_prose.sentences(g)})
                          for g in run.host_groups()],
        # each factor's effect from a pair of modes that differs in it alone (traceinsight.factors)
        "factors": clean(run.factors.to_dict()) if run.factors is not None else None,
    }
    # what capture --verify measured with each fix applied (run.json's "verify"), when run
    if isinstance(run.manifest.get("verify"), dict):
        doc["verify"] = clean(run.manifest["verify"])
    return doc
