"""``traceinsight.load(path)``: a run folder, a TensorBoard logdir, a profile session folder or one
``.xplane.pb`` file -> an analysed ``traceinsight.model.Run``."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from google.protobuf.message import DecodeError

from traceinsight import modekind, runfolder
from traceinsight.analysis import cache, device, jaxtrace, malloc, results, tfdata
from traceinsight.analysis.attribute import attribute
from traceinsight.analysis.events import EventTable, load_files
from traceinsight.analysis.steps import RULE_DEVICE_GROUPS, host_events_recorded
from traceinsight.columns import Columns
from traceinsight.errors import TraceinsightError
from traceinsight.model import CompileEstimate, ModeResult, Run, Timing


def recorded_options(table: EventTable) -> dict[str, int] | None:
    # the XSpace schema (protobuf descriptors, ~0.15 s to build) only where a trace is decoded
    from traceinsight.xplane import decode_profile_options
    for plane in table.planes:
        raw = plane.stats.get("profile_options")
        if isinstance(raw, (bytes, bytearray)):
            try:
                return decode_profile_options(bytes(raw))
            except DecodeError:
                return None
    return None


def analyze_mode(name: str, host_files: Sequence[Path], python_files: Sequence[Path] = (), *,
                 timing: Timing | None = None, user_files: frozenset[str] = frozenset(),
                 requested: dict[str, Any] | None = None, extra_notes: tuple[str, ...] = (),
                 file_groups: dict[str, list[str]] | None = None,
                 signatures: dict[str, Any] | None = None) -> ModeResult:
    """Analyse one mode's traces: the host pass gives steps, categories, ops, retraces; the python
    pass gives hotspots, scaled to the host pass's python time. The tables are computed as
    ``Columns`` (numpy only)."""
    notes = list(extra_notes)
    options: dict[str, Any] = {}
    if not host_files and not python_files:
        return ModeResult(name=name, status="failed", error="no trace file for this mode",
                          timing=timing, notes=tuple(notes))
    main_files = list(host_files) or list(python_files)
    try:
        table = load_files(main_files)
    except TraceinsightError as e:
        return ModeResult(name=name, status="failed", error=str(e), timing=timing,
                          trace_paths=tuple(map(str, main_files)), notes=tuple(notes))
    framework = _framework(table)
    if framework is None:
        return ModeResult(name=name, status="failed", timing=timing,
                          error=f"{main_files[0]}: no TensorFlow or JAX events and no device work "
                                "in this trace (a trace of another framework, or of a process "
                                "that ran neither?)",
                          trace_paths=tuple(map(str, main_files)), notes=tuple(notes))
    if framework in ("jax", "device"):
        notes.extend(jaxtrace.trace_notes(table))
    a = attribute(table)
    if framework == "jax":
        if jaxtrace.relabel_executable_waits(a):
            notes.append("main-thread time with no event while the process's compiled ops ran on "
                         "XLA's threads (JAX's asynchronous dispatch: the wait for results) is "
                         "counted as op, not Python")
    options["host" if host_files else "python"] = _options_entry(
        recorded_options(table), (requested or {}).get("host" if host_files else "python"))
    if a.main_line < 0 and not len(a.step_start):
        return ModeResult(name=name, status="failed", timing=timing,
                          error="the trace holds no host thread events and no device steps (not a "
                                "TensorFlow trace?)",
                          trace_paths=tuple(map(str, main_files)), notes=tuple(notes))
    host_recorded, why_not = host_events_recorded(table, a.main_line, recorded_options(table))
    event_step = None
    if framework in ("jax", "device"):
        event_step = jaxtrace.event_steps(table, a.step_rule, a.step_num)
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
    dev = device.analyze_devices(table, a.step_start, a.step_end, a.step_num,
                                 results.steady_mask(steps) if len(steps) else
                                 np.zeros(0, dtype=bool),
                                 steps_are_groups=a.step_rule == RULE_DEVICE_GROUPS,
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
    recorded = recorded_options(table) or {}
    python_traced = bool(recorded.get("python_tracer_level")) or not host_files
    hotspots = results.hotspots_table(a, steps, user_files=user_files,
                                      python_files=file_groups) if python_traced else None
    if python_traced:
        notes.append("this trace was recorded with the python tracer on: its times include the "
                     "tracer's inflation of Python")
    if host_files and python_files:
        try:
            ptable = load_files(list(python_files))
        except TraceinsightError as e:
            notes.append(f"python-tracer pass unreadable: {e}")
            ptable = None
        if ptable is not None:
            pa = attribute(ptable)
            if framework == "jax":
                jaxtrace.relabel_executable_waits(pa)
            options["python"] = _options_entry(recorded_options(ptable),
                                               (requested or {}).get("python"))
            psteps = results.steps_table(pa)
            pbreak = results.breakdown_table(psteps)
            scale = 1.0
            if not breakdown.empty and not pbreak.empty and pbreak.row("python")["median"] > 0:
                scale = float(breakdown.row("python")["median"] / pbreak.row("python")["median"])
                notes.append(f"Python hotspots are from the python-tracer pass, scaled by {scale:.2f} "
                             "to the host pass's python time (the python tracer inflates Python)")
            hotspots = results.hotspots_table(pa, psteps, user_files=user_files, scale=scale,
                                              python_files=file_groups)
    elif not python_traced:
        notes.append("no python-tracer pass: no Python hotspots")
    for pass_name, entry in options.items():
        if entry.get("ok") is False:
            notes.append(f"{pass_name} pass: profiler options asked {entry['requested']} but the "
                         f"trace recorded {entry['recorded']}")
    ops = results.ops_table(a, steps)
    if framework in ("jax", "device"):
        # the device's ops (framework ops, as XProf's framework_op_stats), beside the host's
        steady = results.steady_mask(steps) if len(steps) else np.zeros(0, dtype=bool)
        # device events not assigned to steps (no module runs): all of them, over all steps
        dops = jaxtrace.device_ops(table, event_step, steady,
                                   int(steady.sum()) if event_step is not None else len(steps))
        if event_step is None and len(dops):
            notes.append(f"device ops: all device work of the trace over its {len(steps)} steps "
                         "(the device events are not assigned to the steps)")
        ops = jaxtrace.with_device_ops(ops, dops, host_recorded)
    return ModeResult(
        name=name, status="ok", timing=timing, steps=steps, breakdown=breakdown, first_step=first,
        ops=ops, retraces=results.retraces_table(a, signatures),
        hotspots=hotspots if hotspots is not None else results.hotspots_table(a, steps.head(0)),
        other=other, step_rule=a.step_rule, profile_options=options, notes=tuple(notes),
        host_events_recorded=host_recorded, compile_estimate=a.compile_estimate,
        device_steps=dev.steps if dev is not None else Columns(),
        devices=dev.devices if dev is not None else Columns(),
        kernels=dev.kernels if dev is not None else Columns(),
        stages=tfdata.stage_table_of(table, steps),
        trace_paths=tuple(str(p) for p in list(host_files) + list(python_files)))


def compile_note(est: CompileEstimate) -> str:
    """The mode note for ``ModeResult.compile_estimate``."""
    parts = []
    for c in est.calls:
        where = f"{c.function}" + (f" (step {c.step_num})" if c.step_num is not None else "")
        if c.compile_ms is not None and c.steady_op_ms is not None:
            parts.append(f"{where}: {c.compile_ms:.1f} ms = op {c.first_op_ms:.1f} ms on the "
                         f"compiling call - {c.steady_op_ms:.1f} ms median op of its later calls")
        else:
            parts.append(f"{where}: no later call to compare with; its op time "
                         f"({c.first_op_ms:.1f} ms, compilation and run unsplit) is counted as other")
    return (f"{est.label}: XLA-compiled calls whose compilation no event records (TensorFlow 2.15 "
            "and 2.16 write none); " + "; ".join(parts) + ". Derived compile includes the "
            "function's other one-time setup on its first run")


def _framework(table: EventTable) -> str | None:
    """"tensorflow", "jax" (JAX's dispatch / tracing events), "device" (device work and no
    framework event on the host: a jax.profiler trace at host level 0, a device-only trace), or
    None: nothing to analyse."""
    from traceinsight.analysis import rules
    if "tf_function_call" in table.stat_str or any(rules.TF_EVIDENCE.match(n) for n in table.names):
        return "tensorflow"
    if any(rules.JAX_EVIDENCE.match(n) for n in table.names):
        return "jax"
    if any(p.name.startswith("/device:") for p in table.planes) and \
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


def _timing(mode_path: Path) -> tuple[Timing | None, dict, tuple[str, ...], dict]:
    """Timings, the requested profiler options, the capture's own notes of a mode, and what the
    workload process recorded (``python_files``: base name -> groups; ``input_signatures``)."""
    f = mode_path / runfolder.TIMINGS
    if not os.path.lexists(f):
        return None, {}, (), {}
    if not runfolder.is_inside(mode_path, f):
        raise TraceinsightError(f"{f}: a symlink out of the mode's folder: refused")
    data = runfolder.read_timings(f)  # validated: a damaged file raises one line
    traced = data.get("traced") or {}
    host = traced.get("host") or {}
    rounds = [r for r in data.get("rounds") or [] if isinstance(r, dict)]
    load = dict(data["load"]) if isinstance(data.get("load"), dict) else None
    if rounds:
        load = (load or {}) | {"rounds": [{k: v for k, v in r.items() if k not in ("steps_s", "step_nums")}
                                          for r in rounds]}
    timing = Timing(steps_s=np.asarray(data.get("steps_s") or [], dtype=float),
                    first_step_s=data.get("first_step_s"),
                    traced_steps_s=np.asarray(host["steps_s"], dtype=float)
                    if host.get("steps_s") else None,
                    rounds=tuple(np.asarray(r.get("steps_s") or [], dtype=float) for r in rounds)
                    if rounds else None,
                    load=load)
    requested = {p: (traced.get(p) or {}).get("profile_options") for p in runfolder.PASSES
                 if (traced.get(p) or {}).get("profile_options")}
    notes = []
    for p in runfolder.PASSES:
        info = traced.get(p) or {}
        for key in ("problem", "first_step_note"):
            if isinstance(info.get(key), str) and info[key]:
                notes.append(f"{p} pass: {info[key]}")
    recorded = {k: data[k] for k in ("python_files", "input_signatures")
                if isinstance(data.get(k), dict)}
    return timing, requested, tuple(notes), recorded


def load_run(path: Path, use_cache: bool = True) -> Run:
    manifest = runfolder.read_manifest(path)
    workload = manifest.get("workload") or {}
    user_files = frozenset(filter(None, [Path(workload.get("path") or "").name]))
    with malloc.kept_memory():   # freed arrays reused by the next mode (see analysis.malloc)
        modes = _load_modes(path, manifest, user_files, use_cache)
    # each mode's kind as run.json records it (derived from the name for a folder without it);
    # not cached with the analysis: like the timings, it is the capture's, read each load
    raw = manifest.get("modes")
    entries = raw if isinstance(raw, dict) else {}
    modes = {n: m.replace(kind=modekind.mode_kind(n, entries.get(n))) for n, m in modes.items()}
    compared: tuple = ()    # a captured workload's modes are not hosts: nothing to compare
    if workload.get("kind") == "remote":   # capture --remote: the modes are one job's hosts
        from traceinsight.analysis.hosts import session_of
        modes, compared = _straggler_notes(modes, session_of(Run(path, path.name, modes,
                                                                 manifest)))
    return Run(path=path, name=path.name, modes=modes, manifest=manifest, source="run",
               hosts_compared=compared)


def _load_modes(path: Path, manifest: dict, user_files: frozenset[str], use_cache: bool
                ) -> dict[str, ModeResult]:
    """Each mode of a run folder, from its cache or analysed: the modes the cache does not hold go
    to ``analysis.parallel.analyze_modes`` (processes at once where the traces are large enough,
    or ``$TRACEINSIGHT_JOBS``; else one after another, here); the cache is read and written here.
    In the manifest's order."""
    modes: dict[str, ModeResult | None] = {}
    todo: dict[str, tuple[list[Path], dict[str, Any], Path, list]] = {}  # analysed, not cached
    later_notes: dict[str, list[str]] = {}   # files skipped, cache refused: this load only
    for name, info in (manifest.get("modes") or {}).items():
        info = info or {}
        status = info.get("status") or "ok"
        try:   # every path of a mode stays inside the run folder (run.json comes from elsewhere)
            folder = info.get("dir") or runfolder.mode_dir(name)
            runfolder.inside(path, folder, "mode folder")
            timing, requested, capture_notes, recorded = _timing(path / folder)
        except TraceinsightError as e:  # this mode's timings are damaged: the others still open
            modes[name] = ModeResult(name=name, status="failed", error=str(e))
            continue
        if status != "ok":
            error = info.get("error") or ("not captured (the capture was interrupted?)"
                                          if status in ("pending", "running") else status)
            modes[name] = ModeResult(name=name, status="failed" if status == "failed" else "missing",
                                     error=error, timing=timing)
            continue
        skipped: list[str] = []
        try:
            host = runfolder.pass_traces(path, folder, "host", skipped)
            python = runfolder.pass_traces(path, folder, "python", skipped)
        except TraceinsightError as e:
            modes[name] = ModeResult(name=name, status="failed", error=str(e), timing=timing)
            continue
        key = [cache.ANALYSIS_VERSION, cache.source_digest(), cache.fingerprint(host + python),
               requested,
               sorted(user_files), list(capture_notes),
               hashlib.sha256(json.dumps(recorded, sort_keys=True).encode()).hexdigest()[:16]]
        where = cache.cache_path(path, folder)
        mode, cache_note = cache.load_checked(path, where, key, timing) if use_cache else (None,
                                                                                          None)
        if mode is not None and tuple(mode.trace_paths) != tuple(map(str, host + python)):
            # export reads the traces a mode names: a cache must name exactly those found here
            mode, cache_note = None, "analysis cache not used (it names other trace files): " \
                                     "analysed again"
        if cache_note:
            skipped.append(cache_note)
        if mode is None:      # analysed below; its place in the order kept
            todo[name] = (host, dict(python_files=python, timing=timing, user_files=user_files,
                                     requested=requested, extra_notes=capture_notes,
                                     file_groups=recorded.get("python_files"),
                                     signatures=recorded.get("input_signatures")), where, key)
        elif skipped:
            mode = _with_notes(mode, skipped)
        modes[name] = mode
        if skipped:
            later_notes[name] = skipped
    if todo:
        from traceinsight.analysis.parallel import analyze_modes
        done = analyze_modes({n: t[0] for n, t in todo.items()},
                             args={n: t[1] for n, t in todo.items()})
        for name, (_, _, where, key) in todo.items():
            mode = modes[name] = done[name]
            if use_cache and mode.ok:
                note = cache.save_checked(path, where, mode, key)
                if note:
                    later_notes.setdefault(name, []).append(note)
            if later_notes.get(name):   # shown now, not cached: they say what happened this time
                modes[name] = _with_notes(mode, later_notes[name])
    return {name: m for name, m in modes.items() if m is not None}


def _with_notes(mode: ModeResult, notes: list[str]) -> ModeResult:
    import dataclasses
    return dataclasses.replace(mode, notes=tuple(mode.notes) + tuple(notes))


def _foreign_modes(root: Path, files: list[Path]) -> dict[str, list[Path]]:
    """One mode per (session, host); named by the run folder inside the logdir, plus the session
    when a run has several, plus the host when a session has several."""
    by_session: dict[Path, list[Path]] = {}
    for f in files:
        by_session.setdefault(f.parent, []).append(f)
    run_of = {}
    for s in by_session:
        run_dir = s.parent.parent.parent if s.parent.name == "profile" and \
            s.parent.parent.name == "plugins" else s
        try:
            rel = run_dir.relative_to(root)
            run_of[s] = str(rel) if str(rel) != "." else (root.name or str(root))
        except ValueError:
            run_of[s] = run_dir.name
    sessions_per_run: dict[str, int] = {}
    for r in run_of.values():
        sessions_per_run[r] = sessions_per_run.get(r, 0) + 1
    modes: dict[str, list[Path]] = {}
    for s in sorted(by_session):
        base = run_of[s]
        if sessions_per_run[base] > 1:
            base = f"{base}/{s.name}"
        hosts = sorted(by_session[s])
        for f in hosts:
            host = f.name[: -len(".xplane.pb")]
            name = base if len(hosts) == 1 else f"{base}/{host}"
            modes[name] = [f]
    return modes


def _straggler_notes(modes: dict[str, ModeResult], session_of: Mapping[str, Any]
                     ) -> tuple[dict[str, ModeResult], tuple]:
    """Several hosts of one profile session (a multi-worker capture) stay separate modes; each gets
    a short note from their comparison (``traceinsight.analysis.hosts``: the straggler, the
    spread). Returns the modes and the comparison itself (``HostGroup``s), which the ``Run`` is
    built with (``Run.host_groups()``): computed once, here. The notes do not change what is
    compared (step samples, categories, bootstrap medians), so the groups of the modes before
    the notes are those of the modes after."""
    if len(modes) < 2:
        # one trace: no hosts to compare (and no import of the hosts module)
        return dict(modes), ()
    from traceinsight.analysis import hosts
    groups = hosts.compare_sessions(modes, session_of)
    return hosts.with_notes(modes, groups), groups


def load(path, *, use_cache: bool = True) -> Run:
    """Analyse a run folder (results cached in it, see ``analysis.cache``), a TensorBoard
    logdir, a profile session folder or one ``.xplane.pb`` file."""
    path = Path(path)
    if not path.exists():
        raise TraceinsightError(f"{path}: no such file or folder")
    if path.is_dir() and runfolder.is_run_folder(path):
        return load_run(path, use_cache=use_cache)
    if path.is_file():
        if not path.name.endswith(".xplane.pb"):
            raise TraceinsightError(f"{path}: not a run folder, logdir or .xplane.pb trace")
        files = [path]
        root = path.parent
    else:
        files = runfolder.find_xplanes(path)
        root = path
        if not files:
            raise TraceinsightError(
                f"{path}: no traces found (no *.xplane.pb file within {runfolder.MAX_TRACE_DEPTH} "
                "folders of it; expected a traceinsight run, a TensorBoard logdir or a profile "
                "session folder)")
    modes = {}
    session_of: dict[str, Path] = {}
    groups = {path.name[: -len(".xplane.pb")] if path.is_file() else name: mode_files
              for name, mode_files in _foreign_modes(root, files).items()}
    from traceinsight.analysis.parallel import analyze_modes  # hosts in parallel processes
    for name, m in analyze_modes(groups).items():
        mode_files = groups[name]
        if m.status == "failed" and len(files) == 1:
            raise TraceinsightError(m.error)
        modes[name] = m
        session_of[name] = mode_files[0].parent
    modes, compared = _straggler_notes(modes, session_of)
    if all(m.status == "failed" for m in modes.values()):
        raise TraceinsightError(f"{path}: no readable TensorFlow trace: "
                                + "; ".join(f"{k}: {m.error}" for k, m in modes.items()))
    from traceinsight.analysis.trace_env import trace_environment
    return Run(path=path, name=path.name.replace(".xplane.pb", ""), modes=modes,
               manifest={"source": str(path), "environment": trace_environment(files)},
               source="traces", hosts_compared=compared)
