"""Where in the model: a mode's op time by Keras layer, from the names the trace carries.

A graph op is named after the name scope it was built in, and Keras builds each layer's ops in a
scope of the layer's name inside the model's: ``functional_1/conv1d_1/convolution`` is an op of
layer ``conv1d_1`` of model ``functional_1`` (nested models add a level; training's gradient ops
are built under ``gradient_tape/`` + the same path, and are counted with the layer). An XLA op
(``convolution.3``, a fusion) keeps the TF op it was lowered from in its HLO metadata
(``op_name``), which the trace's ``/host:metadata`` plane holds. So a mode's layer table is its ops
table (self time per steady step, every thread) grouped by that scope.

What carries no scope is not placed, and the table says how much: the tf.function call itself on
the main thread (the wait for its graph, whose ops are placed), tf.data's and Keras' own ops
outside the model.

An eager op is named by its type only (``Conv2D``), so an eager mode's layers come from its
python-tracer pass instead (``python_layers_table``): the main thread's time, category by
category, goes to the innermost layer ``call`` frame above it (the op, its dispatch and the
Python inside the layer's ``call``); what is under Keras' own frames but no layer's (the fit loop,
callbacks, data adapters, the optimizer, and training's backward pass, which eager runs under the
train step's ``tape.gradient``) is Keras' own row; the rest is not placed. The tracer
names a frame by file and first line only, so a row is a layer class's ``call`` (the layers that
share it listed, from the capture's ``layer_calls``), not one instance. The python tracer
inflates Python, so each category's time is scaled to the host pass's mean of that category:
the pass gives how a category splits over the layers, the host pass how much of it there is.

Each table also comes step by step (``layer_steps``, ``ModeResult.layer_steps``): each row's time
in each steady step, cut at the steps' edges as the table sums them (graph and XLA: the ops' self
time per step, ``results.op_step_totals``; eager: the python-tracer pass's steps, each category
scaled as the table's). Those are the samples of a layer's ratio between two modes
(``traceinsight.layer_matrix``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from traceinsight.analysis import native, rules
from traceinsight.analysis.attribute import Attribution
from traceinsight.analysis.hotspots import frame_group, parse_frame
from traceinsight.analysis.names import STEP_NUM
from traceinsight.analysis.results import PS_PER_MS, in_windows, owned_by_window, steady_windows
from traceinsight.columns import Columns, text
from traceinsight.model import CATEGORIES, steady_mask
from traceinsight.resample import unique

# every layer of the mode, then one row for what no layer holds; layer_class: the layer's class
# ``call`` (``Class.call``, from the capture's ``layer_calls``; "" where not recorded), the key
# that matches a graph mode's layers with an eager mode's rows
LAYER_COLUMNS = ("layer", "placed", "ms_per_step", "calls_per_step", "ops", "share", "source",
                 "layer_class")
# the layers table step by step (``ModeResult.layer_steps``): each row's time in each steady step
STEP_COLUMNS = ("layer", STEP_NUM, "ms")
NOT_PLACED = "(not in a layer)"
GRADIENT_PREFIX = "gradient_tape/"
SCOPE = "scope"                # the op's own name
HLO = "hlo metadata"           # the HLO op's op_name metadata
PYTHON_FRAMES = "python-tracer frames"   # the layer call frames of the python-tracer pass
# Keras' frames that only lead into a layer's ``call`` (Keras 2 and 3)
_WRAPPERS = frozenset({"__call__", "error_handler"})
# eager training runs the backward pass under the train step's ``tape.gradient``, outside every
# layer's call frame: it is in this row, not the layers' (a graph's gradient ops carry the scope)
KERAS_OWN = "(Keras' own: backward pass, optimizer, fit loop, callbacks, data adapters)"
# an eager layers table's extra columns: the row's time by category (ms per steady step, scaled
# to the host pass), and the layer calls per step (the frames; an op table's rows have none)
CATEGORY_COLUMNS = tuple(f"{c}_ms" for c in CATEGORIES)
# a main-thread row of a tf.function call: its time is the wait for its graph's ops, which are
# placed themselves (the ops table's type for it)
FUNCTION_TYPE = "tf.function"


def layer_of(op_name: str, op_names: frozenset[str] | set[str] = frozenset()) -> str | None:
    """The layer path of a TF op name (``model/layer/Op`` -> ``model/layer``), training's
    gradient ops with their layer; None for a name with no scope. A JAX op name's
    transformations are no layers (``jit(predict_step)/block1/conv`` -> ``block1``).

    An op's own name can be a scope too (``model/conv/convolution/ExpandDims_1`` was built inside
    op ``model/conv/convolution``; ``model/dense/BiasAdd/ReadVariableOp`` inside ``BiasAdd``):
    the path is cut before the first component that is an op of the trace (``op_names``) or
    that is named like one (TF names ops after their CamelCase type; Keras names layers in
    snake_case)."""
    name = op_name[len(GRADIENT_PREFIX):] if op_name.startswith(GRADIENT_PREFIX) else op_name
    # JAX's op_name metadata holds its transformations as scopes (``jit(predict_step)/block1/
    # jit(relu)/max``; training's ``transpose(jvp(model))/...``): none is a layer, and the
    # backward pass's ops go with their layer as in TF's ``gradient_tape/``. TF op names never
    # hold a parenthesis.
    parts = [p for p in name.split("/") if "(" not in p]
    keep = 0
    for i, part in enumerate(parts[:-1]):
        if not part or part[:1].isupper() or "/".join(parts[:i + 1]) in op_names:
            break
        keep = i + 1
    return "/".join(parts[:keep]) if keep else None


def hlo_scopes(hlo_op_names: Mapping[tuple[str, str], str]) -> dict[str, str]:
    """HLO instruction name -> the TF op name its metadata records, where every module that has
    an instruction of that name agrees (the ops table names HLO ops without their module)."""
    out: dict[str, str] = {}
    clash: set[str] = set()
    for (_module, instr), op in hlo_op_names.items():
        if not op:
            continue
        if out.setdefault(instr, op) != op:
            clash.add(instr)
    for instr in clash:
        del out[instr]
    return out


def class_of_layer(path: str, layer_calls: Mapping[str, Any] | None) -> str:
    """The class ``call`` (``layer_calls``' function) of a graph layer path, by the deepest of its
    parts that names a recorded layer; a graph's scope may carry a uniquifying ``_N`` the layer's
    name has not (``model_1/block1_dwconv_1`` is layer ``block1_dwconv``). "" when none does."""
    if not layer_calls:
        return ""
    by_name = {str(n): str(e.get("function") or "") for e in layer_calls.values()
               if isinstance(e, Mapping) for n in e.get("layers") or []}
    for part in reversed(path.split("/")):
        for name in (part, re.sub(r"_\d+$", "", part)):
            if name in by_name:
                return by_name[name]
    return ""


def layers_table(ops: Columns, hlo: Mapping[str, str] | None = None,
                 layer_calls: Mapping[str, Any] | None = None) -> Columns:
    """One row per layer (largest first) and one for what no layer holds (``NOT_PLACED``, placed
    False): ms_per_step and calls_per_step (the ops' self time and calls per steady step, summed over
    threads), ops (distinct op names), share (of all op self time but the tf.function calls' own
    rows), source (``SCOPE``: the op names; ``HLO``: the HLO ops' metadata). Empty where the mode
    has no op or no op carries a layer scope."""
    if ops.empty:
        return Columns.no_rows(LAYER_COLUMNS)
    names = [str(o) for o in ops["op"]]
    keep = np.asarray(ops["type"], dtype=object) != FUNCTION_TYPE
    self_ms = np.asarray(ops["self_ms_per_step"], dtype=float)
    calls = np.asarray(ops["calls_per_step"], dtype=float)
    layer, source = _placements(names, hlo)
    placed = np.array([x is not None for x in layer]) & keep
    if not placed.any():
        return Columns.no_rows(LAYER_COLUMNS)
    total = float(self_ms[keep].sum())
    rows: dict[str, dict] = {}
    for i in np.flatnonzero(keep).tolist():
        key = layer[i] if placed[i] else NOT_PLACED
        r = rows.setdefault(key, {"ms": 0.0, "calls": 0.0, "ops": set(), "source": set()})
        r["ms"] += self_ms[i]
        r["calls"] += calls[i]
        r["ops"].add(names[i])
        if placed[i]:
            r["source"].add(source[i])
    # the layers by time (ties by name, so the table is the same from run to run), then the rest
    order = sorted((k for k in rows if k != NOT_PLACED), key=lambda k: (-rows[k]["ms"], k))
    if NOT_PLACED in rows:
        order.append(NOT_PLACED)
    return Columns({
        "layer": text(order),
        "placed": np.array([k != NOT_PLACED for k in order], dtype=bool),
        "ms_per_step": np.array([rows[k]["ms"] for k in order]),
        "calls_per_step": np.array([rows[k]["calls"] for k in order]),
        "ops": np.array([len(rows[k]["ops"]) for k in order], dtype=np.int64),
        "share": np.array([rows[k]["ms"] / total if total > 0 else np.nan for k in order]),
        "source": text([" + ".join(sorted(rows[k]["source"])) for k in order]),
        "layer_class": text([class_of_layer(k, layer_calls) if k != NOT_PLACED else ""
                             for k in order])})


def _placements(names: list[str], hlo: Mapping[str, str] | None
                ) -> tuple[list[str | None], list[str]]:
    """Per op name of an ops table: its layer path (None: no scope) and how it was found
    (``SCOPE`` or ``HLO``)."""
    layer: list[str | None] = []
    source: list[str] = []
    known = frozenset(names) | frozenset((hlo or {}).values())
    for n in names:
        found = layer_of(n, known)
        via = SCOPE
        if found is None and hlo is not None and n in hlo:
            found, via = layer_of(hlo[n], known), HLO
        layer.append(found)
        source.append(via)
    return layer, source


def _steps_columns(labels: list[str], per_step: np.ndarray, step_nums: np.ndarray) -> Columns:
    """The per-step rows of a layers table: (layer, step_num, ms) for every row (``labels``, in
    the table's order) and every steady step, zeros included (``per_step``: rows x steps, ms)."""
    n_rows, n_steps = per_step.shape
    return Columns({"layer": text([lab for lab in labels for _ in range(n_steps)]),
                    STEP_NUM: np.tile(np.asarray(step_nums, dtype=np.int64), n_rows),
                    "ms": np.ascontiguousarray(per_step, dtype=float).reshape(-1)})


def layer_steps(table: Columns, ops: Columns, op_steps: Columns, step_nums: np.ndarray,
                hlo: Mapping[str, str] | None = None) -> Columns:
    """A graph or XLA layers table (``layers_table(ops, hlo)``) step by step: each row's op self
    time (ms) in each steady step (``op_steps``: ``results.op_step_totals``, whose ``window`` is
    the index into ``step_nums``), placed as the table places it; its rows add up, step by step,
    to the table's ``ms_per_step`` times the steps. Empty with the table."""
    if table.empty or op_steps.empty or not len(step_nums):
        return Columns.no_rows(STEP_COLUMNS)
    names = [str(o) for o in ops["op"]]
    layer, _ = _placements(names, hlo)
    # the table's row of each op name (the tf.function calls' own rows in none)
    row_of_name = {n: (lay if lay is not None else NOT_PLACED)
                   for n, lay, typ in zip(names, layer, ops["type"].tolist()) if typ != FUNCTION_TYPE}
    labels = [str(x) for x in table["layer"]]
    index = {lab: i for i, lab in enumerate(labels)}
    rows = np.array([index.get(row_of_name.get(str(n), ""), -1) if t != FUNCTION_TYPE else -1
                     for n, t in zip(op_steps["op"].tolist(), op_steps["type"].tolist())],
                    dtype=np.int64)
    win = np.asarray(op_steps["window"], dtype=np.int64)
    ok = rows >= 0
    per_step = np.zeros((len(labels), len(step_nums)))
    np.add.at(per_step, (rows[ok], win[ok]), np.asarray(op_steps["self_ps"], dtype=float)[ok])
    return _steps_columns(labels, per_step / PS_PER_MS, step_nums)


def coverage_note(table: Columns, ops: Columns, op_wall_ms: float) -> str:
    """What a graph or XLA mode's layers table measures beside the mode's op category, in words:
    the table sums the ops' self time over every thread (ops run in parallel, so it is work, not
    wall time), while the op category is the main thread's wall inside the function call, which
    also holds the call's own time between its ops (``FUNCTION_TYPE`` rows: the wait for its graph,
    the runtime's own work), and no layer can hold that. Traced figures, per steady step."""
    total = float(np.nansum(np.asarray(table["ms_per_step"], dtype=float)))
    placed = float(np.nansum(np.asarray(table["ms_per_step"], dtype=float)[np.asarray(table["placed"], dtype=bool)]))
    is_call = np.asarray(ops["type"], dtype=object) == FUNCTION_TYPE
    call_ms = float(np.asarray(ops["self_ms_per_step"], dtype=float)[is_call].sum())
    from traceinsight.present import ms
    return (f"layers: the table holds {ms(total)} ms/step of op self time summed over every thread "
            f"({ms(placed)} placed in layers, {ms(total - placed)} in none); ops run in parallel, so "
            f"this is work, not the step's wall: the mode's op category (traced, the main thread's "
            f"wall) is {ms(op_wall_ms)} ms/step, of which {ms(call_ms)} is the tf.function call's own "
            "time between its ops (the wait for its graph, the runtime's own work), which no layer "
            "holds")


def _class_of_frame(frame: tuple[str, int, str], layer_calls: Mapping[str, Any] | None) -> str:
    entry = (layer_calls or {}).get(f"{frame[0]}:{frame[1]}")
    return str(entry.get("function") or "") if isinstance(entry, Mapping) else ""


def _row_label(frame: tuple[str, int, str], layer_calls: Mapping[str, Any] | None) -> str:
    """A layer frame's row: the function's qualified name and the layers whose call it is, as the
    capture recorded them; else the frame itself (``call (file:line)``)."""
    file, line, func = frame
    entry = (layer_calls or {}).get(f"{file}:{line}")
    if not isinstance(entry, Mapping):
        return f"{func} ({file}:{line})"
    names = [str(n) for n in entry.get("layers") or []]
    shown = ", ".join(names[:3]) + (f", … ({len(names)} layers)" if len(names) > 3 else "")
    return f"{entry.get('function') or func} [{shown}]" if shown else str(entry.get("function"))


def python_layers_table(a: Attribution, steps: Columns, *, host_means: Mapping[str, float] | None,
                        layer_calls: Mapping[str, Any] | None = None,
                        user_files: frozenset[str] = frozenset(),
                        python_files: dict[str, list[str]] | None = None
                        ) -> tuple[Columns, Columns]:
    """An eager mode's layers from its python-tracer pass (``a``, ``steps``: that pass's
    attribution and steps; see the module docstring). A layer frame is one the capture recorded
    as a layer's ``call`` (``layer_calls``: ``file:line`` -> function and layers); without that
    record, every frame of a function named ``call`` in the user's or Keras' code. The columns
    of ``layers_table``, plus ``<category>_ms`` and ``layer_calls_per_step``; ``calls_per_step``
    counts the main-thread op calls under the row's frames. Each category is scaled to
    ``host_means`` (category -> the host pass's mean ms per steady step; None: the pass's own
    times). Empty where no layer frame owns time in a steady step. Returned with its rows step
    by step (``layer_steps``' columns: each row's time in each steady step of the pass, every
    category scaled as the table's)."""
    t = a.table
    ws, we, n = steady_windows(a, steps)
    none = Columns.no_rows(LAYER_COLUMNS), Columns.no_rows(STEP_COLUMNS)
    if n == 0 or a.main_line < 0 or not len(t.names):
        return none
    frames: dict[int, tuple[str, int, str]] = {nid: parse_frame(nm) for nid, nm in enumerate(t.names)
                                               if nm.startswith("$")}
    is_layer = np.zeros(len(t.names), dtype=bool)
    is_keras = np.zeros(len(t.names), dtype=bool)
    is_wrapper = np.zeros(len(t.names), dtype=bool)
    for nid, (file, line, func) in frames.items():
        group = frame_group(file, user_files, python_files)
        is_wrapper[nid] = group == "keras" and func in _WRAPPERS
        if layer_calls:
            is_layer[nid] = f"{file}:{line}" in layer_calls
        else:
            is_layer[nid] = func == "call" and group in ("user", "keras")
        is_keras[nid] = group == "keras"
    if not is_layer.any():
        return none
    main = (t.line == a.main_line) & ~a.outside
    # a layer's call is entered through Keras' wrappers (``Layer.__call__``, ``Operation.__call__``,
    # the traceback filter's ``error_handler``): their own time (name scope, casting, input
    # checks) is that layer's too, so each call frame claims the run of wrapper frames above it
    calls = np.nonzero(is_layer[t.name] & main)[0]
    marker = np.zeros(len(t.name), dtype=bool)
    marker_row = np.full(len(t.name), -1, dtype=np.int64)
    marker[calls] = True
    marker_row[calls] = t.name[calls]
    for ev in calls.tolist():
        p = int(a.parent[ev])
        while p >= 0 and is_wrapper[t.name[p]] and main[p] and not marker[p]:
            marker[p] = True
            marker_row[p] = t.name[ev]
            p = int(a.parent[p])
    layer_of_event = native.nearest_marked(marker, a.parent)
    keras_of_event = native.nearest_marked(is_keras[t.name] & main, a.parent)
    # rows: name ids of layer frames, then Keras' own, then the rest
    keras_row, rest_row = len(t.names), len(t.names) + 1

    def row_of(events: np.ndarray) -> np.ndarray:
        lay = layer_of_event[events]
        ker = keras_of_event[events]
        return np.where(lay >= 0, marker_row[np.maximum(lay, 0)],
                        np.where(ker >= 0, keras_row, rest_row))

    n_rows = len(t.names) + 2
    by_cat: dict[str, np.ndarray] = {}
    per_step = np.zeros((n_rows, n))
    for c in CATEGORIES:
        owners, win, ps = owned_by_window(a, ws, we, rules.CAT[c])
        rows_of_owner = row_of(owners)
        ms = np.bincount(rows_of_owner, weights=ps.astype(float), minlength=n_rows) / PS_PER_MS / n
        cells = np.bincount(rows_of_owner * n + win, weights=ps.astype(float),
                            minlength=n_rows * n).reshape(n_rows, n) / PS_PER_MS
        total = float(ms.sum())
        if host_means is not None and total > 0:
            factor = float(host_means.get(c, 0.0)) / total
            ms, cells = ms * factor, cells * factor
        by_cat[c] = ms
        per_step += cells
    # op calls (main-thread op events) and layer calls (the frames) in the steady windows
    ops = np.nonzero(main & np.array([rules.op_of_name(nm) is not None for nm in t.names],
                                     dtype=bool)[t.name])[0]
    ops = ops[in_windows(t.start[ops], ws, we) >= 0]
    op_rows = row_of(ops)
    op_calls = np.bincount(op_rows, minlength=n_rows) / n
    distinct = unique(op_rows * (len(t.names) + 1) + t.name[ops]) // (len(t.names) + 1)
    op_names = np.bincount(distinct, minlength=n_rows)
    calls = calls[in_windows(t.start[calls], ws, we) >= 0]
    layer_calls_n = np.bincount(t.name[calls], minlength=n_rows) / n
    total_ms = np.sum([by_cat[c] for c in CATEGORIES], axis=0)
    rows = [r for r in np.nonzero(total_ms[:len(t.names)] > 0)[0].tolist() if is_layer[r]]
    if not rows:
        return none
    rows.sort(key=lambda r: (-total_ms[r], t.names[r]))
    labels = [_row_label(frames[r], layer_calls) for r in rows]
    for extra, label in ((keras_row, KERAS_OWN), (rest_row, NOT_PLACED)):
        if total_ms[extra] > 0:
            rows.append(extra)
            labels.append(label)
    grand = float(total_ms.sum())
    placed = np.array([r < len(t.names) for r in rows], dtype=bool)
    out: dict[str, Any] = {
        "layer": text(labels), "placed": placed,
        "ms_per_step": total_ms[rows],
        "calls_per_step": op_calls[rows],
        "ops": op_names[rows].astype(np.int64),
        "share": total_ms[rows] / grand if grand > 0 else np.full(len(rows), np.nan),
        "source": text([PYTHON_FRAMES if p else "" for p in placed.tolist()]),
        "layer_class": text([_class_of_frame(frames[r], layer_calls) if r < len(t.names) else ""
                             for r in rows]),
        "layer_calls_per_step": layer_calls_n[rows]}
    for c in CATEGORIES:
        out[f"{c}_ms"] = by_cat[c][rows]
    steady = steady_mask(steps)
    return Columns(out), _steps_columns(labels, per_step[rows],
                                        np.asarray(steps[STEP_NUM], dtype=np.int64)[steady])
