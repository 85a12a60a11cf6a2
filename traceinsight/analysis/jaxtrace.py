"""Traces without TensorFlow events: jax.profiler traces (CPU, GPU, TPU) and device-only traces.

The host side goes through the same attribution as a TF trace (``rules`` has JAX's dispatch,
tracing / lowering and compile events); this module adds what only these traces need:

* the devices as the trace describes them (vendor or TPU generation, cores), in a note;
* the device's ops (``device_ops``): device time by framework op, as XProf's ``framework_op_stats``
  names them: a kernel's ``tf_op`` stat (JAX writes the primitive's name stack there,
  ``jit(f)/dot_general``, type ``dot_general``), else its ``hlo_op`` (XLA's own ops: a module's
  argument copies, fusions without a primitive); on a TPU the HLO ops of its ``XLA Ops`` line,
  named by their framework op (``tf_op`` on the event's metadata) else the HLO instruction, timed
  by ``device_duration_ps`` (the device's clock, as XProf sums them);
* the step of every device event when the steps are the device's module executions
  (``steps.module_runs``).
"""

from __future__ import annotations

import numpy as np

from traceinsight.analysis import device as device_mod
from traceinsight.analysis.events import EventTable
from traceinsight.analysis.names import (
    COMPUTE_CAP_MAJOR,
    COMPUTE_CAP_MINOR,
    CORE_COUNT,
    DEVICE_DURATION_PS,
    DEVICE_PLANE,
    DEVICE_TYPE_STRING,
    DEVICE_VENDOR,
    EXECUTE_WAITS,
    HLO_CATEGORY,
    HLO_OP,
    MEMCPY,
    MEMSET,
    PYTHON_FRAME,
    TF_OP,
    THUNK_EXECUTE,
)
from traceinsight.analysis.steps import is_derived_line, module_runs
from traceinsight.columns import Columns, text
from traceinsight.errors import TraceinsightError
from traceinsight.stepsource import StepSource

PS_PER_MS = 1e9


def _plane_info(table: EventTable, plane: int) -> str:
    p = table.planes[plane]
    st = p.stats
    if isinstance(st.get(DEVICE_TYPE_STRING), str) and st[DEVICE_TYPE_STRING]:
        return str(st[DEVICE_TYPE_STRING])
    vendor = st.get(DEVICE_VENDOR)
    cores = st.get(CORE_COUNT)
    major, minor = st.get(COMPUTE_CAP_MAJOR), st.get(COMPUTE_CAP_MINOR)
    out = f"{vendor} GPU" if isinstance(vendor, str) and vendor else "GPU"
    more = []
    if isinstance(major, int) and isinstance(minor, int) and major > 0:
        more.append(f"compute capability {major}.{minor}")
    if isinstance(cores, int) and cores > 0:
        more.append(f"{cores} compute units")
    return out + (f" ({', '.join(more)})" if more else "")


def trace_notes(table: EventTable) -> list[str]:
    """What kind of trace this is and which devices it holds (type, cores), one note each."""
    lines = device_mod.device_lines(table)
    notes = ["a trace without TensorFlow events (jax.profiler, or a device-only trace): host "
             "categories from JAX's dispatch, tracing / lowering and compile events where the "
             "host trace has them"]
    if table.duplicate_planes:
        dup = sorted(set(table.duplicate_planes))
        notes.append(f"the trace holds {len(table.duplicate_planes)} plane(s) twice, read once: "
                     + ", ".join(dup[:4]) + (", ..." if len(dup) > 4 else ""))
    planes = sorted((i for i, p in enumerate(table.planes) if p.name.startswith(DEVICE_PLANE)),
                    key=lambda i: device_mod._device_order(table.planes[i].name))
    if not planes:
        return notes
    # every device plane of the trace (XProf counts them all as the devices), and which ran work
    kinds: dict[str, tuple[list[str], list[str]]] = {}
    for plane in planes:
        names, active = kinds.setdefault(_plane_info(table, plane), ([], []))
        names.append(table.planes[plane].name)
        if plane in lines:
            active.append(table.planes[plane].name)
    for kind, (names, active) in kinds.items():
        notes.append(f"devices: {len(names)} × {kind}, {len(active)} with activity"
                     + (f" ({', '.join(active)})" if active else ""))
    if any(device_mod.is_tpu(table.planes[p].name) for p in lines):
        notes.append("TPU: per-core busy time and HLO ops are read; the TPU's own step "
                     "grouping, copies by kind, idle within a program and the host side of the TPU "
                     "runtime are not analysed")
    return notes


def _op_of(table: EventTable, ev: np.ndarray) -> list[tuple[str, str]]:
    """(framework op, type) of each device event, as XProf's framework_op_stats names them."""
    full = device_mod.kernel_ops(table, ev)
    hlo: dict[int, str] = {}
    if HLO_OP in table.stat_str:
        idx, val = table.stat_str[HLO_OP]
        hlo = dict(zip(idx.tolist(), (str(v) for v in val.tolist())))
    cat: dict[int, str] = {}
    if HLO_CATEGORY in table.stat_str:
        idx, val = table.stat_str[HLO_CATEGORY]
        cat = dict(zip(idx.tolist(), (str(v) for v in val.tolist())))
    tpu_ops = tpu_framework_ops(table.files) if any(
        device_mod.is_tpu(p.name) for p in table.planes) else {}
    out = []
    for e, f in zip(ev.tolist(), full):
        if f:
            head, _, tail = f.rpartition(":")
            out.append((head, tail))
            continue
        name = hlo.get(e)
        plane = table.planes[table.lines[table.line[e]].plane].name
        if name is None and device_mod.is_tpu(plane):
            raw = table.names[table.name[e]]
            fw = tpu_ops.get((plane, raw))
            if fw:   # its framework op, typed by the primitive (``jit(f)/add`` -> add)
                out.append((fw, fw.rsplit("/", 1)[-1]))
                continue
            # else the HLO instruction the event is named by, "%name = shape opcode(...)"
            name = raw.lstrip("%").split(" ", 1)[0]
        out.append((name or "", cat.get(e, "")))
    return out


def device_ops(table: EventTable, step_of: np.ndarray | None, steady_steps: np.ndarray,
               n_steady: int) -> Columns:
    """Device time by framework op (ops-table columns, thread "device"), over the steady steps:
    ``step_of`` gives every event's step index (None: all device events count, for traces with
    one step). Copies (``Memcpy*``) are not ops (they are the device steps' copies)."""
    cols = ["op", "type", "thread", "calls_per_step", "self_ms_per_step", "share"]
    lines = [li for ls in device_mod.device_lines(table).values() for li in ls]
    if not lines or n_steady <= 0:
        return Columns.no_rows(cols)
    ev = np.nonzero(np.isin(table.line, lines))[0]
    ev = ev[[not table.names[n].startswith((MEMCPY, MEMSET)) for n in table.name[ev]]] \
        if len(ev) else ev
    if step_of is not None:
        ev = ev[np.isin(step_of[ev], np.nonzero(steady_steps)[0])]
    if not len(ev):
        return Columns.no_rows(cols)
    # a TPU op's duration on the device's own clock (``device_duration_ps``, what XProf sums);
    # the event's span is on the host's clock
    dur = table.end - table.start
    if DEVICE_DURATION_PS in table.stat_int:
        idx, val = table.stat_int[DEVICE_DURATION_PS]
        if len(val) and val.min() < 0:      # refused, as a negative event duration is
            raise TraceinsightError(f"{table.files[0] if table.files else 'the trace'}: corrupt "
                                    "trace (negative device_duration_ps)")
        dur = dur.copy()
        dur[idx] = val
    acc: dict[tuple[str, str], list[int]] = {}
    for (op, typ), e in zip(_op_of(table, ev), ev.tolist()):
        if not op:
            continue  # XProf lists no framework op for such kernels (host-to-device copies)
        a = acc.setdefault((op, typ), [0, 0])
        a[0] += 1
        a[1] += int(dur[e])
    if not acc:
        return Columns.no_rows(cols)
    ps = np.array([v[1] for v in acc.values()], dtype=np.int64)
    self_ms = ps / PS_PER_MS / n_steady
    total = float(self_ms.sum())
    order = np.lexsort((np.array([k[0] for k in acc], dtype=object), -self_ms))
    return Columns({"op": text([k[0] for k in acc]), "type": text([k[1] or "Unknown" for k in acc]),
                    "thread": text(["device"] * len(acc)),
                    "calls_per_step": np.array([v[0] for v in acc.values()], dtype=float) / n_steady,
                    "self_ms_per_step": self_ms,
                    "share": self_ms / total if total > 0 else np.zeros(len(acc))}).take(order)


def with_device_ops(host_ops: Columns, dops: Columns, host_recorded: bool) -> Columns:
    """The ops table of a trace with device ops: the main thread's host ops (when the trace splits
    host time) and the device's. Host events on other threads that carry an ``hlo_op`` are the
    device ops' launches, not ops of their own."""
    if not len(dops):
        return host_ops
    if not host_recorded or not len(host_ops):
        return dops
    host_ops = host_ops.take(np.nonzero(host_ops["thread"] == "main")[0])
    if not len(host_ops):
        return dops
    return Columns({c: np.concatenate([np.asarray(host_ops[c], dtype=dops[c].dtype)
                                       if dops[c].dtype.kind == "O" else host_ops[c], dops[c]])
                    for c in host_ops.columns})


def event_steps(table: EventTable, step_source: StepSource,
                step_num: np.ndarray) -> np.ndarray | None:
    """Every event's step index (-1: none) when the steps are the device's module executions."""
    if step_source is not StepSource.MODULE_RUNS:
        return None
    lines = [i for i, ln in enumerate(table.lines)
             if table.planes[ln.plane].name.startswith(DEVICE_PLANE) and ln.n_events
             and not is_derived_line(ln)]
    ev = np.nonzero(np.isin(table.line, lines))[0]
    runs = module_runs(table, ev)
    out = np.full(len(table), -1, dtype=np.int64)
    if runs is None:
        return out
    ev = ev[np.argsort(table.start[ev], kind="stable")]
    index = {int(n): k for k, n in enumerate(step_num.tolist())}
    out[ev] = [index.get(int(k), -1) for k in runs[0].tolist()]
    return out


# PJRT's call that runs an executable: its own time (no child event) while the executable's ops
# run on XLA's threads is waiting for them
_EXECUTE_WAITS = EXECUTE_WAITS


def relabel_executable_waits(a) -> int:
    """JAX dispatches asynchronously: on a CPU the compiled ops run on XLA's threads while the main
    thread returns to Python, and the wait for their results (``np.asarray`` of an output, a
    ``block_until_ready``) is no event of its own, so it would read as Python; and PJRT's call that
    runs the executable waits for part of it inside its own time (dispatch by inheritance).
    Main-thread Python (time no event covers, or a python-tracer frame's) and that call's own time,
    while the process's HLO ops or executables run on other threads, are the executable's: ``op``. In place on the attribution's timeline;
    returns the picoseconds moved."""
    from traceinsight.analysis import attribute as attr_mod
    from traceinsight.analysis import rules
    t = a.table
    if a.main_line < 0 or not len(a.seg_cat):
        return 0
    run = np.array([n.startswith(THUNK_EXECUTE) and "wait" not in n for n in t.names]
                   or [False], dtype=bool)[t.name]
    if HLO_OP in t.stat_str:
        run[t.stat_str[HLO_OP][0]] = True
    host = np.array([not t.planes[ln.plane].name.startswith(DEVICE_PLANE) for ln in t.lines]
                    or [False], dtype=bool)
    run &= (t.line != a.main_line) & host[t.line] & (t.end > t.start)
    ev = np.nonzero(run)[0]
    if not len(ev):
        return 0
    w_s, w_e = attr_mod._merge(t.start[ev], t.end[ev])
    tl = a.timeline.cut(np.concatenate([w_s, w_e]))
    seg = tl.within(w_s, w_e)
    owner, cat = tl.owners(seg), tl.cat[seg]
    frame = np.array([n.startswith(PYTHON_FRAME) for n in t.names] or [False], dtype=bool)
    execute = np.array([n in _EXECUTE_WAITS for n in t.names] or [False], dtype=bool)
    owned_by_frame = np.zeros(len(owner), dtype=bool)
    owned_by_frame[owner >= 0] = frame[t.name[owner[owner >= 0]]]
    owned_by_execute = np.zeros(len(owner), dtype=bool)
    owned_by_execute[owner >= 0] = execute[t.name[owner[owner >= 0]]]
    moved = seg[((cat == rules.PYTHON) & ((owner < 0) | owned_by_frame))
                | ((cat == rules.DISPATCH) & owned_by_execute)]
    tl.cat[moved] = rules.OP
    a.timeline = tl
    return int((tl.times(moved + 1) - tl.times(moved)).sum())


_META_CACHE: dict[tuple[str, ...], dict[tuple[str, str], str]] = {}


def tpu_framework_ops(files) -> dict[tuple[str, str], str]:
    """(TPU plane, event name) -> the op's framework op (its ``tf_op`` stat, ``jit(f)/add:``, kept
    on the event's metadata, where the event table does not read stats), cached per files."""
    from traceinsight.analysis.device import is_tpu
    from traceinsight.analysis.hlo_protos import planes
    key = tuple(map(str, files))
    if key in _META_CACHE:
        return _META_CACHE[key]
    out: dict[tuple[str, str], str] = {}
    for plane in planes(files):
        if not is_tpu(plane.name):
            continue
        tf_op = next((k for k, v in plane.stat_metadata.items() if v.name == TF_OP), None)
        if tf_op is None:
            continue
        for em in plane.event_metadata.values():
            for st in em.stats:
                if st.metadata_id != tf_op:
                    continue
                v = st.str_value or (plane.stat_metadata[st.ref_value].name
                                     if st.ref_value in plane.stat_metadata else "")
                if v.rstrip(":"):
                    out[(plane.name, em.name)] = v.rstrip(":")
    _META_CACHE.clear()
    _META_CACHE[key] = out
    return out
