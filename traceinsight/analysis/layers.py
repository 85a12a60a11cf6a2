"""Where in the model: a mode's op time by Keras layer, from the names the trace carries.

A graph op is named after the name scope it was built in, and Keras builds each layer's ops in a
scope of the layer's name inside the model's: ``functional_1/conv1d_1/convolution`` is an op of
layer ``conv1d_1`` of model ``functional_1`` (nested models add a level; training's gradient ops
are built under ``gradient_tape/`` + the same path, and are counted with the layer). An XLA op
(``convolution.3``, a fusion) keeps the TF op it was lowered from in its HLO metadata
(``op_name``), which the trace's ``/host:metadata`` plane holds. So a mode's layer table is its ops
table (self time per steady step, every thread) grouped by that scope.

What carries no scope is not placed, and the table says how much: the tf.function call itself on
the main thread (the wait for its graph, whose ops are placed), eager ops (an eager op is named by
its type only: ``Conv2D``; the python-tracer pass's layer ``call`` frames are in the Python
hotspots), tf.data's and Keras' own ops outside the model.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from traceinsight.columns import Columns, text

# every layer of the mode, then one row for what no layer holds
LAYER_COLUMNS = ("layer", "placed", "ms_per_step", "calls_per_step", "ops", "share", "source")
NOT_PLACED = "(not in a layer)"
GRADIENT_PREFIX = "gradient_tape/"
SCOPE = "scope"                # the op's own name
HLO = "hlo metadata"           # the HLO op's op_name metadata
# a main-thread row of a tf.function call: its time is the wait for its graph's ops, which are
# placed themselves (the ops table's type for it)
FUNCTION_TYPE = "tf.function"


def layer_of(op_name: str, op_names: frozenset[str] | set[str] = frozenset()) -> str | None:
    """The layer path of a TF op name (``model/layer/Op`` -> ``model/layer``), training's
    gradient ops with their layer; None for a name with no scope.

    An op's own name can be a scope too (``model/conv/convolution/ExpandDims_1`` was built inside
    op ``model/conv/convolution``; ``model/dense/BiasAdd/ReadVariableOp`` inside ``BiasAdd``):
    the path is cut before the first component that is an op of the trace (``op_names``) or
    that is named like one (TF names ops after their CamelCase type; Keras names layers in
    snake_case)."""
    name = op_name[len(GRADIENT_PREFIX):] if op_name.startswith(GRADIENT_PREFIX) else op_name
    parts = name.split("/")
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


def layers_table(ops: Columns, hlo: Mapping[str, str] | None = None) -> Columns:
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
        "source": text([" + ".join(sorted(rows[k]["source"])) for k in order])})
