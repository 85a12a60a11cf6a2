"""Attribution -> the per-mode tables of ``traceinsight.model.ModeResult``."""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from traceinsight.analysis import native, rules
from traceinsight.analysis.attribute import N_CAT, Attribution
from traceinsight.model import CATEGORIES
from traceinsight.pyfiles import pick

PS_PER_MS = 1e9

OPS_COLUMNS = ["op", "type", "thread", "calls_per_step", "self_ms_per_step", "share"]
RETRACE_COLUMNS = ["function", "calls", "traced_calls", "tracing_ms", "compile_ms", "changes",
                   "cause", "cause_detail"]
# cause: why the function was traced more than once, as data the findings read (never parsed from
# ``changes``, which is for people): "" (traced at most once), "shapes", "python values",
# "shapes and python values", "new function object", "arguments changed" (tracing_count climbed;
# the trace does not say which argument), "unknown", or "graph builds" (the row of graphs built
# outside any tf.function call, e.g. tf.data functions). cause_detail: the recorded argument
# changes, or the tracing_count range, in words.
GRAPH_BUILDS = "(graphs built outside tf.function calls)"
HOTSPOT_COLUMNS = ["function", "file", "line", "group", "self_ms", "inclusive_ms", "calls_per_step"]
OTHER_COLUMNS = ["name", "ms_per_step", "count"]


def steps_frame(a: Attribution) -> pd.DataFrame:
    """One row per step: step_num, start_ps, end_ps, wall_ms, first, partial (cut by the end of
    the trace), and ms per category."""
    cols = ["step_num", "start_ps", "end_ps", "wall_ms", "first", "partial"] + list(CATEGORIES)
    if not len(a.step_start):
        return pd.DataFrame(columns=cols)
    ct = a.category_time(a.step_start, a.step_end) / PS_PER_MS
    df = pd.DataFrame(ct, columns=list(CATEGORIES))
    df.insert(0, "step_num", a.step_num.astype(np.int64))
    df.insert(1, "start_ps", a.step_start)
    df.insert(2, "end_ps", a.step_end)
    df.insert(3, "wall_ms", (a.step_end - a.step_start) / PS_PER_MS)
    # The first step in the trace is reported apart when it is the process's first call (step 0)
    # or holds tracing / compilation: that is where one-time costs live.
    first = np.zeros(len(df), dtype=bool)
    first[0] = bool(a.step_num[0] == 0 or (ct[0, rules.TRACING] + ct[0, rules.COMPILE]) > 0)
    if len(df) == 1:
        first[0] = False  # a single step is all there is: keep it as the steady state
    df.insert(4, "first", first)
    df.insert(5, "partial", a.step_partial if a.step_partial is not None
              else np.zeros(len(df), dtype=bool))
    return df[cols]


def steady_mask(steps: pd.DataFrame) -> np.ndarray:
    """Steady steps: neither the first step nor a step cut by the end of the trace."""
    mask = ~steps["first"].to_numpy(dtype=bool)
    if "partial" in steps.columns:
        mask &= ~steps["partial"].to_numpy(dtype=bool)
    return mask


def breakdown_frame(steps: pd.DataFrame) -> pd.DataFrame:
    cols = list(CATEGORIES) + ["wall_ms"]
    steady = steps[steady_mask(steps)] if len(steps) else steps
    if steady.empty:
        return pd.DataFrame(columns=["median", "p25", "p75", "mean"])
    values = steady[cols].astype(float)
    b = pd.DataFrame({"median": values.median(), "p25": values.quantile(0.25),
                      "p75": values.quantile(0.75), "mean": values.mean()})
    return b.rename(index={"wall_ms": "total"})


def _steady_windows(a: Attribution, steps: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, int]:
    if steps.empty:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), 0
    steady = steady_mask(steps)
    return a.step_start[steady], a.step_end[steady], int(steady.sum())


def owned_time(a: Attribution, ws: np.ndarray, we: np.ndarray, category: int) -> np.ndarray:
    """Per event, the main-thread time (ps) of one category it owns inside the windows, clipped
    to them (computed once per attribution, windows and category)."""
    key = ("owned", ws.tobytes(), we.tobytes(), category)
    if key not in a._memo:
        a._memo[key] = native.owned_time(a.bounds, a.seg_owner, a.seg_cat, ws, we, category,
                                         len(a.table))
    return a._memo[key]


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


def ops_frame(a: Attribution, steps: pd.DataFrame) -> pd.DataFrame:
    """Ops on the main thread (op time owned inside each op's dispatch) and on worker threads
    (self time of graph / HLO op events), per steady step."""
    ws, we, n = _steady_windows(a, steps)
    if n == 0 or not len(a.table):
        return pd.DataFrame(columns=OPS_COLUMNS)
    totals = op_totals(a, ws, we)
    if totals.empty:
        return pd.DataFrame(columns=OPS_COLUMNS)
    ops = totals.assign(calls_per_step=totals["calls"] / n,
                        self_ms_per_step=totals["self_ps"] / PS_PER_MS / n)
    total = ops.groupby("thread")["self_ms_per_step"].transform("sum")
    ops["share"] = np.where(total > 0, ops["self_ms_per_step"] / total.where(total > 0, 1), 0.0)
    # ties (XLA's repeated fusions often cost the same) in name order, so the table is the same
    # from run to run of the analysis
    return ops.sort_values(["self_ms_per_step", "op", "thread"], ascending=[False, True, True],
                           kind="stable", ignore_index=True)[OPS_COLUMNS]


def op_totals(a: Attribution, ws: np.ndarray, we: np.ndarray) -> pd.DataFrame:
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
        codes, uniq = pd.factorize(pd.Series(val, dtype=object))
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
        if op_of_name[code] is not None:
            return op_of_name[code]
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

    rows: list[dict] = []
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
        for k in set(keyed) | set(calls):
            rows.append({"op": k[0], "type": k[1], "thread": "main",
                         "calls": calls.get(k, [0])[0], "self_ps": keyed.get(k, [0, 0.0])[1]})
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
        dur = (t.end - t.start).astype(float)
        op_anchor = native.nearest_marked(is_op_event, a.parent)  # at or above each event
        nested_op = np.nonzero(is_op_event & (a.parent >= 0))[0]
        above = op_anchor[a.parent[nested_op]]  # the nearest op event strictly above
        nested_op, above = nested_op[above >= 0], above[above >= 0]
        child_sum = np.bincount(above, weights=dur[nested_op], minlength=len(t))
        self_ps = np.maximum(dur[ev] - child_sum[ev], 0.0)
        for k, (n, ps) in totals(codes_of(ev), self_ps).items():
            rows.append({"op": k[0], "type": k[1], "thread": "worker", "calls": n,
                         "self_ps": ps})
    return pd.DataFrame(rows, columns=["op", "type", "thread", "calls", "self_ps"])


def retraces_frame(a: Attribution, signatures: dict | None = None) -> pd.DataFrame:
    """tf.function calls grouped by function: calls, traced calls, time tracing and compiling.
    ``signatures``: the argument signatures the capture fed the step (timings.json
    ``input_signatures``), which say what changed between traces."""
    t = a.table
    if "tf_function_call" not in t.stat_str:
        return pd.DataFrame(columns=RETRACE_COLUMNS)
    idx, val = t.stat_str["tf_function_call"]
    traced = np.array([v.startswith("traced") for v in val], dtype=bool)
    on_main = t.line[idx] == a.main_line
    ct = np.zeros((len(idx), N_CAT))
    if on_main.any():
        ct[on_main] = a.category_time(t.start[idx[on_main]], t.end[idx[on_main]]) / PS_PER_MS
    tc = t.stat_int_column("tracing_count")[idx]
    df = pd.DataFrame({"function": [t.names[i] for i in t.name[idx]], "traced": traced,
                       "tracing": ct[:, rules.TRACING], "compile": ct[:, rules.COMPILE],
                       "kind": val, "tracing_count": tc, "start": t.start[idx]})
    rows = []
    changed = signature_changes(signatures) if signatures else []
    for fn, g in df.sort_values(["start", "function"], kind="stable").groupby("function", sort=False):
        n_traced = int(g["traced"].sum())
        changes = _retrace_pattern(g)
        if n_traced > 1 and changed:
            fed = describe_signature_changes(signatures)
            changes = f"{changes}; {fed}" if changes else fed
        cause, detail = _retrace_cause(g, changed if n_traced > 1 else [])
        rows.append({"function": fn, "calls": len(g), "traced_calls": n_traced,
                     "tracing_ms": float(g["tracing"].sum()), "compile_ms": float(g["compile"].sum()),
                     "changes": changes, "cause": cause, "cause_detail": detail})
    builds = _graph_builds_outside_calls(a, idx[on_main])
    if builds is not None:
        rows.append(builds)
    out = pd.DataFrame(rows, columns=RETRACE_COLUMNS)
    return out.sort_values(["traced_calls", "tracing_ms", "function"], ascending=[False, False, True],
                           kind="stable", ignore_index=True)


def _graph_builds_outside_calls(a: Attribution, calls: np.ndarray) -> dict | None:
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
    keep = []
    for e in ev.tolist():
        p = int(a.parent[e])
        while p >= 0 and not inside[p]:
            p = int(a.parent[p])
        if p < 0:
            keep.append(e)
    if not keep:
        return None
    keep = np.asarray(keep)
    steps = len(a.step_start)
    ms = float(a.category_time(t.start[keep], t.end[keep])[:, rules.TRACING].sum() / PS_PER_MS)
    per_step = len(keep) / steps
    return {"function": GRAPH_BUILDS, "calls": len(keep), "traced_calls": len(keep),
            "tracing_ms": ms, "compile_ms": 0.0,
            "changes": (f"{len(keep)} graphs built in {steps} steps ({per_step:.3g} per step) by "
                        "no tf.function call: functions traced by tf.data (Dataset.map / flat_map "
                        "of a pipeline built per call) or concrete functions"),
            "cause": "graph builds", "cause_detail": f"{per_step:.3g} per step"}


def _retrace_cause(g: pd.DataFrame, changed: list[dict]) -> tuple[str, str]:
    """(cause, detail) of a function's traces, from the recorded argument changes and the calls'
    tracing_count (see RETRACE_COLUMNS)."""
    traced = g["traced"].to_numpy()
    if traced.sum() < 2:
        return "", ""
    shapes = [c["text"] for c in changed if c["kind"] == "shape"]
    python = [c["text"] for c in changed if c["kind"] == "python"]
    if shapes or python:
        cause = ("shapes and python values" if shapes and python else
                 "shapes" if shapes else "python values")
        return cause, "; ".join(shapes + python)
    tc = g["tracing_count"].to_numpy()
    traced_tc = tc[traced]
    if len(traced_tc) and (traced_tc >= 0).all() and (traced_tc == 1).all():
        return "new function object", f"tracing_count stays 1 over {int(traced.sum())} traced calls"
    tc = tc[tc >= 0]
    if len(tc) and tc.max() > tc.min():
        return "arguments changed", f"tracing_count {int(tc.min())}→{int(tc.max())}"
    if changed:
        return "unknown", "; ".join(c["text"] for c in changed)
    return "unknown", ""


def _retrace_pattern(g: pd.DataFrame) -> str:
    """What the call stats tell about the traces (the host trace does not record argument
    signatures): when they happened and whether XLA was involved."""
    n, traced = len(g), int(g["traced"].sum())
    if traced == 0:
        return ""
    positions = np.nonzero(g["traced"].to_numpy())[0]
    kinds = sorted(set(g["kind"]))
    xla = any(k.endswith("-xla") for k in kinds)
    tc = g["tracing_count"].to_numpy()
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
    traced_tc = g["tracing_count"].to_numpy()[positions]
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


def other_frame(a: Attribution, steps: pd.DataFrame) -> pd.DataFrame:
    """Main-thread time of events no rule places, by name."""
    ws, we, n = _steady_windows(a, steps)
    if n == 0 or not (a.seg_cat == rules.OTHER).any():
        return pd.DataFrame(columns=OTHER_COLUMNS)
    owned = owned_time(a, ws, we, rules.OTHER)
    owners = np.nonzero(owned)[0]
    if not len(owners):
        return pd.DataFrame(columns=OTHER_COLUMNS)
    name_ids = a.table.name[owners]
    df = pd.DataFrame({"name": [a.table.names[i] for i in name_ids], "ps": owned[owners]})
    g = df.groupby("name").agg(ps=("ps", "sum"), count=("ps", "size")).reset_index()
    g["ms_per_step"] = g["ps"] / PS_PER_MS / n
    return g.sort_values(["ms_per_step", "name"], ascending=[False, True], kind="stable",
                         ignore_index=True)[OTHER_COLUMNS]


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
    TensorFlow's tree takes a few hundred ms, so the index is cached on disk per package location
    and version (~/.cache/traceinsight; TRACEINSIGHT_CACHE overrides)."""
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
    cache_dir = Path(os.environ.get("TRACEINSIGHT_CACHE") or Path.home() / ".cache" / "traceinsight")
    cache = cache_dir / f"pyfiles-{key}.json"
    try:
        data = json.loads(cache.read_text())
        if isinstance(data, dict):
            return data
    except (OSError, ValueError):
        pass
    out: dict[str, str] = {}
    for root, group in roots:
        for _, _, files in os.walk(root):
            for f in files:
                # keras wins over tensorflow on a shared base name: keras frames dominate a Keras
                # step, and ambiguous names are few
                if f.endswith(".py") and out.get(f) != "keras":
                    out[f] = group
    try:
        from traceinsight.runfolder import atomic_write_json
        atomic_write_json(cache, out)
    except OSError:
        pass  # a read-only home: walk again next time
    return out


def frame_group(file: str, user_files: frozenset[str],
                recorded: dict[str, list[str]] | None = None) -> str:
    """user / keras / tensorflow / other for a python-tracer frame's file base name: from what the
    capture recorded in the workload process when there is a record (exact for that run), else
    from the packages installed here (foreign traces)."""
    if file in user_files:
        return "user"
    if recorded and file in recorded:
        return pick(recorded[file])
    if file.startswith("tensorflow.") or file.startswith("tsl") or file.startswith("_pywrap"):
        return "tensorflow"
    if file.startswith("keras") or file.startswith("tf_keras"):
        return "keras"
    if recorded:
        return "other"  # not a file the workload process loaded: a builtin or extension module
    return _package_files().get(file, "other")


def hotspots_frame(a: Attribution, steps: pd.DataFrame, *, user_files: frozenset[str] = frozenset(),
                   scale: float = 1.0, python_files: dict[str, list[str]] | None = None
                   ) -> pd.DataFrame:
    """Python time per function from python-tracer frames: self = python-category time owned by the
    frame; inclusive = python-category time inside its outermost (non-recursive) calls; per steady
    step, multiplied by ``scale`` (the host pass's python time / this pass's)."""
    t = a.table
    ws, we, n = _steady_windows(a, steps)
    if n == 0 or a.main_line < 0:
        return pd.DataFrame(columns=HOTSPOT_COLUMNS)
    frame_name = np.array([nm.startswith("$") for nm in t.names] or [False], dtype=bool)
    # python time owned by each event (segments of steady steps, clipped to them); per function:
    # calls, self time, and inclusive time of outermost (non-recursive) calls
    own_py = owned_time(a, ws, we, rules.PYTHON)
    lo, hi = np.searchsorted(t.line, [a.main_line, a.main_line + 1])
    calls_by_name, self_by_name, incl_by_name = native.frame_sums(
        a.parent, t.name, t.start, ~a.outside & (t.end > t.start), frame_name, lo, hi, ws, we,
        own_py)
    if not calls_by_name.any():
        return pd.DataFrame(columns=HOTSPOT_COLUMNS)
    rows = []
    for nid in np.nonzero(calls_by_name)[0].tolist():
        file, line, func = parse_frame(t.names[nid])
        rows.append({"function": func or t.names[nid], "file": file, "line": line,
                     "group": frame_group(file, user_files, python_files),
                     "self_ms": self_by_name[nid] / PS_PER_MS / n * scale,
                     "inclusive_ms": incl_by_name[nid] / PS_PER_MS / n * scale,
                     "calls_per_step": calls_by_name[nid] / n})
    df = pd.DataFrame(rows, columns=HOTSPOT_COLUMNS)
    # ties (many frames own no python time) in a fixed order, so reports do not reshuffle
    return df.sort_values(["self_ms", "inclusive_ms", "function", "file", "line"],
                          ascending=[False, False, True, True, True], kind="stable",
                          ignore_index=True)
