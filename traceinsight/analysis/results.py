"""Attribution -> the per-mode tables of ``traceinsight.model.ModeResult``.

Computed with numpy into ``traceinsight.columns.Columns`` (no pandas: ``traceinsight analyze``
prints from these without importing it); the model offers them as DataFrames too. Group sums
and sorts reproduce what the pandas code before them computed (``groupby().sum()``,
``sort_values(kind="stable")``), figure for figure.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from traceinsight.analysis import native, rules
from traceinsight.analysis.attribute import N_CAT, Attribution
from traceinsight.columns import Columns, text
from traceinsight.model import CATEGORIES, steady_mask
from traceinsight.pyfiles import pick
from traceinsight.retracecause import RetraceCause

PS_PER_MS = 1e9

STEP_COLUMNS = ["step_num", "start_ps", "end_ps", "wall_ms", "first", "partial", *CATEGORIES]
BREAKDOWN_COLUMNS = ["median", "p25", "p75", "mean"]

OPS_COLUMNS = ["op", "type", "thread", "calls_per_step", "self_ms_per_step", "share"]
RETRACE_COLUMNS = ["function", "calls", "traced_calls", "tracing_ms", "compile_ms", "changes",
                   "cause", "cause_detail"]
# cause: why the function was traced more than once, as data the findings read (never parsed from
# ``changes``, which is for people): a ``RetraceCause``'s value. cause_detail: the recorded
# argument changes, or the tracing_count range, in words.
GRAPH_BUILDS = "(graphs built outside tf.function calls)"
HOTSPOT_COLUMNS = ["function", "file", "line", "group", "self_ms", "inclusive_ms", "calls_per_step"]
OTHER_COLUMNS = ["name", "ms_per_step", "count"]


# ---- sorting and grouping as the tables need them (numpy) -------------------------------------

def sort_order(keys: Sequence[tuple[np.ndarray, bool]]) -> np.ndarray:
    """Row order by several (column, ascending) keys, the first the most significant; stable (ties
    keep their order) and NaN last either way, as pandas' ``sort_values(by=[...],
    kind="stable")``. Strings sort by code point."""
    codes = []
    for values, ascending in keys:
        v = np.asarray(values)
        if v.dtype == object:
            v = np.unique(v, return_inverse=True)[1].reshape(-1)
        elif v.dtype == bool:
            v = v.astype(np.int64)
        codes.append(v if ascending else -v)
    if not codes or not len(codes[0]):
        return np.zeros(0, dtype=np.int64)
    return np.lexsort(codes[::-1])


def factorize(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(codes, uniques) with uniques in order of first appearance (``pd.factorize``)."""
    if not len(values):
        return np.zeros(0, dtype=np.int64), values[:0]
    uniq, first, inv = np.unique(values, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return rank[inv.reshape(-1)], uniq[order]


def group_sum_int(codes: np.ndarray, values: np.ndarray, n_groups: int) -> np.ndarray:
    """Exact int64 sums of ``values`` per code."""
    out = np.zeros(n_groups, dtype=np.int64)
    np.add.at(out, codes, np.asarray(values, dtype=np.int64))
    return out


# ---- the tables --------------------------------------------------------------------------------

def steps_table(a: Attribution, step0_is_first_call: bool = False) -> Columns:
    """One row per step: step_num, start_ps, end_ps, wall_ms, first, partial (cut by the end of
    the trace), and ms per category. ``step0_is_first_call``: the capture numbered the process's
    first call 0 (traceinsight's own run folders), so a step 0 is it even without tracing."""
    if not len(a.step_start):
        return Columns.no_rows(STEP_COLUMNS)
    ct = a.category_time(a.step_start, a.step_end) / PS_PER_MS
    n = len(a.step_start)
    # The first step in the trace is reported apart when it holds the process's first call of
    # the step: tracing or compilation in it, where one-time costs live. A marker numbered 0 is
    # not enough: a trace started mid-run numbers its own steps from 0 after the step was traced.
    first = np.zeros(n, dtype=bool)
    first[0] = bool((step0_is_first_call and a.step_num[0] == 0)
                    or (ct[0, rules.TRACING] + ct[0, rules.COMPILE]) > 0)
    if n == 1:
        first[0] = False  # a single step is all there is: keep it as the steady state
    data: dict[str, np.ndarray] = {
        "step_num": a.step_num.astype(np.int64), "start_ps": a.step_start, "end_ps": a.step_end,
        "wall_ms": (a.step_end - a.step_start) / PS_PER_MS, "first": first,
        "partial": a.step_partial if a.step_partial is not None else np.zeros(n, dtype=bool)}
    for i, c in enumerate(CATEGORIES):
        data[c] = np.ascontiguousarray(ct[:, i])
    return Columns(data)


def breakdown_table(steps: Columns) -> Columns:
    """Per category and the step's wall time ("total"), over the steady steps: median, p25, p75
    (linear interpolation) and mean, ms; NaN steps (categories not recorded) are skipped, as
    pandas' ``median`` / ``quantile`` / ``mean`` skip them."""
    if not len(steps):
        return Columns.no_rows(BREAKDOWN_COLUMNS)
    steady = steady_mask(steps)
    if not steady.any():
        return Columns.no_rows(BREAKDOWN_COLUMNS)
    out: dict[str, list[float]] = {k: [] for k in BREAKDOWN_COLUMNS}
    for c in [*CATEGORIES, "wall_ms"]:
        values = np.asarray(steps[c], dtype=float)[steady]
        nan = np.isnan(values)
        v = values[~nan]
        if not len(v):
            for k in BREAKDOWN_COLUMNS:
                out[k].append(float("nan"))
            continue
        p25, p75 = np.percentile(v, [25.0, 75.0])
        out["median"].append(float(np.median(v)))
        out["p25"].append(float(p25))
        out["p75"].append(float(p75))
        # the sum with NaN as 0 (pandas' nanmean: the same additions, in the same order)
        out["mean"].append(float(np.sum(np.where(nan, 0.0, values)) / len(v)))
    return Columns({k: np.asarray(v, dtype=float) for k, v in out.items()},
                   index=[*CATEGORIES, "total"])


def _steady_windows(a: Attribution, steps: Columns) -> tuple[np.ndarray, np.ndarray, int]:
    if steps.empty:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), 0
    steady = steady_mask(steps)
    return a.step_start[steady], a.step_end[steady], int(steady.sum())


def owned_time(a: Attribution, ws: np.ndarray, we: np.ndarray, category: int) -> np.ndarray:
    """Per event, the main-thread time (ps) of one category it owns inside the windows, clipped
    to them. Not kept: each (category, windows) is asked for once per analysis, and a table-long
    int64 column kept per category held ~45 MB per 5.5 M events until the analysis ended."""
    return native.owned_time(a.bounds, a.seg_owner, a.seg_cat, ws, we, category, len(a.table))


def _in_windows(t: np.ndarray, ws: np.ndarray, we: np.ndarray) -> np.ndarray:
    """Index of the window holding each time, -1 when none (windows sorted, disjoint)."""
    if not len(ws):
        return np.full(len(t), -1, dtype=np.int64)
    if len(t) > 1 and (t[1:] >= t[:-1]).all():
        # sorted times (a thread's events, timeline segments): each window is a run of them, found
        # by two searches per window instead of one per time
        lo, hi = np.searchsorted(t, ws, side="left"), np.searchsorted(t, we, side="left")
        delta = np.zeros(len(t) + 1, dtype=np.int64)
        np.add.at(delta, lo, np.arange(1, len(ws) + 1))
        np.add.at(delta, hi, -np.arange(1, len(ws) + 1))
        return np.cumsum(delta[:-1]) - 1
    k = np.searchsorted(ws, t, side="right") - 1
    ok = (k >= 0) & (t < we[np.clip(k, 0, len(we) - 1)])
    return np.where(ok, k, -1)


def ops_table(a: Attribution, steps: Columns) -> Columns:
    """Ops on the main thread (op time owned inside each op's dispatch) and on worker threads
    (self time of graph / HLO op events), per steady step."""
    ws, we, n = _steady_windows(a, steps)
    if n == 0 or not len(a.table):
        return Columns.no_rows(OPS_COLUMNS)
    totals = op_totals_table(a, ws, we)
    if totals.empty:
        return Columns.no_rows(OPS_COLUMNS)
    calls_per_step = totals["calls"] / n
    self_ms = totals["self_ps"] / PS_PER_MS / n
    thread = totals["thread"]
    # share of the thread group's op time; the group's total summed exactly (math.fsum: the same
    # whatever the rows' order)
    total = np.zeros(len(self_ms))
    for th in dict.fromkeys(thread.tolist()):
        sel = thread == th
        total[sel] = math.fsum(self_ms[sel].tolist())
    share = np.where(total > 0, self_ms / np.where(total > 0, total, 1), 0.0)
    # ties (XLA's repeated fusions often cost the same) in name order, so the table is the same
    # from run to run of the analysis
    order = sort_order([(self_ms, False), (totals["op"], True), (thread, True)])
    return Columns({"op": totals["op"], "type": totals["type"], "thread": thread,
                    "calls_per_step": calls_per_step, "self_ms_per_step": self_ms,
                    "share": share}).take(order)


def op_totals_table(a: Attribution, ws: np.ndarray, we: np.ndarray) -> Columns:
    """op, type, thread, calls, self_ps summed over the windows [ws, we)."""
    t = a.table
    names = t.names
    op_of_name = [rules.op_of_name(nm) for nm in names]
    named_op = np.array([o is not None for o in op_of_name], dtype=bool)[t.name]
    # events are grouped by an integer key code: the name id, or for events carrying an hlo_op
    # stat, len(names) + the id of that HLO op's name; runtime (non-op) owners: -1 - name id
    hlo_code = None
    hlo_names: list[str] = []
    if "hlo_op" in t.stat_str:
        idx, val = t.stat_str["hlo_op"]
        codes, uniq = factorize(np.asarray(val, dtype=object))
        hlo_code = np.full(len(t), -1, dtype=np.int64)
        hlo_code[idx] = len(names) + codes
        hlo_names = [str(u) for u in uniq]
    # accelerator planes (/device:GPU:0, ...) are not ops here: their kernels and copies are in
    # the device analysis (traceinsight.analysis.device and copies are in the device analysis, traceinsight.analysis.device: by whole kernel
    # name and TF op, and not from XProf's derived lines, which repeat the kernels' times)
    device_line = np.array([t.planes[ln.plane].name.startswith("/device:") for ln in t.lines]
                           or [False], dtype=bool)
    device = device_line[t.line] if len(t) else np.zeros(0, dtype=bool)
    is_op_event = named_op & ~device
    if hlo_code is not None:
        is_op_event |= hlo_code >= 0

    def codes_of(ev: np.ndarray) -> np.ndarray:
        code = t.name[ev].astype(np.int64)
        return code if hlo_code is None else np.where(hlo_code[ev] >= 0, hlo_code[ev], code)

    def key_of(code: int) -> tuple[str, str]:
        if code < 0:
            return names[-1 - code], "(runtime)"
        if code >= len(names):
            hlo = hlo_names[code - len(names)]
            return hlo, rules.hlo_type(hlo)
        op = op_of_name[code]
        if op is not None:
            return op
        name = names[code]
        return name, ("memcpy" if name.startswith("Memcpy") else "device kernel")

    def totals(codes: np.ndarray, weights: np.ndarray) -> dict[tuple[str, str], list]:
        """key -> [events, summed weight]; several codes may share a key"""
        uniq, inv = np.unique(codes, return_inverse=True)
        sums = np.bincount(inv, weights=weights.astype(float), minlength=len(uniq))
        counts = np.bincount(inv, minlength=len(uniq))
        out: dict[tuple[str, str], list] = {}
        for code, n, w in zip(uniq.tolist(), counts.tolist(), sums.tolist()):
            acc = out.setdefault(key_of(code), [0, 0.0])
            acc[0] += n
            acc[1] += w
        return out

    rows: list[tuple[str, str, str, int, float]] = []
    anchor = None   # the nearest op event at or above each event
    # main thread: op-category timeline segments, owned by the nearest op event above the owner
    if a.main_line >= 0 and len(a.seg_owner):
        anchor = native.nearest_marked(is_op_event, a.parent)
        owned = owned_time(a, ws, we, rules.OP)
        owners = np.nonzero(owned)[0]
        anc = anchor[owners]
        # op time with no op event above it: named after the owning event
        anc_key = np.where(anc >= 0, anc, owners)
        codes = np.where(is_op_event[anc_key], codes_of(anc_key), -1 - t.name[anc_key])
        keyed = totals(codes, owned[owners])
        main_ops = np.nonzero(is_op_event & (t.line == a.main_line) & ~a.outside)[0]
        main_ops = main_ops[_in_windows(t.start[main_ops], ws, we) >= 0]
        calls = totals(codes_of(main_ops), np.zeros(len(main_ops)))
        for k in sorted(set(keyed) | set(calls)):
            rows.append((k[0], k[1], "main", calls.get(k, [0])[0], keyed.get(k, [0, 0.0])[1]))
    # worker threads: self time of op events: duration minus the durations of the op events
    # nested in it (the nearest ones, at any depth). Other nested events (ParallelFor, Eigen
    # pool work, executor bookkeeping) are the op's own execution and stay in its self time, as
    # in XProf's framework_op_stats.
    on_data_plane = np.array([not t.planes[ln.plane].name.startswith("Task Environment")
                              for ln in t.lines] or [True])
    worker = (t.line != a.main_line) & is_op_event & ~a.outside & on_data_plane[t.line]
    ev = np.nonzero(worker)[0]
    ev = ev[_in_windows(t.start[ev], ws, we) >= 0]
    if len(ev):
        if anchor is None:
            anchor = native.nearest_marked(is_op_event, a.parent)
        nested_op = np.nonzero(is_op_event & (a.parent >= 0))[0]
        above = anchor[a.parent[nested_op]]  # the nearest op event strictly above
        nested_op, above = nested_op[above >= 0], above[above >= 0]
        # the nested op events' durations summed per event of ev (sorted): positions, not a
        # table-long array
        pos = np.minimum(np.searchsorted(ev, above), len(ev) - 1)
        hit = ev[pos] == above
        child_sum = np.bincount(pos[hit], minlength=len(ev),
                                weights=(t.end[nested_op[hit]] - t.start[nested_op[hit]]).astype(float))
        self_ps = np.maximum((t.end[ev] - t.start[ev]).astype(float) - child_sum, 0.0)
        for k, (n, ps) in totals(codes_of(ev), self_ps).items():
            rows.append((k[0], k[1], "worker", n, ps))
    if not rows:
        return Columns.no_rows(["op", "type", "thread", "calls", "self_ps"])
    return Columns({"op": text([r[0] for r in rows]), "type": text([r[1] for r in rows]),
                    "thread": text([r[2] for r in rows]),
                    "calls": np.array([r[3] for r in rows], dtype=np.int64),
                    "self_ps": np.array([r[4] for r in rows], dtype=float)})


def retraces_table(a: Attribution, signatures: dict | None = None) -> Columns:
    """tf.function calls grouped by function: calls, traced calls, time tracing and compiling.
    ``signatures``: the argument signatures the capture fed the step (timings.json
    ``input_signatures``), which say what changed between traces."""
    t = a.table
    if "tf_function_call" not in t.stat_str:
        return Columns.no_rows(RETRACE_COLUMNS)
    idx, val = t.stat_str["tf_function_call"]
    traced = np.array([v.startswith("traced") for v in val], dtype=bool)
    on_main = t.line[idx] == a.main_line
    ct = np.zeros((len(idx), N_CAT))
    if on_main.any():
        ct[on_main] = a.category_time(t.start[idx[on_main]], t.end[idx[on_main]]) / PS_PER_MS
    tc = t.stat_int_column("tracing_count")[idx]
    calls = Columns({"function": text([t.names[i] for i in t.name[idx]]), "traced": traced,
                     "tracing": ct[:, rules.TRACING], "compile": ct[:, rules.COMPILE],
                     "kind": text(list(val)), "tracing_count": tc, "start": t.start[idx]})
    calls = calls.take(sort_order([(calls["start"], True), (calls["function"], True)]))
    rows: list[dict[str, Any]] = []
    changed = signature_changes(signatures) if signatures else []
    codes, functions = factorize(calls["function"])   # groups in order of their first call
    for k, fn in enumerate(functions.tolist()):
        g = calls.take(np.nonzero(codes == k)[0])
        n_traced = int(g["traced"].sum())
        changes = _retrace_pattern(g)
        if n_traced > 1 and changed and signatures:
            fed = describe_signature_changes(signatures)
            changes = f"{changes}; {fed}" if changes else fed
        cause, detail = _retrace_cause(g, changed if n_traced > 1 else [])
        rows.append({"function": fn, "calls": len(g), "traced_calls": n_traced,
                     "tracing_ms": float(np.nansum(g["tracing"])),
                     "compile_ms": float(np.nansum(g["compile"])),
                     "changes": changes, "cause": cause.value, "cause_detail": detail})
    builds = _graph_builds_outside_calls(a, idx[on_main])
    if builds is not None:
        rows.append(builds)
    out = Columns({"function": text([r["function"] for r in rows]),
                   "calls": np.array([r["calls"] for r in rows], dtype=np.int64),
                   "traced_calls": np.array([r["traced_calls"] for r in rows], dtype=np.int64),
                   "tracing_ms": np.array([r["tracing_ms"] for r in rows], dtype=float),
                   "compile_ms": np.array([r["compile_ms"] for r in rows], dtype=float),
                   **{k: text([r[k] for r in rows]) for k in ("changes", "cause", "cause_detail")}})
    return out.take(sort_order([(out["traced_calls"], False), (out["tracing_ms"], False),
                                (out["function"], True)]))


def _graph_builds_outside_calls(a: Attribution, calls: np.ndarray) -> dict[str, Any] | None:
    """Graph building (``tf.function-graph_building``) on the main thread inside steps but under no
    tf.function call event: graphs traced by other means every step, e.g. the map / flat_map
    functions of a tf.data pipeline that Keras' predict() builds from arrays on every call (seen on
    TF 2.21 / Keras 3.15: three per predict call, under array_data_adapter.get_tf_dataset)."""
    t = a.table
    gb = [i for i, nm in enumerate(t.names) if nm == "tf.function-graph_building"]
    if not gb or not len(a.step_start):
        return None
    ev = np.nonzero(np.isin(t.name, gb) & (t.line == a.main_line) & ~a.outside)[0]
    ev = ev[_in_windows(t.start[ev], a.step_start, a.step_end) >= 0]
    if not len(ev):
        return None
    # not nested in a tf.function call: walk up the nesting
    inside = np.zeros(len(t), dtype=bool)
    inside[calls] = True
    outside = []
    for e in ev.tolist():
        p = int(a.parent[e])
        while p >= 0 and not inside[p]:
            p = int(a.parent[p])
        if p < 0:
            outside.append(e)
    if not outside:
        return None
    keep = np.asarray(outside)
    steps = len(a.step_start)
    ms = float(a.category_time(t.start[keep], t.end[keep])[:, rules.TRACING].sum() / PS_PER_MS)
    per_step = len(keep) / steps
    return {"function": GRAPH_BUILDS, "calls": len(keep), "traced_calls": len(keep),
            "tracing_ms": ms, "compile_ms": 0.0,
            "changes": (f"{len(keep)} graphs built in {steps} steps ({per_step:.3g} per step) by "
                        "no tf.function call: functions traced by tf.data (Dataset.map / flat_map "
                        "of a pipeline built per call) or concrete functions"),
            "cause": RetraceCause.GRAPH_BUILDS.value, "cause_detail": f"{per_step:.3g} per step"}


def _retrace_cause(g: Columns, changed: list[dict[str, Any]]) -> tuple[RetraceCause, str]:
    """(cause, detail) of a function's traces, from the recorded argument changes and the calls'
    tracing_count (see RETRACE_COLUMNS)."""
    traced = g["traced"]
    if traced.sum() < 2:
        return RetraceCause.NONE, ""
    shapes = [c["text"] for c in changed if c["kind"] == "shape"]
    python = [c["text"] for c in changed if c["kind"] == "python"]
    if shapes or python:
        cause = (RetraceCause.SHAPES_AND_PYTHON_VALUES if shapes and python else
                 RetraceCause.SHAPES if shapes else RetraceCause.PYTHON_VALUES)
        return cause, "; ".join(shapes + python)
    tc = g["tracing_count"]
    traced_tc = tc[traced]
    if len(traced_tc) and (traced_tc >= 0).all() and (traced_tc == 1).all():
        return (RetraceCause.NEW_FUNCTION,
                f"tracing_count stays 1 over {int(traced.sum())} traced calls")
    tc = tc[tc >= 0]
    if len(tc) and tc.max() > tc.min():
        return RetraceCause.ARGUMENTS_CHANGED, f"tracing_count {int(tc.min())}→{int(tc.max())}"
    if changed:
        return RetraceCause.UNKNOWN, "; ".join(c["text"] for c in changed)
    return RetraceCause.UNKNOWN, ""


def _retrace_pattern(g: Columns) -> str:
    """What the call stats tell about the traces (the host trace does not record argument
    signatures): when they happened and whether XLA was involved."""
    n, traced = len(g), int(g["traced"].sum())
    if traced == 0:
        return ""
    positions = np.nonzero(g["traced"])[0]
    kinds = sorted(set(g["kind"].tolist()))
    xla = any(k.endswith("-xla") for k in kinds)
    tc = g["tracing_count"]
    tc = tc[tc >= 0]
    parts = []
    if traced == n and n > 1:
        parts.append(f"every one of the {n} calls traced a new graph")
    elif traced == 1:
        parts.append("traced once (first call)" if positions[0] == 0 else
                     f"traced once, at call {positions[0] + 1}")
    else:
        later = positions[positions > 0]
        parts.append(f"traced on {traced} of {n} calls"
                     + (f" (calls {', '.join(str(p + 1) for p in later[:6])}"
                        f"{', ...' if len(later) > 6 else ''})" if len(later) else ""))
    traced_tc = g["tracing_count"][positions]
    traced_tc = traced_tc[traced_tc >= 0]
    if traced > 1 and len(traced_tc) == traced and (traced_tc == 1).all():
        # every trace is the first of its tf.function object
        parts.append("tracing_count stays 1: a new tf.function object is made for each call "
                     "(created in a loop or per call?)")
    elif len(tc):
        parts.append(f"tracing_count {int(tc.min())}→{int(tc.max())}"
                     + (": one function traced for new input signatures (shapes, dtypes or "
                        "Python values)" if traced > 1 else ""))
    if xla:
        parts.append("XLA: each trace also compiles")
    return "; ".join(parts)


def signature_changes(signatures: dict) -> list[dict]:
    """Which arguments changed across the signatures the capture fed the step: one dict per
    changed argument, ``{"argument": 1, "kind": "shape" | "python" | "type", "text": ...}``."""
    distinct = [d.get("args") or [] for d in signatures.get("distinct") or []]
    if len(distinct) < 2:
        return []
    out = []
    more = "+" if signatures.get("truncated") else ""
    for pos in range(max(len(d) for d in distinct)):
        values = [d[pos] for d in distinct if pos < len(d)]
        uniq = list(dict.fromkeys(values))
        if len(uniq) < 2:
            continue
        if all(v.startswith("Python ") for v in uniq):
            kinds = sorted({v.split(" ")[1] for v in uniq})
            out.append({"argument": pos + 1, "kind": "python",
                        "text": f"argument {pos + 1} is a Python {'/'.join(kinds)}: "
                                f"{len(uniq)}{more} distinct values"})
        elif all(" shape " in v for v in uniq):
            shapes = list(dict.fromkeys(v.split(" shape ", 1)[1] for v in uniq))
            dtypes = {v.split(" shape ", 1)[0] for v in uniq}
            what = f"shape changed ({', '.join(shapes[:4])}{', ...' if len(shapes) > 4 else ''})"
            if len(dtypes) > 1:
                what += f" and dtype ({', '.join(sorted(dtypes))})"
            out.append({"argument": pos + 1, "kind": "shape", "text": f"argument {pos + 1} {what}"})
        else:
            out.append({"argument": pos + 1, "kind": "type",
                        "text": f"argument {pos + 1} changed type: {', '.join(uniq[:3])}"})
    return out


def describe_signature_changes(signatures: dict) -> str:
    """The argument changes in words, for the retrace table: ``recorded inputs: 3 argument
    signatures over 30 steps; argument 1 shape changed ((100,), (200,)); argument 2 is a Python
    float: 25 distinct values``."""
    changed = signature_changes(signatures)
    if not changed:
        return ""
    n = len(signatures.get("distinct") or [])
    return (f"recorded inputs: {n}{'+' if signatures.get('truncated') else ''} "
            f"argument signatures over {signatures.get('steps', '?')} steps; "
            + "; ".join(c["text"] for c in changed))


def other_table(a: Attribution, steps: Columns) -> Columns:
    """Main-thread time of events no rule places, by name."""
    ws, we, n = _steady_windows(a, steps)
    if n == 0 or not (a.seg_cat == rules.OTHER).any():
        return Columns.no_rows(OTHER_COLUMNS)
    owned = owned_time(a, ws, we, rules.OTHER)
    owners = np.nonzero(owned)[0]
    if not len(owners):
        return Columns.no_rows(OTHER_COLUMNS)
    # names are interned: one name id per name
    ids, inv = np.unique(a.table.name[owners], return_inverse=True)
    ps = group_sum_int(inv.reshape(-1), owned[owners], len(ids))   # int64: exact
    count = np.bincount(inv.reshape(-1), minlength=len(ids)).astype(np.int64)
    g = Columns({"name": text([a.table.names[i] for i in ids.tolist()]),
                 "ms_per_step": ps / PS_PER_MS / n, "count": count})
    return g.take(sort_order([(g["ms_per_step"], False), (g["name"], True)]))


# ---- Python hotspots (python-tracer pass) -----------------------------------------------------

# the file is a base name, or a pseudo-file in angle brackets that may hold spaces and colons:
# "<frozen abc>", "<unknown>", "<string>"
_FRAME = re.compile(r"^\$(?P<file><[^>]*>|[^ :]+)(?::(?P<line>\d+))? (?P<func>.+)$")


def parse_frame(name: str) -> tuple[str, int, str]:
    """``$layer.py:872 __call__`` -> ("layer.py", 872, "__call__"); ``$builtins isinstance`` ->
    ("builtins", 0, "isinstance"); ``$<frozen abc>:117 __instancecheck__`` -> ("<frozen abc>",
    117, "__instancecheck__")."""
    m = _FRAME.match(name)
    if not m:
        return name.lstrip("$"), 0, ""
    return m.group("file"), int(m.group("line") or 0), m.group("func")


_PACKAGES = (("tensorflow", "tensorflow"), ("keras", "keras"), ("tf_keras", "keras"),
             ("tsl", "tensorflow"), ("xla", "tensorflow"))


@lru_cache(maxsize=1)
def _package_files() -> dict[str, str]:
    """File basename -> "keras" / "tensorflow" for the installed packages, found without importing
    them. The python tracer records base names only, so this is how frames are grouped. Walking
    TensorFlow's tree takes a while, so the index is kept for the process, and on disk per package
    location and version only where the user asks for it (``TRACEINSIGHT_CACHE=DIR``): the tool
    writes nothing outside a run folder unless asked."""
    import hashlib
    import importlib.metadata
    import importlib.util
    import json

    roots: list[tuple[str, str]] = []
    for pkg, group in _PACKAGES:
        try:
            spec = importlib.util.find_spec(pkg)
        except (ImportError, ValueError):
            spec = None
        if spec is not None and spec.submodule_search_locations:
            roots += [(r, group) for r in spec.submodule_search_locations]
    versions = []
    for dist in ("tensorflow", "tensorflow-cpu", "keras", "tf-keras"):
        try:
            versions.append(f"{dist}={importlib.metadata.version(dist)}")
        except importlib.metadata.PackageNotFoundError:
            pass
    key = hashlib.sha256(json.dumps([roots, versions]).encode()).hexdigest()[:16]
    cache_dir = os.environ.get("TRACEINSIGHT_CACHE")
    cache = Path(cache_dir) / f"pyfiles-{key}.json" if cache_dir else None
    try:
        data = json.loads(cache.read_text()) if cache else None
        if isinstance(data, dict) and all(isinstance(v, str) for v in data.values()):
            return data
    except (OSError, ValueError, RecursionError):
        pass
    out: dict[str, str] = {}
    for root, group in roots:
        for _, _, files in os.walk(root):
            for f in files:
                # keras wins over tensorflow on a shared base name: keras frames dominate a Keras
                # step, and ambiguous names are few
                if f.endswith(".py") and out.get(f) != "keras":
                    out[f] = group
    if cache is not None:
        try:
            from traceinsight.runfolder import atomic_write_json
            atomic_write_json(cache, out)
        except OSError:
            pass  # a read-only folder: walk again next time
    return out


@lru_cache(maxsize=1)
def _own_files() -> frozenset[str]:
    from traceinsight.pyfiles import own_files
    return own_files()


def frame_group(file: str, user_files: frozenset[str],
                recorded: dict[str, list[str]] | None = None) -> str:
    """user / keras / tensorflow / other for a python-tracer frame's file base name: from what the
    capture recorded in the workload process when there is a record (exact for that run), else
    from the packages installed here (foreign traces)."""
    if file in user_files:
        return "user"
    if recorded and file in recorded:
        return pick(recorded[file])
    if file in _own_files():
        return "traceinsight"
    if file.startswith("tensorflow.") or file.startswith("tsl") or file.startswith("_pywrap"):
        return "tensorflow"
    if file.startswith("keras") or file.startswith("tf_keras"):
        return "keras"
    if recorded:
        return "other"  # not a file the workload process loaded: a builtin or extension module
    return _package_files().get(file, "other")


def hotspots_table(a: Attribution, steps: Columns, *, user_files: frozenset[str] = frozenset(),
                   scale: float = 1.0, python_files: dict[str, list[str]] | None = None
                   ) -> Columns:
    """Python time per function from python-tracer frames: self = python-category time owned by the
    frame; inclusive = python-category time inside its outermost (non-recursive) calls; per steady
    step, multiplied by ``scale`` (the host pass's python time / this pass's)."""
    t = a.table
    ws, we, n = _steady_windows(a, steps)
    if n == 0 or a.main_line < 0:
        return Columns.no_rows(HOTSPOT_COLUMNS)
    frame_name = np.array([nm.startswith("$") for nm in t.names] or [False], dtype=bool)
    # python time owned by each event (segments of steady steps, clipped to them); per function:
    # calls, self time, and inclusive time of outermost (non-recursive) calls
    own_py = owned_time(a, ws, we, rules.PYTHON)
    lo, hi = np.searchsorted(t.line, [a.main_line, a.main_line + 1])
    calls_by_name, self_by_name, incl_by_name = native.frame_sums(
        a.parent, t.name, t.start, ~a.outside & (t.end > t.start), frame_name, lo, hi, ws, we,
        own_py)
    if not calls_by_name.any():
        return Columns.no_rows(HOTSPOT_COLUMNS)
    nids = np.nonzero(calls_by_name)[0]
    frames = [parse_frame(t.names[nid]) for nid in nids.tolist()]
    df = Columns({"function": text([func or t.names[nid] for nid, (_, _, func) in zip(nids.tolist(), frames)]),
                  "file": text([f[0] for f in frames]),
                  "line": np.array([f[1] for f in frames], dtype=np.int64),
                  "group": text([frame_group(f[0], user_files, python_files) for f in frames]),
                  "self_ms": self_by_name[nids] / PS_PER_MS / n * scale,
                  "inclusive_ms": incl_by_name[nids] / PS_PER_MS / n * scale,
                  "calls_per_step": calls_by_name[nids] / n})
    # ties (many frames own no python time) in a fixed order, so reports do not reshuffle
    return df.take(sort_order([(df["self_ms"], False), (df["inclusive_ms"], False),
                               (df["function"], True), (df["file"], True), (df["line"], True)]))
