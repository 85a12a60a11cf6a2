"""``traceinsight.load(path)``: a run folder, a TensorBoard logdir, a profile session folder or one
``.xplane.pb`` file -> an analysed ``traceinsight.model.Run``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from traceinsight import modekind, runfolder
from traceinsight.analysis.sessions import foreign_modes, straggler_notes
from traceinsight.derive import complete
from traceinsight.errors import TraceinsightError
from traceinsight.model import Display, ModeResult, Run, Timing


def load_run(path: Path, use_cache: bool = True, display: Display | None = None) -> Run:
    manifest = runfolder.read_manifest(path)
    workload = manifest.get("workload") or {}
    user_files = frozenset(filter(None, [Path(workload.get("path") or "").name]))
    # (the modes analysed, not read from the cache, are analysed inside malloc.kept_memory(): see
    # analysis.parallel.analyze_modes)
    modes = _load_modes(path, manifest, user_files, use_cache)
    modes = _with_kinds(modes, manifest)
    compared: tuple = ()    # a captured workload's modes are not hosts: nothing to compare
    if workload.get("kind") == "remote":   # capture --remote: the modes are one job's hosts
        from traceinsight.analysis.hosts import session_of
        modes, compared = straggler_notes(modes, session_of(Run(path, path.name, modes,
                                                                 manifest)))
    return complete(Run(path=path, name=path.name, modes=modes, manifest=manifest, source="run"),
                    hosts_compared=compared, display=display)


def _load_modes(path: Path, manifest: dict, user_files: frozenset[str], use_cache: bool
                ) -> dict[str, ModeResult]:
    """Each mode of a run folder, from its cache or analysed: the modes the cache does not hold go
    to ``analysis.parallel.analyze_modes`` (processes at once where the traces are large enough,
    or ``$TRACEINSIGHT_JOBS``; else one after another, here); the cache is read and written here.
    In the manifest's order."""
    # (a run folder's only: the analysis of a trace reads no cache)
    import hashlib
    import json

    from traceinsight.analysis import cache
    modes: dict[str, ModeResult | None] = {}
    todo: dict[str, tuple[list[Path], dict[str, Any], Path, list]] = {}  # analysed, not cached
    later_notes: dict[str, list[str]] = {}   # files skipped, cache refused: this load only
    for name, info in (manifest.get("modes") or {}).items():
        entry = _captured(path, name, info)
        if isinstance(entry, ModeResult):    # not captured, or its timings are damaged
            modes[name] = entry
            continue
        folder, timing, requested, capture_notes, recorded = entry
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
        mode, cache_note = cache.load_checked(path, where, key, timing) \
            if use_cache else (None, None)
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
                                     signatures=recorded.get("input_signatures"),
                                     layer_calls=recorded.get("layer_calls")), where, key)
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


def _captured(path: Path, name: str, info: Any
              ) -> ModeResult | tuple[str, Timing | None, dict, tuple[str, ...], dict]:
    """What run.json and the mode's timings.json say of one mode: a ``ModeResult`` already, when
    the mode was not captured (failed, missing) or its timings are damaged; else its folder, its
    timing and what the capture recorded (``read_timing``), for its traces to be analysed."""
    # (a run folder's only: a trace analysed alone has no timings.json; start-up time)
    from traceinsight.analysis.timings import read_timing
    info = info if isinstance(info, dict) else {}
    status = info.get("status") or "ok"
    try:   # every path of a mode stays inside the run folder (run.json comes from elsewhere)
        folder = info.get("dir") or runfolder.mode_dir(name)
        runfolder.inside(path, folder, "mode folder")
        timing, requested, capture_notes, recorded = read_timing(path / folder)
    except TraceinsightError as e:  # this mode's timings are damaged: the others still open
        return ModeResult(name=name, status="failed", error=str(e))
    if status != "ok":
        error = info.get("error") or (_unfinished(path) if status in ("pending", "running")
                                      else status)
        return ModeResult(name=name, status="failed" if status == "failed" else "missing",
                          error=error, timing=timing)
    return folder, timing, requested, capture_notes, recorded


def _unfinished(path: Path) -> str:
    """Why a mode run.json still calls pending or running is not there: a capture holds the run
    folder's lock now (it is being captured), or none does (the process that captured it ended
    without writing its end)."""
    from traceinsight.capture.lock import holder
    info = holder(path)
    if info is not None:
        pid = info.get("pid")
        since = info.get("since_utc")
        return (f"being captured now (pid {pid if isinstance(pid, int) else '?'}"
                f"{f', since {since}' if isinstance(since, str) else ''}): not finished yet")
    return ("not finished: the process that captured it ended without writing its end "
            "(interrupted, killed, or its disk full; its output said which)")


def load_timings(path: Path) -> Run:
    """A run folder's modes with their untraced timings only, no trace read: what the capture
    prints its summary from as soon as the modes are timed. The same reading of run.json and
    timings.json as ``load``, so its medians and ratios are those every page shows."""
    manifest = runfolder.read_manifest(path)
    modes = {}
    for name, info in (manifest.get("modes") or {}).items():
        entry = _captured(path, name, info)
        modes[name] = entry if isinstance(entry, ModeResult) else \
            ModeResult(name=name, timing=entry[1])
    return complete(Run(path=path, name=path.name, modes=_with_kinds(modes, manifest),
                        manifest=manifest, source="run"))


def _with_kinds(modes: dict[str, ModeResult], manifest: dict) -> dict[str, ModeResult]:
    """Each mode's kind as run.json records it (derived from the name for a folder without it);
    not cached with the analysis: like the timings, it is the capture's, read each load."""
    raw = manifest.get("modes")
    entries = raw if isinstance(raw, dict) else {}
    env = manifest.get("environment")
    keras = env.get("keras") if isinstance(env, dict) else None
    return {n: m.replace(kind=modekind.mode_kind(n, entries.get(n), keras))
            for n, m in modes.items()}


def _with_notes(mode: ModeResult, notes: list[str]) -> ModeResult:
    return mode.replace(notes=tuple(mode.notes) + tuple(notes))   # keeps its bootstrap medians


def load(path, *, use_cache: bool = True, display: Display | None = None) -> Run:
    """Analyse a run folder (results cached in it, see ``analysis.cache``), a TensorBoard
    logdir, a profile session folder or one ``.xplane.pb`` file; a logdir may be a URL that
    fsspec reads (``gs://``, ``s3://``, ``memory://``: ``analysis.urls``).

    ``display``: how the run shows itself in a notebook / REPL (``traceinsight.load`` gives
    ``report.notebook.NOTEBOOK``)."""
    from traceinsight.analysis import urls
    path = urls.local_path(path)
    if urls.is_url(path):      # a logdir on object storage: its traces copied and analysed here
        return _load_url(path, display=display)
    path = Path(path)
    if not path.exists():
        raise TraceinsightError(f"{path}: no such file or folder")
    if path.is_dir() and runfolder.is_run_folder(path):
        return load_run(path, use_cache=use_cache, display=display)
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
              for name, mode_files in foreign_modes(root, files).items()}
    from traceinsight.analysis.parallel import analyze_modes  # hosts in parallel processes
    for name, m in analyze_modes(groups).items():
        mode_files = groups[name]
        if m.status == "failed" and len(files) == 1:
            raise TraceinsightError(m.error)
        modes[name] = m
        session_of[name] = mode_files[0].parent
    modes, compared = straggler_notes(modes, session_of)
    if all(m.status == "failed" for m in modes.values()):
        raise TraceinsightError(f"{path}: no readable TensorFlow trace: "
                                + "; ".join(f"{k}: {m.error}" for k, m in modes.items()))
    from traceinsight.analysis.trace_env import trace_environment
    return complete(Run(path=path, name=path.name.replace(".xplane.pb", ""), modes=modes,
                        manifest={"source": str(path), "environment": trace_environment(files)},
                        source="traces"), hosts_compared=compared, display=display)


def _load_url(url: str, **kwargs) -> Run:
    """``load`` of a logdir at a URL (``analysis.urls``): its traces copied into a temporary
    folder,
    analysed there, the copies deleted; the run's source and its modes' trace paths are URLs."""
    import dataclasses
    import tempfile
    from pathlib import PurePosixPath

    from traceinsight.analysis.urls import fetch, find_traces, unstrip, with_urls
    root, paths, one = find_traces(url)
    if not paths:
        raise TraceinsightError(
            f"{url}: no traces found (no *.xplane.pb within the layout of a TensorBoard logdir: "
            "<run>/plugins/profile/<session>/<host>.xplane.pb)")
    name = PurePosixPath(root).name or root
    with tempfile.TemporaryDirectory(prefix="traceinsight-") as tmp:
        top = Path(tmp) / name
        local = [fetch(url, p, root, top) for p in paths]
        where = {str(f): unstrip(url, p) for f, p in zip(local, paths)}
        run = load(local[0] if one else top, **kwargs)
    modes = {k: with_urls(m, where) for k, m in run.modes.items()}
    manifest = dict(run.manifest, source=url)
    return dataclasses.replace(run, path=Path(root), modes=modes, manifest=manifest)
