"""The parent side of a capture, its loop: each mode captured in its own process (``capture_mode``,
through ``children``), its traces checked before it is recorded ok, then the untraced timing
rounds interleaved across the modes' live processes (``run_rounds``), and each mode's summary.
What runs and how is planned in ``planning``; the processes' environment is ``environment``'s.

Never imports TensorFlow: the workload runs in ``python -m traceinsight.capture.runner`` processes,
which hand results back through JSON files (never pickle). run.json is rewritten atomically after
every state change, so an interrupted capture (Ctrl-C, a killed process) leaves a readable run that
``--resume`` completes.
"""

from __future__ import annotations

import errno
import os
import shlex
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from traceinsight import machineload, runfolder
from traceinsight.capture import modes as modes_mod
from traceinsight.capture import reserve
from traceinsight.capture.children import PROGRESS, LiveChild, read_phase, run_child
from traceinsight.capture.environment import child_env
from traceinsight.capture.planning import Options, Plan, RunWriter
from traceinsight.errors import TraceinsightError, WriteError

# processes a mode may take to hold its whole first step in the host trace (see capture_mode)
FIRST_STEP_ATTEMPTS = 3


@dataclass
class ModeState:
    name: str
    status: str = "pending"
    error: str | None = None
    stderr_tail: str | None = None
    started: float | None = None
    ended: float | None = None
    notes: list[str] = field(default_factory=list)
    # notes about the TensorFlow, the same for every mode and pass (its traces record no
    # profile_options): in the mode's notes once, and printed once per capture
    tf_notes: list[str] = field(default_factory=list)
    live: "LiveChild | None" = None   # the mode's process, kept alive for interleaved rounds

    @property
    def elapsed(self) -> float | None:
        if self.started is None:
            return None
        return (self.ended or time.monotonic()) - self.started


def summary_of(timings: dict) -> dict[str, Any]:
    steps = np.asarray(timings.get("steps_s") or [], dtype=float) * 1e3
    traced = np.asarray(((timings.get("traced") or {}).get("host") or {}).get("steps_s") or [], dtype=float) * 1e3
    out: dict[str, Any] = {"n": int(len(steps))}
    if len(steps):
        p25, med, p75 = np.percentile(steps, [25, 50, 75])
        out.update(median_ms=float(med), p25_ms=float(p25), p75_ms=float(p75),
                   min_ms=float(steps.min()), max_ms=float(steps.max()))
    else:
        out.update(median_ms=None, p25_ms=None, p75_ms=None)
    first = timings.get("first_step_s")
    out["first_step_ms"] = float(first) * 1e3 if first is not None else None
    out["traced_median_ms"] = float(np.median(traced)) if len(traced) else None
    out["traced_n"] = int(len(traced))
    out["distortion"] = (float(np.median(traced) / np.median(steps) - 1.0)
                         if len(traced) and len(steps) else None)
    return out



def _relative_traces(obj: Any, run_path: Path) -> None:
    """Trace paths in timings.json relative to the run folder (the run can be moved)."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k == "trace" and isinstance(v, str) and os.path.isabs(v):
                try:
                    obj[k] = str(Path(v).relative_to(run_path))
                except ValueError:
                    pass
            else:
                _relative_traces(v, run_path)


def capture_mode(plan: Plan, writer: RunWriter, name: str, opts: Options,
                 poll: Callable[[], None] | None = None, keep_alive: bool = False) -> ModeState:
    """Capture one mode in its own process. ``keep_alive``: leave that process running afterwards
    (``state.live``) for interleaved rounds (``run_rounds``)."""
    state = ModeState(name, status="running", started=time.monotonic())
    entry = writer.mode(name)
    mode = modes_mod.get(plan.workload.kind, name)
    mode_path = writer.path / entry["dir"]
    if mode_path.exists():  # a failed or interrupted earlier attempt: start clean
        shutil.rmtree(mode_path)
    entry.update(status="running", error=None, stderr_tail=None, summary=None, profile_options={}, notes=[])
    writer.save()
    spec = opts.spec() | {"workload": str(plan.workload.path), "kind": plan.workload.kind, "mode": name,
                          "mode_path": str(mode_path.resolve())}
    spec["rounds"] = opts.rounds if keep_alive else 1
    if mode is not None and mode.row.fixed_signature:
        # the signature the mode runs with, as data (its run.json entry: planning.mode_entry)
        spec["input_signature"] = entry.get("input_signature")
    attempts: list[dict] = []
    while True:
        # The host trace must hold the whole first step (tracing, XLA's compile). Capture is
        # duration-based (xprof's client cannot stop a trace early), and a process takes its first
        # step once: when the first step outlasts the trace, the mode starts again in a fresh
        # process whose host trace is long enough for the first step just measured.
        spec["retry_cut_first_step"] = len(attempts) < FIRST_STEP_ATTEMPTS - 1
        try:
            res = run_child("mode", spec, mode_path, opts.timeout, child_env(mode),
                            stderr_path=mode_path / "stderr.log", poll=poll, keep_alive=keep_alive)
        except KeyboardInterrupt:
            entry.update(status="failed", error="interrupted (Ctrl-C)")
            writer.save()
            raise
        if not (res.ok and res.result.get("first_step_cut")):
            break
        if res.live is not None:
            res.live.close()
        first_s = float(res.result["first_step_s"])
        longer = int(first_s * 1e3 * 1.25) + max(2000, opts.host_trace_ms)
        attempts.append({"host_trace_ms": spec["host_trace_ms"], "first_step_s": first_s,
                         "first_step_traced_whole": False})
        if longer / 1e3 + first_s > opts.timeout * 0.8:  # would not fit: keep the cut first step
            spec["retry_cut_first_step"] = False
            attempts[-1]["note"] = f"a {longer} ms host trace would not fit --timeout {opts.timeout:g} s"
        spec["host_trace_ms"] = max(longer, spec["host_trace_ms"]) if "note" not in attempts[-1] \
            else spec["host_trace_ms"]
        shutil.rmtree(mode_path)
    state.ended = time.monotonic()
    entry["wall_s"] = round(state.elapsed or 0.0, 3)
    phase = read_phase(mode_path)
    try:
        (mode_path / PROGRESS).unlink()
    except OSError:
        pass
    if not res.ok:
        if phase and phase != "done":
            entry["phase"] = phase
            if res.returncode is None or res.returncode < 0 or res.error.startswith("timed out"):
                res.error += f", during: {phase}"
        if (mode_path / "stderr.log").is_file():
            res.error += f"; full output: {mode_path / 'stderr.log'}"
        entry.update(status="failed", error=res.error, stderr_tail=res.stderr_tail)
        state.status, state.error, state.stderr_tail = "failed", res.error, res.stderr_tail
        writer.save()
        return state
    timings = res.result
    # the share of the CPUs from which this capture called a round disturbed (run_rounds)
    timings["disturbed_other_cpu"] = machineload.DISTURBED_OTHER_CPU
    if attempts:
        timings["first_step_attempts"] = attempts + [
            {"host_trace_ms": spec["host_trace_ms"], "first_step_s": timings.get("first_step_s"),
             "first_step_traced_whole": bool(timings.get("first_step_traced"))}]
        timings["host_trace_ms"] = spec["host_trace_ms"]
        if timings.get("first_step_traced"):
            state.notes.append(
                f"the first step ({attempts[0]['first_step_s']:.1f} s) outlasted the "
                f"{attempts[0]['host_trace_ms']} ms host trace: captured again in a fresh process "
                f"with a {spec['host_trace_ms']} ms host trace, which holds the whole first step")
    _relative_traces(timings.get("traced") or {}, writer.path.resolve())
    for pass_name, p in (timings.get("traced") or {}).items():
        po = p.get("profile_options") or {}
        entry["profile_options"][pass_name] = po
        if po.get("unverified"):
            if po["unverified"] not in state.tf_notes:
                state.tf_notes.append(po["unverified"])
                state.notes.append(po["unverified"])
        elif po.get("ok") is False:   # None: the tracer records no options (jax.profiler)
            state.notes.append(f"{pass_name} pass: profiler options not as requested: "
                               f"{po.get('problem', 'unknown')}")
        if p.get("problem"):
            state.notes.append(f"{pass_name} pass: {p['problem']}")
        if p.get("first_step_note"):
            state.notes.append(p["first_step_note"])
    try:
        for pass_name, p in (timings.get("traced") or {}).items():
            if isinstance(p, dict) and p.get("disk_full"):
                raise reserve.DiskFull(f"the disk is full (ENOSPC): the {pass_name} pass's trace "
                                       f"could not be saved ({p.get('problem')})", errno.ENOSPC,
                                       mode_path)
        full = disk_full(writer.path)
        if full is not None:   # the profiler writes its file on its own: a full disk cuts it
            raise reserve.DiskFull(f"{full} once the mode's process ended: its traces may be "
                                   "truncated", errno.ENOSPC, writer.path)
        problem = verify_traces(writer.path, entry["dir"], timings)
        if problem is None:
            try:
                runfolder.atomic_write_json(mode_path / runfolder.TIMINGS, timings)
            except OSError as e:
                if e.errno in reserve.SPACE_ERRNOS:
                    raise reserve.write_error(mode_path / runfolder.TIMINGS, e) from None
                problem = f"cannot write {runfolder.TIMINGS}: {e.strerror or e}"
    except reserve.DiskFull:
        if res.live is not None:
            res.live.kill()
        raise
    if problem is not None:   # never recorded ok: a truncated trace is not a measurement
        entry.update(status="failed", error=problem)
        state.status, state.error = "failed", problem
        if res.live is not None:
            res.live.kill()
        writer.save()
        return state
    entry.update(status="ok", summary=summary_of(timings), notes=state.notes,
                 details=timings.get("details", {}))
    state.status = "ok"
    try:
        writer.save()
    except BaseException:   # (a full disk: the mode is ended by ``end_on_full_disk``)
        if res.live is not None:
            res.live.kill()
        raise
    state.live = res.live
    return state


# A disk with less free space than this after a mode's capture was likely full while the
# profiler wrote: its traces may be cut short even where they parse.
MIN_FREE_BYTES = 256 << 10


def disk_full(run_path: Path) -> str | None:
    """"the disk is full ..." when the run folder's disk has less than ``MIN_FREE_BYTES`` free,
    else None (also where it cannot be asked)."""
    try:
        st = os.statvfs(run_path)
    except (OSError, AttributeError):
        return None
    free = st.f_bavail * st.f_frsize
    if free >= MIN_FREE_BYTES:
        return None
    return f"the disk is full ({free >> 10} KiB left on the disk of {run_path})"


def verify_traces(run_path: Path, folder: str, timings: dict, resume: bool = True) -> str | None:
    """Why a captured mode's traces cannot be trusted, or None: each pass the workload says it
    traced has a non-empty trace in the run folder that parses as an XSpace, and the disk was not full
    (the profiler writes its file on its own, and a full disk leaves a truncated one). ``resume``:
    the advice names ``--resume`` (``capture``'s; a script's mode is recorded again by running
    it again)."""
    from traceinsight.analysis.events import open_planes
    if disk_full(run_path) is not None:
        return ("the disk is full: its traces may be truncated (free some space"
                + (" and --resume)" if resume else ")"))
    for pass_name, info in (timings.get("traced") or {}).items():
        if pass_name in runfolder.PASSES and (info or {}).get("save_failed"):
            # a pass that recorded and could not save its trace is no measurement
            return f"{pass_name} pass: {info.get('problem') or 'its trace could not be saved'}"
        if pass_name not in runfolder.PASSES or not (info or {}).get("trace"):
            continue    # a pass that recorded nothing says so itself (its "problem")
        skipped: list[str] = []
        try:
            files = runfolder.pass_traces(run_path, folder, pass_name, skipped)
        except TraceinsightError as e:
            return str(e)
        if not files:
            return f"{pass_name} pass: no trace file written" + (f" ({skipped[0]})" if skipped
                                                                 else "")
        for f in files:
            try:
                open_planes(f)
            except TraceinsightError as e:
                return f"{pass_name} pass: the trace is unreadable ({e}); disk full?"
    return None


def end_on_full_disk(plan: Plan, writer: RunWriter, error: reserve.DiskFull) -> reserve.DiskFull:
    """The capture stops on a disk that refused a write (``error``): the mode being captured ends
    ``failed`` with the error, the modes not yet run stay ``pending`` and say they were not run
    because of the disk, the modes captured stay ``ok``; run.json is written with the space set
    aside for it (``reserve.save_manifest``). Returns the one line the command ends with."""
    run = writer.path
    resume = f"traceinsight capture --resume {shlex.quote(str(run))}"
    words = reserve.space_words(error.errno) or "a write was refused"
    failed, not_run, kept = [], [], []
    for name in plan.modes:
        entry = writer.mode(name)
        if entry.get("status") == "running":
            entry.update(status="failed", error=str(error))
            failed.append(name)
        elif entry.get("status") == "pending":
            entry["error"] = (f"not run: {words}" + (f" (mode {failed[0]} failed on it)"
                                                     if failed else "")
                              + f"; free some space, then: {resume}")
            not_run.append(name)
        elif entry.get("status") == "ok":
            kept.append(name)
    try:
        reserve.save_manifest(writer)
        unsaved = ""
    except WriteError as e:
        unsaved = (f"; run.json could not be updated even with the space set aside ({e}): it "
                   "may still call a mode running")
    said = [str(error)]
    if failed:
        said.append(f"mode {', '.join(failed)} failed")
    if not_run:
        said.append(f"not run: {', '.join(not_run)}")
    if failed or not_run:
        said.append(f"{len(kept)} mode(s) captured are kept" if kept else "no mode was captured")
        then = f". Free some space, then: {resume}"
    else:   # every mode was captured: the interleaved rounds after the first were not recorded
        said.append(f"the {len(kept)} mode(s) captured are kept (one whose interleaved rounds "
                    "could not be written is timed in its first round only, its notes say so)"
                    if kept else "no mode was captured")
        then = ""
    return reserve.DiskFull("; ".join(said) + unsaved + then, error.errno, error.path)


def rounds_fit(opts: Options, n_modes: int) -> bool:
    """Interleaved rounds need two modes or more (one mode has nothing to pair with)."""
    return opts.rounds > 1 and n_modes > 1


def run_rounds(writer: RunWriter, states: list[ModeState], opts: Options,
               poll: Callable[[], None] | None = None,
               on_round: Callable[[str, int], None] | None = None) -> None:
    """Rounds 1 .. rounds-1, interleaved: A B C, A B C, ... in the live processes of the modes that
    were captured (round 0 is each mode's own timing phase, taken in the same order). Each mode's
    timings.json then holds every round it uses (``rounds``) and ``steps_s`` = their steps.

    A round that other processes disturbed (``machineload.disturbed``) is timed again at once, up to
    ``MAX_RERUNS`` times, so it stays next to the other modes' round of the same index; re-runs stop
    for the rest of the capture once two in a row came back disturbed (the machine is busy, not
    bursting: more re-runs only cost time). Afterwards a mode's rounds still disturbed, round 0
    included, are set aside when the mode has a round measured undisturbed to stand on; when none
    was, they are all kept (the analysis says so on every page). ``rounds_set_aside`` records
    every attempt not used, with what was done with it."""
    live = [(s, s.live) for s in states if s.status == "ok" and s.live is not None]
    extra: dict[str, list[dict]] = {s.name: [] for s, _ in live}
    aside: dict[str, list[dict]] = {s.name: [] for s, _ in live}
    lost: dict[str, str] = {}
    failed: dict[str, str] = {}   # the workload's own error in a round, in one line
    busy_again = 0   # re-runs in a row that came back disturbed
    try:
        for i in range(1, opts.rounds):
            for st, child in live:
                if st.name in lost or st.name in failed:
                    continue
                if on_round is not None:
                    on_round(st.name, i)
                if poll is not None:
                    poll()
                mode_path = writer.path / writer.mode(st.name)["dir"]
                got = child.ask_round(i, mode_path / ".round.json", opts.timeout)
                if got is not None and isinstance(got.get("error"), str):
                    # the workload failed in the round (a fixed-signature mode's signature that
                    # stopped holding fails the mode, below)
                    failed[st.name] = f"round {i}: {got['error']}"
                    child.kill()
                    continue
                reruns = 0
                while (got is not None and machineload.disturbed(got.get("other_cpu_busy"))
                       and reruns < machineload.MAX_RERUNS and busy_again < 2):
                    aside[st.name].append(dict(got, action=machineload.RoundAction.RERUN.value))
                    reruns += 1
                    got = child.ask_round(i, mode_path / ".round.json", opts.timeout)
                    if got is not None:
                        busy_again = busy_again + 1 if machineload.disturbed(
                            got.get("other_cpu_busy")) else 0
                if got is None:
                    rc = child.proc.poll()
                    lost[st.name] = f"round {i}: " + (
                        f"{reserve.space_words(rc)}: the mode's process could not write its round"
                        if reserve.refused_by_disk(rc) else "the mode's process " + (
                            "died" if rc is not None else "did not answer in time"))
                    child.kill()
                    continue
                extra[st.name].append(got)
    finally:
        for st, child in live:
            if st.name not in lost and st.name not in failed:
                child.close()
            st.live = None
    refused: reserve.DiskFull | None = None
    for st, _ in live:
        entry = writer.mode(st.name)
        tpath = writer.path / entry["dir"] / runfolder.TIMINGS
        timings = runfolder.read_json(tpath)
        for r in extra[st.name]:
            sigs = r.pop("input_signatures", None)
            if sigs is not None:
                timings["input_signatures"] = sigs
        for r in aside[st.name]:
            r.pop("input_signatures", None)
        rounds = list(timings.get("rounds") or []) + extra[st.name]
        # quiet: measured below the threshold (a round shorter than a clock tick has no figure,
        # and is kept without standing for a quiet one)
        quiet = [r for r in rounds if r.get("other_cpu_busy") is not None
                 and not machineload.disturbed(r["other_cpu_busy"])]
        if quiet:
            aside[st.name] += [dict(r, action=machineload.RoundAction.SET_ASIDE.value)
                               for r in rounds if machineload.disturbed(r.get("other_cpu_busy"))]
            rounds = [r for r in rounds if not machineload.disturbed(r.get("other_cpu_busy"))]
        timings["rounds"] = rounds
        if aside[st.name]:
            timings["rounds_set_aside"] = list(timings.get("rounds_set_aside") or []) + aside[st.name]
        timings["steps_s"] = [s for r in timings["rounds"] for s in r["steps_s"]]
        timings["step_nums"] = [n for r in timings["rounds"] for n in r["step_nums"]]
        if st.name in lost:
            st.notes.append(lost[st.name])
            entry["notes"] = list(st.notes)
        mode = modes_mod.get(writer.manifest.get("workload", {}).get("kind", ""), st.name)
        if st.name in failed and mode is not None and mode.row.fixed_signature:
            # its signature must hold on every step it took: never recorded ok otherwise
            entry.update(status="failed", error=failed[st.name])
            st.status, st.error = "failed", failed[st.name]
        elif st.name in failed:
            st.notes.append(failed[st.name])
            entry["notes"] = list(st.notes)
        try:
            runfolder.atomic_write_json(tpath, timings)
        except OSError as e:   # the round 0 timings.json stays, whole
            error = reserve.write_error(tpath, e)
            if not isinstance(error, reserve.DiskFull):
                raise error from None
            # the mode stays as captured, timed in its first round: said in its notes, and the
            # capture ends on the disk (``end_on_full_disk``)
            refused = refused or error
            st.notes.append(f"its interleaved rounds are not recorded ({error}): it is timed in "
                            "its first round only")
            entry["notes"] = list(st.notes)
            continue
        entry["summary"] = summary_of(timings)
    if refused is not None:
        raise refused
    writer.save()
