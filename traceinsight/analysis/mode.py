"""One mode's traces -> its ``ModeResult``: the host pass gives steps, categories, ops, retraces (and
the device tables where the trace has device planes); the python pass gives hotspots. What a
captured mode's folder says beside its traces (timings.json) is ``analysis.timings``'s.

``analyze_mode`` is two halves: ``analyze_trace`` (files -> event table, attribution and every
decision about the trace, and the steps table: a ``TraceAnalysis``) and ``mode_result`` (its
tables). ``analyze_pass`` makes the ``TraceAnalysis`` of one pass again, as ``analyze_mode``
made it (what the Chrome-trace export and the viewer's timeline draw), so they show exactly the
mode's steps and categories.

``analysis.load`` (one process) and ``analysis.parallel`` (worker processes) both analyse a mode
with ``analyze_mode``; neither imports the other for it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from google.protobuf.message import DecodeError

from traceinsight import runfolder
from traceinsight.analysis import (
    device,
    hotspots,
    jaxtrace,
    layers,
    memory,
    overhead,
    results,
    retraces,
    tfdata,
)
from traceinsight.analysis.attribute import Attribution, attribute, main_thread
from traceinsight.analysis.events import EventTable, load_files
from traceinsight.analysis.names import (
    DEVICE_PLANE,
    HLO_OP,
    PROFILE_OPTIONS,
    PYTHON_FRAME,
    STEP_NUM,
    TF_FUNCTION_CALL,
)
from traceinsight.analysis.steps import host_events_recorded, spanned_rule, step_markers
from traceinsight.columns import Columns
from traceinsight.errors import TraceinsightError
from traceinsight.model import CompileEstimate, ModeResult, Timing
from traceinsight.stepsource import StepSource


def recorded_options(table: EventTable) -> dict[str, int] | None:
    # the XSpace schema (protobuf descriptors, slow to build for a start-up: ``python
    # tools/bench_startup.py --imports`` shows it) only where a trace is decoded
    from traceinsight.xplane import decode_profile_options
    for plane in table.planes:
        raw = plane.stats.get(PROFILE_OPTIONS)
        if isinstance(raw, (bytes, bytearray)):
            try:
                return decode_profile_options(bytes(raw))
            except DecodeError:
                return None
    return None


# a capture pass of a mode, as the export names it: "host" is the mode's main pass (the
# python-tracer pass where a mode has no host pass, the only pass of a foreign trace); "python"
# the python-tracer pass where the mode has one beside its host pass, else the main pass too
TracePass = runfolder.Pass


class TraceFailure(TraceinsightError):
    """A trace that cannot be analysed (unreadable, no framework's events, no thread and no device
    step), with the notes decided before that was known."""

    def __init__(self, error: str, files: Sequence[Path], notes: Sequence[str] = ()):
        super().__init__(error)
        self.error = error
        self.files = tuple(map(str, files))
        self.notes = tuple(notes)


@dataclass(frozen=True, eq=False)
class TraceAnalysis:
    """One pass's trace analysed as far as its steps: the event table, its attribution (the
    main thread's category timeline, JAX's executable waits already counted as op, XLA compile
    derived where no event records it), what was decided about the trace, and its steps table.
    ``analyze_mode`` builds a mode's tables from it; the Chrome-trace export draws it, made
    again by ``analyze_pass``, so a mode's export and its tables share every decision. ``notes``: what those decisions say, in
    the mode notes' order."""
    table: EventTable
    attribution: Attribution
    framework: str                    # "tensorflow", "jax" or "device" (see _framework)
    host_events_recorded: bool        # False: no category is claimed (the steps' are NaN)
    event_step: np.ndarray | None     # every event's step where the steps are module executions
    steps: Columns
    recorded_options: dict[str, int] | None
    notes: tuple[str, ...]


def analyze_trace(files: Sequence[Path], *, timing: Timing | None = None,
                  framework: str | None = None) -> TraceAnalysis:
    """The first half of ``analyze_mode``: some trace files (one pass of a mode) -> their
    ``TraceAnalysis``. ``timing``: the mode's, where a capture wrote one (it numbers the process's
    first call 0). ``framework``: the one the mode's main pass found (its python-tracer pass runs
    the same program), else found in these files. Raises ``TraceFailure`` where the trace cannot
    be analysed."""
    notes: list[str] = []
    table = load_files(list(files))   # TraceinsightError: the one line analyze_mode reports
    framework = framework or _framework(table)
    if framework is None:
        raise TraceFailure(f"{files[0]}: no TensorFlow or JAX events and no device work "
                           "in this trace (a trace of another framework, or of a process "
                           "that ran neither?)", files)
    if framework in ("jax", "device"):
        notes.extend(jaxtrace.trace_notes(table))
    recorded = recorded_options(table)
    # whether the main thread's events can split host time, asked before the attribution: its
    # temporaries are gone before the attribution's arrays are made (at the analysis's peak)
    marker = step_markers(table)
    host_recorded, why_not = host_events_recorded(table, main_thread(table, marker)[0], recorded)
    a = attribute(table, marker)
    del marker
    if framework == "jax":
        if jaxtrace.relabel_executable_waits(a):
            notes.append("main-thread time with no event while the process's compiled ops ran on "
                         "XLA's threads (JAX's asynchronous dispatch: the wait for results) is "
                         "counted as op, not Python")
    if a.main_line < 0 and not len(a.step_start):
        raise TraceFailure("the trace holds no host thread events and no device steps (not a "
                           "TensorFlow trace?)", files, notes)
    event_step = None
    if framework in ("jax", "device"):
        event_step = jaxtrace.event_steps(table, a.step_source, a.step_num)
        if event_step is not None and host_recorded:
            host_recorded, why_not = False, ("the steps are the device's module executions (no "
                                             "step markers): host time is not split by them")
    # a capture (it wrote the timing) numbers the process's first call 0; a foreign trace's
    # markers may start at 0 anywhere in its run
    steps = results.steps_table(a, step0_is_first_call=timing is not None)
    notes.extend(a.step_notes)
    if not host_recorded:
        # the trace cannot split host time: no category is claimed (not "python")
        # nor can it tell the process's first call (tracing, compilation) from the others: a
        # device step numbered 0 is XProf's first group, not necessarily the first call
        steps = Columns({c: np.full(len(steps), np.nan) if c in results.CATEGORIES else
                         np.zeros(len(steps), dtype=bool) if c == "first" else steps[c]
                         for c in steps.columns})
        notes.append(f"host categories not recorded: {why_not}. The device side is analysed; to "
                     "see Python, dispatch and input on the host, capture with host_tracer_level "
                     "2 or more (python_tracer_level 1 for Python hotspots), e.g. traceinsight "
                     "capture, or xprof's trace client with those options")
    return TraceAnalysis(table=table, attribution=a, framework=framework,
                         host_events_recorded=host_recorded, event_step=event_step, steps=steps,
                         recorded_options=recorded, notes=tuple(notes))


def _has_frames(table: EventTable) -> bool:
    """Does the trace hold python-tracer frames (events named ``$file:line function``)?"""
    return any(n.startswith(PYTHON_FRAME) for n in table.names)


def analyze_pass(host_files: Sequence[Path], python_files: Sequence[Path], pass_name: TracePass,
                 *, timing: Timing | None = None) -> TraceAnalysis:
    """One pass of a mode (``TracePass``) analysed again as ``analyze_mode`` analysed it, from
    the mode's trace files: the main pass with the mode's ``timing``; a python-tracer pass beside
    a host pass with the framework the host pass found. Raises ``TraceFailure`` /
    ``TraceinsightError`` where the trace cannot be analysed."""
    if pass_name == "python" and host_files and python_files:
        return analyze_trace(python_files, framework=_framework(load_files(list(host_files))))
    return analyze_trace(list(host_files) or list(python_files), timing=timing)


def analyze_mode(name: str, host_files: Sequence[Path], python_files: Sequence[Path] = (), *,
                 timing: Timing | None = None, user_files: frozenset[str] = frozenset(),
                 requested: dict[str, Any] | None = None, extra_notes: tuple[str, ...] = (),
                 file_groups: dict[str, list[str]] | None = None,
                 signatures: dict[str, Any] | None = None,
                 layer_calls: dict[str, Any] | None = None) -> ModeResult:
    """Analyse one mode's traces: the host pass gives steps, categories, ops, retraces; the python
    pass gives hotspots, scaled to the host pass's python time. The tables are computed as
    ``Columns`` (numpy only). The host pass (the python pass where there is no host pass) goes
    through ``analyze_trace``; ``mode_result`` makes the tables."""
    if not host_files and not python_files:
        return ModeResult(name=name, status="failed", error="no trace file for this mode",
                          timing=timing, notes=tuple(extra_notes))
    main_files = list(host_files) or list(python_files)
    try:
        tr = analyze_trace(main_files, timing=timing)
    except TraceFailure as e:
        return ModeResult(name=name, status="failed", error=e.error, timing=timing,
                          trace_paths=e.files, notes=tuple(extra_notes) + e.notes)
    except TraceinsightError as e:
        return ModeResult(name=name, status="failed", error=str(e), timing=timing,
                          trace_paths=tuple(map(str, main_files)), notes=tuple(extra_notes))
    return mode_result(name, tr, host_files, python_files, timing=timing, user_files=user_files,
                       requested=requested, extra_notes=extra_notes, file_groups=file_groups,
                       signatures=signatures, layer_calls=layer_calls)


def mode_result(name: str, tr: TraceAnalysis, host_files: Sequence[Path],
                python_files: Sequence[Path] = (), *, timing: Timing | None = None,
                user_files: frozenset[str] = frozenset(),
                requested: dict[str, Any] | None = None, extra_notes: tuple[str, ...] = (),
                file_groups: dict[str, list[str]] | None = None,
                signatures: dict[str, Any] | None = None,
                layer_calls: dict[str, Any] | None = None) -> ModeResult:
    """The second half of ``analyze_mode``: a mode's tables from its main pass's
    ``TraceAnalysis`` (and the python-tracer pass's hotspots, from that pass's own
    ``TraceAnalysis``, made as ``analyze_pass`` makes it again)."""
    table, a, framework, steps = tr.table, tr.attribution, tr.framework, tr.steps
    host_recorded, event_step = tr.host_events_recorded, tr.event_step
    notes = list(extra_notes) + list(tr.notes)
    options: dict[str, Any] = {}
    options["host" if host_files else "python"] = _options_entry(
        tr.recorded_options, (requested or {}).get("host" if host_files else "python"))
    dev = device.analyze_devices(table, a.step_start, a.step_end, a.step_num,
                                 results.steady_mask(steps) if len(steps) else
                                 np.zeros(0, dtype=bool),
                                 steps_are_groups=a.step_source is StepSource.DEVICE_GROUPS,
                                 event_step=(event_step, "module executions")
                                 if event_step is not None else None)
    if dev is not None:
        notes.extend(dev.notes)
    breakdown = results.breakdown_table(steps)
    first = None
    if len(steps) and steps["first"][0]:
        first = {c: float(steps[c][0]) for c in results.CATEGORIES}
    if host_recorded and host_files and a.crosser.any():
        ids, counts = np.unique(table.name[a.crosser], return_counts=True)
        top = ", ".join(f"{table.names[i]} ×{c}" for c, i in
                        sorted(zip(counts.tolist(), ids.tolist()), reverse=True)[:3])
        notes.append(f"{int(a.crosser.sum())} events crossed other events' ends and were kept out "
                     f"of the nesting (their time goes to the events around them): {top}")
    if not len(steps):
        notes.append("no steps found in the trace")
    if a.compile_estimate is not None:
        notes.append(compile_note(a.compile_estimate))
    other = results.other_table(a, steps)
    if len(other) and host_recorded:
        top = ", ".join(other["name"][:3].tolist())
        notes.append(f"{len(other)} event names have no attribution rule (other): {top}")
    recorded = tr.recorded_options or {}
    # the recorded tracer level where the trace says it; else (TF before 2.21 records none) the
    # trace's own content: python-tracer frames in it
    python_traced = (bool(recorded["python_tracer_level"]) if "python_tracer_level" in recorded
                     else not host_files or _has_frames(table))
    hot = hotspots.hotspots_table(a, steps, user_files=user_files,
                                      python_files=file_groups) if python_traced else None
    if python_traced:
        notes.append("this trace was recorded with the python tracer on: its times include the "
                     "tracer's inflation of Python")
    python_layers: tuple[Columns, Columns] | None = None
    if host_files and python_files:
        try:
            pt: TraceAnalysis | None = analyze_trace(python_files, framework=framework)
        except TraceinsightError as e:
            notes.append(f"python-tracer pass unreadable: {e}")
            pt = None
        if pt is not None:
            pa = pt.attribution
            options["python"] = _options_entry(pt.recorded_options,
                                               (requested or {}).get("python"))
            # the hotspots time frames by the pass's own steps, also where its host time cannot
            # be split into categories (where the export's steps carry no split)
            psteps = pt.steps if pt.host_events_recorded else results.steps_table(pa)
            pbreak = results.breakdown_table(psteps)
            scale = 1.0
            if not breakdown.empty and not pbreak.empty and pbreak.row("python")["median"] > 0:
                scale = float(breakdown.row("python")["median"] / pbreak.row("python")["median"])
                notes.append(f"Python hotspots are from the python-tracer pass, scaled by {scale:.2f} "
                             "to the host pass's python time (the python tracer inflates Python)")
            hot = hotspots.hotspots_table(pa, psteps, user_files=user_files, scale=scale,
                                              python_files=file_groups)
            if pt.host_events_recorded and not breakdown.empty:
                # eager ops carry no layer scope: the pass's layer call frames place them
                python_layers = layers.python_layers_table(
                    pa, psteps, host_means={c: float(breakdown.row(c)["mean"])
                                            for c in results.CATEGORIES},
                    layer_calls=layer_calls, user_files=user_files, python_files=file_groups)
    elif not python_traced:
        notes.append("no python-tracer pass: no Python hotspots")
    for pass_name, entry in options.items():
        if entry.get("ok") is False:
            notes.append(f"{pass_name} pass: profiler options asked {entry['requested']} but the "
                         f"trace recorded {entry['recorded']}")
    op_steps = results.op_step_totals(a, steps)
    ops = results.ops_table(a, steps, op_steps)
    if framework in ("jax", "device"):
        # the device's ops (framework ops, as XProf's framework_op_stats), beside the host's
        steady = results.steady_mask(steps) if len(steps) else np.zeros(0, dtype=bool)
        # the device events' steps: module runs, else the device analysis's event-by-event
        # tie to the host steps (group_id, launch correlation); without either, all device
        # events over all steps
        step_of = event_step if event_step is not None else \
            dev.event_step if dev is not None else None
        dops = jaxtrace.device_ops(table, step_of, steady,
                                   int(steady.sum()) if step_of is not None else len(steps))
        if step_of is None and len(dops):
            notes.append(f"device ops: all device work of the trace over its {len(steps)} steps "
                         "(the device events are not assigned to the steps)")
        ops = jaxtrace.with_device_ops(ops, dops, host_recorded)
        if len(dops):
            # the device's ops are not split by step: no layer's time step by step
            op_steps = op_steps.head(0)
    events = overhead.tracer_events(a, steps, timing) if host_recorded and host_files else None
    hlo = None
    if HLO_OP in table.stat_str and host_files:
        from traceinsight.analysis.hlo_protos import hlo_op_names
        hlo = layers.hlo_scopes(hlo_op_names(list(host_files)))
    layer_table = layers.layers_table(ops, hlo, layer_calls)
    # each layer's time step by step, where the ops table is the steps' own (not a device's)
    layer_steps = layers.layer_steps(layer_table, ops, op_steps,
                                     np.asarray(steps[STEP_NUM])[results.steady_mask(steps)]
                                     if len(steps) else np.zeros(0, np.int64), hlo)
    if layer_table.empty and python_layers is not None:
        # how it was placed: the layers title and its source column
        layer_table, layer_steps = python_layers
    elif not layer_table.empty and not breakdown.empty:
        notes.append(layers.coverage_note(layer_table, ops, float(breakdown.row("op")["mean"])))
    return ModeResult(
        name=name, status="ok", timing=timing, steps=steps, breakdown=breakdown, first_step=first,
        ops=ops, retraces=retraces.retraces_table(a, signatures),
        hotspots=hot if hot is not None else hotspots.hotspots_table(a, steps.head(0)),
        other=other, step_rule=spanned_rule(a.step_rule, timing), step_source=a.step_source,
        profile_options=options, notes=tuple(notes),
        host_events_recorded=host_recorded, compile_estimate=a.compile_estimate,
        device_steps=dev.steps if dev is not None else Columns(),
        devices=dev.devices if dev is not None else Columns(),
        kernels=dev.kernels if dev is not None else Columns(),
        stages=tfdata.stage_table_of(table, steps), memory=memory.memory_table(table, steps),
        layers=layer_table, layer_steps=layer_steps,
        trace_paths=tuple(str(p) for p in list(host_files) + list(python_files)),
        tracer_events=events)


def compile_note(est: CompileEstimate) -> str:
    """The mode note for ``ModeResult.compile_estimate``."""
    parts = []
    for c in est.calls:
        where = f"{c.function}" + (f" (step {c.step_num})" if c.step_num is not None else "")
        if c.compile_ms is not None and c.steady_op_ms is not None:
            parts.append(f"{where}: {c.compile_ms:.1f} ms = op {c.first_op_ms:.1f} ms on the "
                         f"compiling call - {c.steady_op_ms:.1f} ms median op of its later calls")
        elif c.steady_op_ms is not None:
            parts.append(f"{where}: {c.first_op_ms - c.steady_op_ms:.1f} ms = op "
                         f"{c.first_op_ms:.1f} ms on the compiling call - {c.steady_op_ms:.1f} ms "
                         "median op of its later calls, counted as other: XLA compile and the "
                         "function's first-run setup (instantiation, graph optimisation, paid "
                         "without XLA too), which the trace cannot split")
        else:
            parts.append(f"{where}: no later call to compare with; its op time "
                         f"({c.first_op_ms:.1f} ms, compilation and run unsplit) is counted as other")
    return (f"{est.label}: XLA-compiled calls whose compilation no event records (TensorFlow "
            "2.12 - 2.16 write none); " + "; ".join(parts) + ". To time compilation alone: the "
            "first call with jit_compile=True minus with jit_compile=False, in fresh processes")


def _framework(table: EventTable) -> str | None:
    """"tensorflow", "jax" (JAX's dispatch / tracing events), "device" (device work and no
    framework event on the host: a jax.profiler trace at host level 0, a device-only trace), or
    None: nothing to analyse."""
    from traceinsight.analysis import rules
    if TF_FUNCTION_CALL in table.stat_str or any(rules.TF_EVIDENCE.match(n) for n in table.names):
        return "tensorflow"
    if any(rules.JAX_EVIDENCE.match(n) for n in table.names):
        return "jax"
    if any(p.name.startswith(DEVICE_PLANE) for p in table.planes) and \
            device.device_lines(table):
        return "device"
    return None


def _options_entry(recorded: dict[str, int] | None, requested: dict[str, Any] | None) -> dict:
    entry: dict[str, Any] = {"recorded": recorded}
    if requested:
        req = requested.get("requested", requested)
        entry["requested"] = req
        if recorded is not None:
            entry["ok"] = all(recorded.get(k) == v for k, v in req.items() if k in recorded)
    return entry
