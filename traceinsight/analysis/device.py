"""The device side of a trace (GPU; TPU planes where they hold the same kind of lines): per step and
per device, kernel compute, copies (H2D / D2H / D2D), idle time and the host's kernel launches; and
kernels by name, each with the TF op it ran for.

What is counted, and why:

* only the device planes' own lines (CUDA streams). XProf's derived lines (``Steps``,
  ``TensorFlow Ops``, ``TensorFlow Name Scope``, ... when XProf preprocessed the file) repeat the
  kernels' times and are never summed;
* device compute = the summed durations of kernels inside the step window (as XProf's
  ``overview_page`` counts it; concurrent streams can make it exceed the wall time); copies by
  kind likewise; busy = the union of all device activity, idle = step wall time - busy;
* a kernel's TF op is its ``tf_op`` stat, else the innermost TraceMe annotation it was launched
  under (``level 0`` / ``annotation`` stats: ``scope/name:OpType``), else the event of XProf's
  derived ``TensorFlow Ops`` line at the same time on the same device;
* which step a device event belongs to, first rule that applies (``DeviceAnalysis.attribution``
  and a note say which): a device's own ``Steps`` event for that step when the trace has one (each
  device's step differs); else, with host step windows, the host step's ``group_id`` (the stat TF's
  event grouping writes on the step's host event and on the device events it launched, as XProf's
  ``group_events`` assigns it); else launch correlation (the ``correlation_id`` of a host-side
  kernel launch inside the step's window, and of the kernel it launched); else the time window
  (device work inside the step's host window, clipped to it). A GPU runs kernels asynchronously,
  after the step's host marker has closed: under the first three rules they still count in their
  step, under the last they land in the next step or in none;
* ``span_ms``: the step's device time on that device, first start to last end of its events
  (under the window rule: the window); idle = span - busy; ``after_host_ms``: how far the device's
  last event of the step ends after the host step's end (NaN under the window rules).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from traceinsight.analysis.events import EventTable
from traceinsight.analysis.names import (
    ANNOTATION,
    CORRELATION_ID,
    CU_CALL,
    CU_MEMCPY,
    CUDA_CALL,
    CUDA_MEMCPY,
    DEVICE_PLANE,
    GROUP_ID,
    HIP_CALL,
    HIP_MEMCPY,
    HLO_MODULE,
    HLO_OP,
    HOST_METADATA,
    HOST_PLANE,
    LEVEL_0,
    MEMCPY,
    MEMCPY_D2D,
    MEMCPY_D2H,
    MEMCPY_H2D,
    MEMCPY_P2P,
    MEMSET,
    NAME_STAT,
    STEP_NUM,
    STEPS_LINE,
    TF_OP,
    TF_OPS_LINE,
    TPU_PLANE,
    XLA_MODULE_OP,
    XLA_OPS_LINE,
)
from traceinsight.analysis.steps import STEPS_LINE_ID, is_derived_line
from traceinsight.columns import Columns, text

if TYPE_CHECKING:
    import pandas as pd

PS_PER_MS = 1e9
STEP_COLUMNS = ["host", "device", STEP_NUM, "wall_ms", "compute_ms", "h2d_ms", "d2h_ms", "d2d_ms",
                "busy_ms", "idle_ms", "launch_ms", "kernels", "span_ms", "after_host_ms"]
KERNEL_COLUMNS = ["op", "op_type", "kernel", "calls", "device_ms", "ms_per_step", "share"]
DEVICE_COLUMNS = ["host", "device", "steps", "wall_ms", "compute_ms", "h2d_ms", "d2h_ms", "d2d_ms",
                  "idle_ms", "launch_ms", "span_ms", "after_host_ms", "slowest"]

KIND_COMPUTE, KIND_H2D, KIND_D2H, KIND_D2D, KIND_MEMSET = range(5)


@dataclass(frozen=True)
class DeviceAnalysis:
    """A trace's device planes analysed: per step and device, per device, and its kernels."""

    steps: Columns             # STEP_COLUMNS: one row per (host, device, step)
    devices: Columns           # DEVICE_COLUMNS: medians over steady steps per device
    kernels: Columns           # KERNEL_COLUMNS: steady steps, all devices
    notes: tuple[str, ...]
    attribution: str = "window"  # "device steps", "group_id", "correlation_id" or "window"
    # every event's step index (-1: none) where the device events were tied to the steps event
    # by event (group_id, launch correlation, module executions); None by time window or by the
    # device's own Steps line
    event_step: np.ndarray | None = field(default=None, compare=False)


def _kind(name: str) -> int:
    if name.startswith(MEMCPY_H2D):
        return KIND_H2D
    if name.startswith(MEMCPY_D2H):
        return KIND_D2H
    if name.startswith((MEMCPY_D2D, MEMCPY_P2P, MEMCPY)):
        return KIND_D2D
    if name.startswith(MEMSET):
        return KIND_MEMSET
    return KIND_COMPUTE


def device_lines(table: EventTable) -> dict[int, list[int]]:
    """plane index -> its own (non-derived) lines holding events, for device planes."""
    out: dict[int, list[int]] = {}
    for i, ln in enumerate(table.lines):
        p = table.planes[ln.plane]
        if p.name.startswith(DEVICE_PLANE) and ln.n_events and (
                ln.name == XLA_OPS_LINE if is_tpu(p.name) else not is_derived_line(ln)):
            out.setdefault(ln.plane, []).append(i)
    return out


def is_tpu(plane_name: str) -> bool:
    """A TPU core's plane: its HLO ops are on its ``XLA Ops`` line (the profiler writes them there,
    no kernels below them), which on GPUs is XProf's derived copy of the kernels; the other lines
    (``XLA Modules``, ``Async XLA Ops``, ``XLA TraceMe``) repeat or wrap those ops' time."""
    return plane_name.startswith(TPU_PLANE)


def _union_ps(s: np.ndarray, e: np.ndarray) -> int:
    if not len(s):
        return 0
    o = np.argsort(s, kind="stable")
    s, e = s[o], e[o]
    run_end = np.maximum.accumulate(e)
    new = np.r_[True, s[1:] > run_end[:-1]]
    starts = s[new]
    ends = np.maximum.reduceat(e, np.nonzero(new)[0])
    return int((ends - starts).sum())


def _jax_framework_ops(table: EventTable, pos: dict[int, int]) -> dict[int, str]:
    """JAX: the framework op of each kernel (event index -> op) is XLA's op_name of its HLO
    instruction, from the HLO protos the trace keeps (as XProf reads it), else the kernel's
    ``name`` stat."""
    from traceinsight.analysis.hlo_protos import hlo_op_names
    out: dict[int, str] = {}
    hlo_names = hlo_op_names(table.files) if HLO_OP in table.stat_str and any(
        p.name == HOST_METADATA for p in table.planes) else {}
    if hlo_names and HLO_MODULE in table.stat_str:
        mod = dict(zip(*(a.tolist() for a in table.stat_str[HLO_MODULE])))
        for e, v in zip(*(a.tolist() for a in table.stat_str[HLO_OP])):
            if e in pos and e in mod:
                out[e] = hlo_names.get((mod[e], v), "")
    elif NAME_STAT in table.stat_str:
        idx, val = table.stat_str[NAME_STAT]
        out = {int(e): str(v) for e, v in zip(idx.tolist(), val.tolist()) if int(e) in pos and v}
    return out


def kernel_ops(table: EventTable, ev: np.ndarray) -> list[str]:
    """The TF op each device event ran for (``""`` when the trace does not say)."""
    out = np.full(len(ev), "", dtype=object)
    found = np.zeros(len(ev), dtype=bool)
    pos = {int(e): i for i, e in enumerate(ev.tolist())}
    jax_name: dict[int, str] | None = None   # read on the first JAX kernel (tf_op "XlaModule:")
    for stat in (TF_OP, LEVEL_0, ANNOTATION):
        if stat not in table.stat_str:
            continue
        idx, val = table.stat_str[stat]
        for e, v in zip(idx.tolist(), val.tolist()):
            i = pos.get(e)
            if i is not None and not found[i] and v:
                # an annotation stack "outer::inner#shape=...#": the innermost, without its stats
                op = str(v).split("::")[-1].split("#")[0]
                if op == XLA_MODULE_OP:
                    # JAX: the framework op is the ``name`` stat (the primitive's name stack);
                    # without one, work of the module itself (argument copies): no op, as
                    # XProf's kernel_stats leaves it
                    if jax_name is None:
                        jax_name = _jax_framework_ops(table, pos)
                    op = jax_name.get(e, "")
                    found[i] = True
                    if not op:
                        continue
                if op.endswith(":") and "/" in op:   # a TPU op's tf_op: ``jit(f)/add:``
                    op = op[:-1]
                if ":" not in op and (stat == TF_OP and v == XLA_MODULE_OP or "/" in op):
                    # JAX's framework op: the name stack of the primitive, ``jit(f)/dot_general``;
                    # its type is the primitive
                    op = f"{op}:{op.rsplit('/', 1)[-1]}"
                out[i] = op
                found[i] = True
    if not found.all():
        # XProf's derived "TensorFlow Ops" line: an event at the same start on the same plane
        tfop_lines = {ln.plane: i for i, ln in enumerate(table.lines)
                      if ln.name == TF_OPS_LINE or ln.id == STEPS_LINE_ID + 3}
        for plane, li in tfop_lines.items():
            ops = np.nonzero(table.line == li)[0]
            if not len(ops):
                continue
            at = {int(s): int(n) for s, n in zip(table.start[ops].tolist(), table.name[ops].tolist())}
            disp: dict[int, int] = {}
            for i in np.nonzero(~found)[0].tolist():
                e = int(ev[i])
                if table.lines[table.line[e]].plane != plane:
                    continue
                n = at.get(int(table.start[e]))
                if n is not None:
                    name = table.names[n]
                    out[i] = name if ":" in name else f"{name}:{disp.get(n, '')}".rstrip(":")
                    found[i] = True
    return out.tolist()


def analyze_devices(table: EventTable, step_start: np.ndarray, step_end: np.ndarray,
                    step_num: np.ndarray, steady: np.ndarray,
                    steps_are_groups: bool = False,
                    event_step: tuple[np.ndarray, str] | None = None) -> DeviceAnalysis | None:
    """Per step and device figures, per device medians and the kernel table; None when the trace
    has no device activity. ``steps_are_groups``: the steps are the device events' ``group_id``
    groups (no host events), numbered by group. ``event_step``: the step index of every event
    (-1: none) and the rule's key, when the steps were found from the device events themselves
    (JAX module executions)."""
    lines_of = device_lines(table)
    if not lines_of:
        return None
    names = table.names
    kind_of_name = np.array([_kind(n) for n in names], dtype=np.int8)
    # host-side kernel launches: CUDA launch API calls, or (TF's GPU tracer) host events named
    # after the kernel they launch
    kernel_names = set()
    dev_ev_all = np.nonzero(np.isin(table.line, [li for ls in lines_of.values() for li in ls]))[0]
    for n in np.unique(table.name[dev_ev_all]).tolist():
        if kind_of_name[n] == KIND_COMPUTE:
            kernel_names.add(n)
    launch_name = np.array([("Launch" in n and n.startswith((CUDA_CALL, CU_CALL, HIP_CALL)))
                            or i in kernel_names for i, n in enumerate(names)] or [False])
    host_planes = {i for i, p in enumerate(table.planes) if p.name.startswith(HOST_PLANE)}
    host_line = np.array([ln.plane in host_planes for ln in table.lines] or [False])
    launch_ev = np.nonzero(launch_name[table.name] & host_line[table.line]
                           & (table.end > table.start))[0] if len(table) else np.zeros(0, np.int64)

    # a device's own step windows (XProf's derived Steps line), by step key
    own_steps: dict[int, dict[int, tuple[int, int]]] = {}
    gid = table.stat_int_column(GROUP_ID) if GROUP_ID in table.stat_int else None
    for i, ln in enumerate(table.lines):
        if ln.plane in lines_of and (ln.id == STEPS_LINE_ID or ln.name == STEPS_LINE):
            for e in np.nonzero(table.line == i)[0].tolist():
                key = int(gid[e]) if gid is not None and gid[e] >= 0 else _int(names[table.name[e]])
                own_steps.setdefault(ln.plane, {})[key] = (int(table.start[e]), int(table.end[e]))

    # a device's Steps events are keyed by group_id: the host step's group when it has one
    groups = _window_groups(table, step_start, step_end) if own_steps else []
    own_key = [g if g is not None else int(n) for g, n in
               zip(groups or [None] * len(step_num), step_num.tolist())]
    attr: np.ndarray | None
    if event_step is not None:
        attr, attribution, attr_note = event_step[0], event_step[1], ""
    else:
        attr, attribution, attr_note = _attribution(table, dev_ev_all, step_start, step_end,
                                                    bool(own_steps),
                                                    step_num if steps_are_groups else None)
    copy_kind = _launched_copies(table, dev_ev_all, host_line)
    rows = []
    kernel_rows = []
    for plane, lines in sorted(lines_of.items(), key=lambda kv: _device_order(table.planes[kv[0]].name)):
        pinfo = table.planes[plane]
        ev = np.nonzero(np.isin(table.line, lines))[0]
        s, e, named = table.start[ev], table.end[ev], kind_of_name[table.name[ev]]
        # copies the device runs as kernels (ROCm's __amd_rocclr_copyBuffer): their kind is the
        # host's copy call that launched them; they stay kernels in the kernel table, as XProf's
        # kernel_stats lists them
        kind = named if copy_kind is None else np.where(
            (named == KIND_COMPUTE) & (copy_kind[ev] >= 0), copy_kind[ev], named).astype(np.int8)
        ops = None
        for k in range(len(step_start)):
            w0, w1 = int(step_start[k]), int(step_end[k])
            own = own_steps.get(plane, {}).get(own_key[k])
            if own is not None:
                w0, w1 = own
            if own is None and own_steps:
                continue  # steps from XProf's Steps lines: a device without one ran no step
            if attr is not None:
                # whole events of the step's group, wherever they ran
                cs, ce = s, e
                inside = attr[ev] == k
            else:
                cs, ce = np.maximum(s, w0), np.minimum(e, w1)
                inside = ce > cs
            dur = (ce - cs)[inside]
            kk = kind[inside]
            lm = (table.start[launch_ev] < w1) & (table.end[launch_ev] > w0)
            launch = (np.minimum(table.end[launch_ev][lm], w1)
                      - np.maximum(table.start[launch_ev][lm], w0)).sum()
            wall = w1 - w0
            busy = _union_ps(cs[inside], ce[inside])
            if attr is None:
                span, after = wall, float("nan")
            elif inside.any():
                first, last = int(cs[inside].min()), int(ce[inside].max())
                span = last - first
                after = (last - w1) / PS_PER_MS if not steps_are_groups and event_step is None \
                    else float("nan")
            else:
                span, after = 0, float("nan")
            rows.append({"host": pinfo.host, "device": pinfo.name, STEP_NUM: int(step_num[k]),
                         "wall_ms": wall / PS_PER_MS,
                         "compute_ms": dur[kk == KIND_COMPUTE].sum() / PS_PER_MS,
                         "h2d_ms": dur[kk == KIND_H2D].sum() / PS_PER_MS,
                         "d2h_ms": dur[kk == KIND_D2H].sum() / PS_PER_MS,
                         "d2d_ms": dur[(kk == KIND_D2D) | (kk == KIND_MEMSET)].sum() / PS_PER_MS,
                         "busy_ms": busy / PS_PER_MS, "idle_ms": max(span - busy, 0) / PS_PER_MS,
                         "launch_ms": float(launch) / PS_PER_MS,
                         "kernels": int((kk == KIND_COMPUTE).sum()), "span_ms": span / PS_PER_MS,
                         "after_host_ms": after, "_steady": bool(steady[k])})
            if steady[k]:
                sel = np.nonzero(inside & (named == KIND_COMPUTE))[0]
                if len(sel):
                    if ops is None:
                        ops = kernel_ops(table, ev)
                    for i in sel.tolist():
                        kernel_rows.append((ops[i], names[table.name[ev[i]]],
                                            int(ce[i] - cs[i])))
    n_steady = int(np.asarray(steady, dtype=bool).sum())
    notes = [attr_note] if attr_note else []
    devices = _device_summary(rows)
    if len(devices) > 1:
        slow = devices.records()[int(np.nonzero(devices["slowest"])[0][0])]
        notes.append(f"{len(devices)} devices with activity; the slowest, {slow['device']}"
                     f"{' on ' + slow['host'] if len(set(devices['host'].tolist())) > 1 else ''}, "
                     f"sets the step ({slow['wall_ms']:.2f} ms median)")
    kernels = _kernel_table(kernel_rows, n_steady)
    return DeviceAnalysis(steps=_step_columns(rows), devices=devices,
                          kernels=kernels, notes=tuple(notes), attribution=attribution,
                          event_step=attr)


_COPY_CALLS = (("HtoD", KIND_H2D), ("DtoH", KIND_D2H), ("DtoD", KIND_D2D), ("PeerToPeer", KIND_D2D),
               ("Peer", KIND_D2D))


def _launched_copies(table: EventTable, dev_ev: np.ndarray, host_line: np.ndarray
                     ) -> np.ndarray | None:
    """The copy kind of each device event launched by a host copy call (``hipMemcpyHtoDAsync``,
    ``cuMemcpyDtoH...``), matched by ``correlation_id``; -1 elsewhere. None when the trace has no
    such launch."""
    if CORRELATION_ID not in table.stat_int or not len(dev_ev):
        return None
    kind_of = np.full(len(table.names), -1, dtype=np.int8)
    for i, n in enumerate(table.names):
        if n.startswith((HIP_MEMCPY, CU_MEMCPY, CUDA_MEMCPY)):
            kind_of[i] = next((k for key, k in _COPY_CALLS if key in n), KIND_D2D)
    if not (kind_of >= 0).any():
        return None
    corr = table.stat_int_column(CORRELATION_ID)
    launches = np.nonzero(host_line[table.line] & (kind_of[table.name] >= 0) & (corr >= 0))[0]
    if not len(launches):
        return None
    by_corr = dict(zip(corr[launches].tolist(), kind_of[table.name[launches]].tolist()))
    out = np.full(len(table), -1, dtype=np.int8)
    out[dev_ev] = [by_corr.get(c, -1) for c in corr[dev_ev].tolist()]
    return out


_TEXT_COLUMNS = {"host", "device"}
_INT_COLUMNS = {STEP_NUM, "kernels", "steps"}


def _step_columns(rows: list[dict[str, Any]]) -> Columns:
    """STEP_COLUMNS of the per (device, step) rows."""
    if not rows:
        return Columns.no_rows(STEP_COLUMNS)
    return Columns({c: text([r[c] for r in rows]) if c in _TEXT_COLUMNS else
                    np.array([r[c] for r in rows], dtype=np.int64 if c in _INT_COLUMNS else float)
                    for c in STEP_COLUMNS})


def _attribution(table: EventTable, dev_ev: np.ndarray, step_start: np.ndarray,
                 step_end: np.ndarray, own_steps: bool, group_nums: np.ndarray | None
                 ) -> tuple[np.ndarray | None, str, str]:
    """Which step each device event belongs to: a full-length array of step indices (-1: none),
    or None for the time-window rule; the rule's key and its note. ``group_nums``: the steps are
    device groups with these group ids."""
    if own_steps:
        return None, "device steps", ""
    n = len(step_start)
    if not n or not len(dev_ev):
        return None, "window", ""
    host_planes = np.array([not p.name.startswith(DEVICE_PLANE) for p in table.planes] or [False])
    plane_of_line = np.array([ln.plane for ln in table.lines], dtype=np.int64)
    on_host = host_planes[plane_of_line[table.line]]
    out = np.full(len(table), -1, dtype=np.int64)
    if group_nums is not None:
        step_of = {int(g): k for k, g in enumerate(group_nums.tolist())}
        out[dev_ev] = [step_of.get(x, -1) for x in table.stat_int_column(GROUP_ID)[dev_ev].tolist()]
        return out, GROUP_ID, ""  # the step rule already says it
    if GROUP_ID in table.stat_int:
        gid = table.stat_int_column(GROUP_ID)
        step_of_group: dict[int, int] = {}
        for k, g in enumerate(_window_groups(table, step_start, step_end)):
            if g is not None:
                step_of_group.setdefault(g, k)
        if step_of_group:
            g = gid[dev_ev]
            out[dev_ev] = [step_of_group.get(x, -1) for x in g.tolist()]
            if (out[dev_ev] >= 0).any():
                return out, GROUP_ID, _attr_note(
                    "group_id (the host step's group_id on the device events it launched, as "
                    "XProf groups them)", out, dev_ev)
    if CORRELATION_ID in table.stat_int:
        corr = table.stat_int_column(CORRELATION_ID)
        idx = np.nonzero(on_host & (corr >= 0))[0]
        ks = np.searchsorted(step_start, table.start[idx], side="right") - 1
        ok = (ks >= 0) & (table.start[idx] < step_end[np.maximum(ks, 0)])
        step_of_corr = dict(zip(corr[idx][ok].tolist(), ks[ok].tolist()))
        if step_of_corr:
            out[dev_ev] = [step_of_corr.get(x, -1) for x in corr[dev_ev].tolist()]
            if (out[dev_ev] >= 0).any():
                return out, CORRELATION_ID, _attr_note(
                    "launch correlation (the correlation_id of the host-side kernel launch made "
                    "inside the step)", out, dev_ev)
    return None, "window", ("device work attributed to steps by time window (the trace holds no "
                            "group_id or correlation_id linking device events to the host steps): "
                            "kernels that run after their step's host marker closes land in the "
                            "next step or in none")


def _window_groups(table: EventTable, step_start: np.ndarray, step_end: np.ndarray
                   ) -> list[int | None]:
    """Each step window's group_id: that of the host event that is the step (its marker, or its
    tf.function call: same start and end), None when it has none."""
    if GROUP_ID not in table.stat_int:
        return [None] * len(step_start)
    gid = table.stat_int_column(GROUP_ID)
    host_planes = np.array([not p.name.startswith(DEVICE_PLANE) for p in table.planes] or [False])
    plane_of_line = np.array([ln.plane for ln in table.lines], dtype=np.int64)
    idx = np.nonzero(host_planes[plane_of_line[table.line]] & (gid >= 0))[0]
    by_window: dict[tuple[int, int], int] = {}
    for a, b, g in zip(table.start[idx].tolist(), table.end[idx].tolist(), gid[idx].tolist()):
        by_window.setdefault((a, b), g)
    return [by_window.get((int(a), int(b))) for a, b in zip(step_start.tolist(), step_end.tolist())]


def _attr_note(how: str, out: np.ndarray, dev_ev: np.ndarray) -> str:
    none = int((out[dev_ev] < 0).sum())
    return (f"device work attributed to steps by {how}: kernels that run after their step's host "
            "marker closes still count in their step (span_ms: the step's device time, "
            "after_host_ms: how far it ends after the host step)"
            + (f"; {none} device events belong to no step" if none else ""))


def _device_summary(rows: list[dict[str, Any]]) -> Columns:
    """Per (host, device), in order of first appearance: medians over the steady steps (all steps
    when none is steady; NaN skipped), the number of steps, and which device is the slowest."""
    from traceinsight.analysis.results import sort_order

    if not rows:
        return Columns.no_rows(DEVICE_COLUMNS)
    steady = [r for r in rows if r["_steady"]] or rows
    cols = ["wall_ms", "compute_ms", "h2d_ms", "d2h_ms", "d2d_ms", "idle_ms", "launch_ms", "span_ms",
            "after_host_ms"]
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in steady:
        groups.setdefault((r["host"], r["device"]), []).append(r)
    out: dict[str, Any] = {"host": text([k[0] for k in groups]), "device": text([k[1] for k in groups]),
                           "steps": np.array([len(g) for g in groups.values()], dtype=np.int64)}
    for c in cols:
        meds = []
        for g in groups.values():
            v = np.array([r[c] for r in g], dtype=float)
            v = v[~np.isnan(v)]
            meds.append(float(np.median(v)) if len(v) else float("nan"))
        out[c] = np.array(meds, dtype=float)
    # the slowest device: the longest median step, then the longest device span, then the most
    # compute (ties: first listed)
    order = sort_order([(out["wall_ms"], False), (out["span_ms"], False), (out["compute_ms"], False)])
    slowest = np.zeros(len(groups), dtype=bool)
    slowest[order[0]] = True
    out["slowest"] = slowest
    return Columns({c: out[c] for c in DEVICE_COLUMNS})


def _kernel_table(rows: list[tuple[str, str, int]], n_steps: int) -> Columns:
    from traceinsight.analysis.results import sort_order

    if not rows or not n_steps:
        return Columns.no_rows(KERNEL_COLUMNS)
    # (op, kernel) groups in order of first appearance: calls and exact int64 sums of device time
    acc: dict[tuple[str, str], list[int]] = {}
    for op_full, kernel, ps in rows:
        a = acc.setdefault((op_full, kernel), [0, 0])
        a[0] += 1
        a[1] += ps
    ops, types = [], []
    for op_full, _ in acc:
        head, sep, tail = op_full.rpartition(":")
        ops.append(head if sep else op_full)
        types.append(tail if sep else "")
    device_ms = np.array([v[1] for v in acc.values()], dtype=np.int64) / PS_PER_MS
    total = np.sum(device_ms)
    g = Columns({"op": text(ops), "op_type": text(types), "kernel": text([k[1] for k in acc]),
                 "calls": np.array([v[0] for v in acc.values()], dtype=np.int64),
                 "device_ms": device_ms, "ms_per_step": device_ms / n_steps,
                 "share": device_ms / total if total > 0 else np.zeros(len(acc))})
    return g.take(sort_order([(g["device_ms"], False), (g["kernel"], True), (g["op"], True)]))


def kernel_totals(kernels: pd.DataFrame) -> pd.DataFrame:
    """Kernels summed over their ops (XProf's kernel_stats lists a kernel once per op; this is the
    per-kernel view): kernel, calls, device_ms."""
    import pandas as pd

    if kernels.empty:
        return pd.DataFrame(columns=["kernel", "calls", "device_ms"])
    g = kernels.groupby("kernel", sort=False)[["calls", "device_ms"]].sum().reset_index()
    return g.sort_values(["device_ms", "kernel"], ascending=[False, True], kind="stable",
                         ignore_index=True)


def _device_order(name: str):
    head, _, num = name.rpartition(":")
    return (head, int(num)) if num.isdigit() else (name, -1)


def _int(s: str) -> int:
    try:
        return int(s)
    except ValueError:
        return -1
