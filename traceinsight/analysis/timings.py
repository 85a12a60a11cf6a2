"""What a captured mode's folder says beside its traces: its timings.json (``read_timing``).
A module of its own, light (numpy, the run folder's reading), so that a run folder whose modes
the analysis cache holds is opened without importing the trace analysis (``analysis.mode``)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from traceinsight import runfolder
from traceinsight.errors import TraceinsightError
from traceinsight.machineload import (
    DISTURBED_OTHER_CPU,
    RoundAction,
    RoundLoad,
    changed,
    disturbed,
    percent,
)
from traceinsight.model import Calibration, Timing
from traceinsight.stepsource import StepSpan


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
    cal = data.get("calibration")
    calibration = (Calibration(int(cal["calls"]), tuple(map(float, cal.get("untraced_s") or ())),
                               tuple(map(float, cal.get("traced_s") or ())))
                   if isinstance(cal, dict) and isinstance(cal.get("calls"), int) else None)
    if isinstance(host.get("load"), dict):   # the machine's load while the host pass ran
        load = (load or {}) | {"traced_phase": dict(host["load"])}
    aside = [r for r in data.get("rounds_set_aside") or [] if isinstance(r, dict)]
    if aside:   # the disturbed attempts the capture did not use (none in older run folders)
        load = (load or {}) | {"set_aside": [{k: v for k, v in r.items() if k != "step_nums"}
                                             for r in aside]}
    timing = Timing(steps_s=np.asarray(data.get("steps_s") or [], dtype=float),
                    first_step_s=data.get("first_step_s"),
                    traced_steps_s=np.asarray(host["steps_s"], dtype=float)
                    if host.get("steps_s") else None,
                    rounds=tuple(np.asarray(r.get("steps_s") or [], dtype=float) for r in rounds)
                    if rounds else None,
                    load=load, calibration=calibration,
                    memory=dict(data["memory"]) if isinstance(data.get("memory"), dict) else None,
                    step_span=StepSpan(data["step_span"]) if data.get("step_span") else None,
                    step_calls=tuple(data.get("step_calls") or ()))
    requested = {p: (traced.get(p) or {}).get("profile_options") for p in runfolder.PASSES
                 if (traced.get(p) or {}).get("profile_options")}
    notes = list(load_notes(timing))
    for p in runfolder.PASSES:
        info = traced.get(p) or {}
        for key in ("problem", "first_step_note"):
            if isinstance(info.get(key), str) and info[key]:
                notes.append(f"{p} pass: {info[key]}")
    recorded = {k: data[k] for k in ("python_files", "input_signatures", "layer_calls")
                if isinstance(data.get(k), dict)}
    return timing, requested, tuple(notes), recorded


def load_notes(timing: Timing) -> tuple[str, ...]:
    """What every page says about the machine's load while the mode was timed: each disturbed
    round the capture re-ran or set aside, and the rounds it kept although disturbed (a machine
    busy throughout leaves nothing quieter to stand on). Decided on ``Timing.round_loads`` /
    ``Timing.set_aside`` (``machineload.disturbed``); these sentences are only shown."""
    limit = f"{percent(DISTURBED_OTHER_CPU)} or more makes a round disturbed"

    def took(r: RoundLoad) -> str:
        steal = f", {percent(r.steal)} of it stolen by the hypervisor" if r.steal else ""
        return f"other processes took {percent(r.other_cpu_busy)} of the CPUs{steal}"

    notes = []
    for r in timing.set_aside:
        if r.action is RoundAction.RERUN:
            notes.append(f"round {r.round} timed again: {took(r)} while it ran ({limit})")
        else:
            notes.append(f"round {r.round} set aside: {took(r)} while it ran ({limit}), and again "
                         f"after it was timed again; its {r.n_steps} step(s) are not in the "
                         "median")
    kept = [r for r in timing.round_loads or () if r.disturbed]
    if kept:
        shares = sorted(r.other_cpu_busy for r in kept if r.other_cpu_busy is not None)
        span = percent(shares[0]) if shares[0] == shares[-1] else \
            f"{percent(shares[0])} to {percent(shares[-1])}"
        rounds = ", ".join(str(r.round) for r in kept)
        notes.append(f"timed on a busy machine: other processes took {span} of the CPUs in "
                     f"round(s) {rounds} ({limit}), kept because no quieter round was left to "
                     "use; its step times are slower than on a quiet machine")
    if timing.round_loads is None and disturbed(timing.other_cpu_busy):
        # no rounds (a script's steps, ``run`` / ``profile()``): nothing was re-run or set aside
        notes.append(f"timed on a busy machine: other processes took "
                     f"{percent(timing.other_cpu_busy)} of the CPUs while its untraced steps ran "
                     f"({percent(DISTURBED_OTHER_CPU)} or more is a busy machine); its step "
                     "times are slower than on a quiet machine")
    traced, untraced = timing.traced_other_cpu_busy, timing.other_cpu_busy
    if changed(traced, untraced):
        notes.append(f"the machine's load changed between the traced and the untraced steps: "
                     f"other processes took {percent(traced)} of the CPUs while the traced steps "
                     f"ran and {percent(untraced)} while the untraced ones did, so the traced "
                     "steps' difference from the untraced median is partly the machine's, not "
                     "the profiler's")
    return tuple(notes)
