"""What a captured mode's folder says beside its traces: its timings.json (``read_timing``).
A module of its own, light (numpy, the run folder's reading), so that a run folder whose modes
the analysis cache holds is opened without importing the trace analysis (``analysis.mode``)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from traceinsight import runfolder
from traceinsight.errors import TraceinsightError
from traceinsight.model import Timing


def read_timing(mode_path: Path) -> tuple[Timing | None, dict, tuple[str, ...], dict]:
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
