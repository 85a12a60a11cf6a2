"""Traces that a capture did not lay out as modes (a TensorBoard logdir, profile session folders):
one mode per (session, host); and the hosts of one profile session compared, as notes on their
modes. Used by ``analysis.load`` and by ``analysis.parallel.analyze_with_dask``."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from traceinsight.model import ModeResult


def foreign_modes(root: Path, files: list[Path]) -> dict[str, list[Path]]:
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


def straggler_notes(modes: dict[str, ModeResult], session_of: Mapping[str, Any]
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
