"""The retrace table of a mode: tf.function calls grouped by function (calls, traced calls, time
tracing and compiling), why a function was traced again (a ``RetraceCause``, as data), and what
changed between its traces in words (the ``changes`` column, for people), from the trace's
``tracing_count`` stats and the argument signatures the capture recorded."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from traceinsight.analysis import rules
from traceinsight.analysis.names import GRAPH_BUILDING, TF_FUNCTION_CALL, TRACING_COUNT, traced_call, xla_call
from traceinsight.analysis.results import PS_PER_MS, factorize, in_windows, sort_order
from traceinsight.capture.loading import PLAIN_DTYPES
from traceinsight.columns import Columns, text
from traceinsight.model import CATEGORIES
from traceinsight.retracecause import RetraceCause

if TYPE_CHECKING:   # (findings import GRAPH_BUILDS: no trace decoding, no protobuf)
    from traceinsight.analysis.attribute import Attribution

RETRACE_COLUMNS = ["function", "calls", "traced_calls", "tracing_ms", "compile_ms", "changes",
                   "cause", "cause_detail", "signature"]
# cause: why the function was traced more than once, as data the findings read (never parsed from
# ``changes``, which is for people): a ``RetraceCause``'s value. cause_detail: the recorded
# argument changes, or the tracing_count range, in words. signature: an ``input_signature`` that
# covers every argument signature the capture fed (``input_signature``), "" where none can be said.
GRAPH_BUILDS = "(graphs built outside tf.function calls)"


def retraces_table(a: Attribution, signatures: dict | None = None) -> Columns:
    """tf.function calls grouped by function: calls, traced calls, time tracing and compiling.
    ``signatures``: the argument signatures the capture fed the step (timings.json
    ``input_signatures``), which say what changed between traces."""
    t = a.table
    if TF_FUNCTION_CALL not in t.stat_str:
        return Columns.no_rows(RETRACE_COLUMNS)
    idx, val = t.stat_str[TF_FUNCTION_CALL]
    traced = np.array([traced_call(v) for v in val], dtype=bool)
    on_main = t.line[idx] == a.main_line
    ct = np.zeros((len(idx), len(CATEGORIES)))
    if on_main.any():
        ct[on_main] = a.category_time(t.start[idx[on_main]], t.end[idx[on_main]]) / PS_PER_MS
    tc = t.stat_int_column(TRACING_COUNT)[idx]
    calls = Columns({"function": text([t.names[i] for i in t.name[idx]]), "traced": traced,
                     "tracing": ct[:, rules.TRACING], "compile": ct[:, rules.COMPILE],
                     "kind": text(list(val)), TRACING_COUNT: tc, "start": t.start[idx]})
    calls = calls.take(sort_order([(calls["start"], True), (calls["function"], True)]))
    rows: list[dict[str, Any]] = []
    changed = signature_changes(signatures) if signatures else []
    spec = input_signature(signatures) if changed and signatures else ""
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
                     "changes": changes, "cause": cause.value, "cause_detail": detail,
                     "signature": spec if n_traced > 1 and cause in SIGNATURE_FIXES else ""})
    builds = _graph_builds_outside_calls(a, idx[on_main])
    if builds is not None:
        rows.append(builds)
    out = Columns({"function": text([r["function"] for r in rows]),
                   "calls": np.array([r["calls"] for r in rows], dtype=np.int64),
                   "traced_calls": np.array([r["traced_calls"] for r in rows], dtype=np.int64),
                   "tracing_ms": np.array([r["tracing_ms"] for r in rows], dtype=float),
                   "compile_ms": np.array([r["compile_ms"] for r in rows], dtype=float),
                   **{k: text([r.get(k, "") for r in rows])
                      for k in ("changes", "cause", "cause_detail", "signature")}})
    return out.take(sort_order([(out["traced_calls"], False), (out["tracing_ms"], False),
                                (out["function"], True)]))


def _graph_builds_outside_calls(a: Attribution, calls: np.ndarray) -> dict[str, Any] | None:
    """Graph building (``tf.function-graph_building``) on the main thread inside steps but under no
    tf.function call event: graphs traced by other means every step, e.g. the map / flat_map
    functions of a tf.data pipeline that Keras' predict() builds from arrays on every call (seen on
    TF 2.21 / Keras 3.15: three per predict call, under array_data_adapter.get_tf_dataset)."""
    t = a.table
    gb = [i for i, nm in enumerate(t.names) if nm == GRAPH_BUILDING]
    if not gb or not len(a.step_start):
        return None
    ev = np.nonzero(np.isin(t.name, gb) & (t.line == a.main_line) & ~a.outside)[0]
    ev = ev[in_windows(t.start[ev], a.step_start, a.step_end) >= 0]
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
    tc = g[TRACING_COUNT]
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
    xla = any(xla_call(k) for k in kinds)
    tc = g[TRACING_COUNT]
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
    traced_tc = g[TRACING_COUNT][positions]
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


def _kinds(entry: dict) -> list[dict]:
    """One distinct signature's arguments as data: the capture's ``kinds``; for a run folder
    written before the capture recorded them, read back from its ``args`` texts (the one place
    those texts are parsed: ``Python <type> <value>``, ``<container> <dtype> shape (<dims>)``)."""
    args = [str(a) for a in entry.get("args") or []]
    kinds = entry.get("kinds")
    if isinstance(kinds, list) and len(kinds) == len(args) and all(isinstance(k, dict) for k in kinds):
        return kinds
    out: list[dict] = []
    for arg in args:
        if arg.startswith("Python "):
            out.append({"kind": "python", "type": arg.split(" ")[1]})
        elif " shape " in arg:
            head, shape = arg.split(" shape ", 1)
            container, _, dtype = head.partition(" ")
            out.append({"kind": "array", "container": container, "dtype": dtype, "shape_text": shape})
        else:
            out.append({"kind": "other"})
    return out


def _shape_text(k: dict) -> str:
    """An array argument's shape as the capture writes it: ``(100,)``, ``(None, 32)``."""
    if "shape_text" in k:
        return str(k["shape_text"])
    return str(tuple(k.get("shape") or ()))


def signature_changes(signatures: dict) -> list[dict]:
    """Which arguments changed across the signatures the capture fed the step: one dict per
    changed argument, ``{"argument": 1, "kind": "shape" | "python" | "type", "text": ...}``,
    decided on the arguments' recorded kinds (``capture.loading.arg_kind``)."""
    entries = [d for d in signatures.get("distinct") or [] if isinstance(d, dict)]
    distinct = [list(zip([str(a) for a in d.get("args") or []], _kinds(d))) for d in entries]
    if len(distinct) < 2:
        return []
    out = []
    more = "+" if signatures.get("truncated") else ""
    for pos in range(max(len(d) for d in distinct)):
        values = [d[pos] for d in distinct if pos < len(d)]
        by_text = dict(values)                  # each distinct text with its kind, in order
        uniq = list(by_text)
        if len(uniq) < 2:
            continue
        kinds = list(by_text.values())
        if all(k.get("kind") == "python" for k in kinds):
            types = sorted({str(k.get("type")) for k in kinds})
            out.append({"argument": pos + 1, "kind": "python",
                        "text": f"argument {pos + 1} is a Python {'/'.join(types)}: "
                                f"{len(uniq)}{more} distinct values"})
        elif all(k.get("kind") == "array" for k in kinds):
            shapes = list(dict.fromkeys(_shape_text(k) for k in kinds))
            dtypes = {f"{k.get('container')} {k.get('dtype')}" for k in kinds}
            what = f"shape changed ({', '.join(shapes[:4])}{', ...' if len(shapes) > 4 else ''})"
            if len(dtypes) > 1:
                what += f" and dtype ({', '.join(sorted(dtypes))})"
            out.append({"argument": pos + 1, "kind": "shape", "text": f"argument {pos + 1} {what}"})
        else:
            out.append({"argument": pos + 1, "kind": "type",
                        "text": f"argument {pos + 1} changed type: {', '.join(uniq[:3])}"})
    return out


# the causes a fixed input signature answers: new shapes, new Python values (the retrace table
# quotes a signature for these; ``capture --verify`` checks it for these)
SIGNATURE_FIXES = (RetraceCause.SHAPES, RetraceCause.PYTHON_VALUES,
                   RetraceCause.SHAPES_AND_PYTHON_VALUES)
# a Python value passed as a tensor instead (``tf.constant(v)``): the dtype it gets
_PYTHON_DTYPES = {"float": "float32", "int": "int32", "bool": "bool", "str": "string"}


@dataclass(frozen=True)
class ArgSpec:
    """One argument of an ``input_signature``, as data: its shape (a dimension None where it
    varied; the whole shape None where the rank did) and its dtype, a plain TensorFlow dtype name
    (``capture.loading.PLAIN_DTYPES``). What the retrace table quotes (``source``) and what
    ``capture --verify``'s fixed-signature mode builds its ``tf.TensorSpec`` from (``to_dict``:
    data, never source to evaluate)."""

    shape: tuple[int | None, ...] | None
    dtype: str

    def source(self) -> str:
        if self.shape is None:
            return f"tf.TensorSpec(None, tf.{self.dtype})"
        dims = ", ".join("None" if d is None else str(d) for d in self.shape)
        return f"tf.TensorSpec([{dims}], tf.{self.dtype})"

    def to_dict(self) -> dict[str, Any]:
        return {"shape": None if self.shape is None else list(self.shape), "dtype": self.dtype}


def signature_source(specs: tuple[ArgSpec, ...]) -> str:
    """The signature as the fix snippet writes it: ``[tf.TensorSpec([None], tf.float32), ...]``."""
    return f"[{', '.join(s.source() for s in specs)}]"


def signature_specs(signatures: dict) -> tuple[ArgSpec, ...] | None:
    """An ``input_signature`` that every argument signature the capture fed the step fits, from
    their recorded kinds (``capture.loading.arg_kind``): an array argument's dimensions kept where
    they never changed and None where they did (its rank unknown where that changed), a Python
    number or flag as a scalar tensor (passed as ``tf.constant``). None where it cannot be said:
    fewer than two signatures recorded, an argument of another kind, a dtype that changed or is no
    plain TensorFlow dtype name, the signatures' lengths differing, or a run folder that recorded
    the texts only."""
    entries = [d for d in signatures.get("distinct") or [] if isinstance(d, dict)]
    kinds: list[list] = [k for k in (d.get("kinds") for d in entries) if isinstance(k, list) and k]
    if len(entries) < 2 or len(kinds) != len(entries) or len({len(k) for k in kinds}) != 1:
        return None
    specs: list[ArgSpec] = []
    for pos in range(len(kinds[0])):
        ks = [k[pos] for k in kinds]
        if not all(isinstance(k, dict) for k in ks):
            return None
        if all(k.get("kind") == "python" for k in ks):
            scalar = {_PYTHON_DTYPES.get(str(k.get("type")), "") for k in ks}
            if len(scalar) != 1 or "" in scalar:
                return None
            specs.append(ArgSpec((), scalar.pop()))
            continue
        if not all(k.get("kind") == "array" and isinstance(k.get("shape"), list) for k in ks):
            return None
        dtypes = {str(k.get("dtype")) for k in ks}
        dtype = dtypes.pop() if len(dtypes) == 1 else ""
        if dtype not in PLAIN_DTYPES:     # data from a run folder: never written into source
            return None
        shapes = [k["shape"] for k in ks]
        if len({len(sh) for sh in shapes}) != 1:
            specs.append(ArgSpec(None, dtype))    # the rank changed
            continue
        specs.append(ArgSpec(tuple(d[0] if len(set(d)) == 1 and _dim(d[0]) else None
                                   for d in zip(*shapes)), dtype))
    return tuple(specs)


def _dim(d: object) -> bool:
    return isinstance(d, int) and not isinstance(d, bool) and d >= 0


def input_signature(signatures: dict) -> str:
    """``signature_specs`` as Python source (the retrace table's ``signature`` column, quoted by
    the retracing finding's fix); "" where none can be said."""
    specs = signature_specs(signatures)
    return signature_source(specs) if specs is not None else ""


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
