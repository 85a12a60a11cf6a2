"""One mode's phases in the workload process (see ``traceinsight.capture.runner``)."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable

from traceinsight import runfolder
from traceinsight.capture import calibrate, machine, memory, reserve
from traceinsight.capture import modes as modes_mod
from traceinsight.capture.function_driver import function_driver
from traceinsight.capture.keras_driver import keras_driver
from traceinsight.capture.loading import SetupError, WorkloadError, load_workload
from traceinsight.capture.profiling import HOST_LEVELS, PYTHON_LEVELS, traced_phase
from traceinsight.capture.steps import Recorder
from traceinsight.pyfiles import loaded_python_files

PROGRESS = ".progress.json"


def progress(mode_path: Path, phase: str) -> None:
    """Tell the parent which phase runs (its live display, and what a timed-out mode was doing).
    Not written on a disk that refuses it: the mode goes on, and the disk decides at its result."""
    try:
        runfolder.atomic_write_json(mode_path / PROGRESS, {"phase": phase, "t": time.time()})
    except OSError:
        pass


def run_mode(spec: dict) -> tuple[dict, "RoundServer | None"]:
    mode = modes_mod.get(spec["kind"], spec["mode"])
    if mode is None:
        raise WorkloadError(f"unknown mode {spec['mode']!r} for a {spec['kind']} workload")
    if mode.legacy_keras:
        from traceinsight.capture import compat
        compat.legacy_keras_env(os.environ)   # before TensorFlow is imported: TF 2.16+ only
        try:
            legacy = compat.legacy_keras()
        except ImportError as e:
            raise SetupError(str(e)) from None
        sys.modules["keras"] = legacy  # the workload's `import keras` gets Keras 2
    mode_path = Path(spec["mode_path"])
    progress(mode_path, "importing TensorFlow")
    import tensorflow as tf
    if mode.tf1_graph:
        tf.compat.v1.disable_eager_execution()
    if mode.tf1:
        _v1_optimizers()
    progress(mode_path, "building the workload")
    module = load_workload(spec["workload"])
    driver = (keras_driver(tf, mode, module) if mode.kind == modes_mod.KERAS else
              function_driver(tf, mode, module, spec.get("input_signature")))

    load_start = machine.loadavg()
    timings: dict[str, Any] = {"mode": mode.name, "kind": mode.kind, "pid": os.getpid(),
                               "first_step_s": None, "first_step_traced": True, "first_step_num": 0}

    # 0. the profiler's cost on this machine: a small eager op untraced here, traced in the host
    # pass before its first step (calibrate.py); the analysis takes the cost out of the breakdown
    progress(mode_path, "calibrating the profiler")
    cal_untraced = calibrate.untraced(tf)
    cal_traced = (lambda: calibrate.traced(tf)) if cal_untraced is not None else None

    # 1. host pass, holding the first step
    progress(mode_path, "host trace: first step")
    rec, host = traced_phase(tf, driver, mode_path / "host", spec["host_trace_ms"], HOST_LEVELS,
                             spec["host_max_steps"], 0, "host", before=cal_traced)
    cal_in_trace = host.pop("before", None)
    if cal_untraced is not None:    # untraced again after the pass: both sides of it, the fastest kept
        cal_untraced += calibrate.untraced(tf) or []
    host_steps = [(s, n) for s, n, t in zip(rec.steps_s, rec.step_nums, rec.traced) if n != 0 and t]
    if rec.steps_s and rec.step_nums[0] == 0:
        timings["first_step_s"] = rec.steps_s[0]
        timings["first_step_traced"] = bool(rec.traced[0])
    else:  # the profiler never went live: take the first step untraced so timing still works
        first = Recorder(tf, "first", 0, lambda r: len(r.steps_s) >= 1)
        driver.run(first)
        timings["first_step_s"] = first.steps_s[0]
        timings["first_step_traced"] = False
        rec = first
    host.update(steps_s=[s for s, _ in host_steps], step_nums=[n for _, n in host_steps],
                untraced_steps=sum(1 for t in rec.traced if not t))
    host_started = time.monotonic()
    next_step = rec.next_step
    if (spec.get("retry_cut_first_step") and not timings["first_step_traced"]
            and host.get("live") and timings["first_step_s"] is not None):
        # The first step (tracing, XLA compile) outlasted the host trace: this process cannot take a
        # first step again (its caches are warm). Stop here; the parent starts a fresh process
        # with a host trace long enough for it.
        return {"mode": mode.name, "first_step_cut": True, "first_step_s": timings["first_step_s"],
                "host_trace_ms": spec["host_trace_ms"]}, None

    # 2. warm-up
    warm = Recorder(tf, "warmup", next_step,
                    lambda r: len(r.steps_s) >= spec["warmup_steps"] or
                    (len(r.steps_s) >= 1 and r.elapsed >= spec["max_time"]))
    progress(mode_path, "warm-up")
    driver.run(warm)
    next_step = warm.next_step

    if not timings["first_step_traced"] and "problem" not in host:
        # The first step outlasted the host trace (an XLA compile, a big graph): that session holds
        # its beginning only, and no steady step. Trace the host again, after warm-up, so the
        # newest session of host/ (the one analysis reads) has steady steps; the older session
        # stays for TensorBoard. Session folders are named to the second: do not collide.
        time.sleep(max(0.0, 1.1 - (time.monotonic() - host_started)))
        first_session = host
        progress(mode_path, "host trace again (steady steps)")
        rec2, host = traced_phase(tf, driver, mode_path / "host", spec["host_trace_ms"],
                                  HOST_LEVELS, spec["host_max_steps"], next_step, "host",
                                  before=cal_traced)
        cal_in_trace = host.pop("before", None)   # the session the analysis reads holds these
        host.update(steps_s=[s for s, t in zip(rec2.steps_s, rec2.traced) if t],
                    step_nums=[n for n, t in zip(rec2.step_nums, rec2.traced) if t],
                    untraced_steps=sum(1 for t in rec2.traced if not t),
                    first_session={k: first_session.get(k) for k in ("trace", "profile_options")},
                    first_step_note=(
                        f"the first step ({timings['first_step_s']:.1f} s) outlasted the host trace "
                        f"({spec['host_trace_ms']} ms): host/ has a second session, after warm-up, "
                        "with steady steps; raise --host-trace-ms to trace the whole first step"))
        if first_session["profile_options"].get("ok") is False:
            host["profile_options"] = first_session["profile_options"]  # report the worse one
        next_step = rec2.next_step

    # 3. untraced timing (round 0 of the interleaved rounds, see RoundServer)
    timing = Recorder(tf, "timing", next_step,
                      lambda r: len(r.steps_s) >= spec["min_steps"] and r.elapsed >= spec["min_time"]
                      or (len(r.steps_s) >= max(3, min(spec["min_steps"], 3)) and r.elapsed >= spec["max_time"]))
    progress(mode_path, "timing (untraced)")
    usage = machine.Usage()
    peak = memory.PeakRss()
    driver.run(timing)
    load = usage.finish()
    timings["memory"] = peak.finish()
    timings.update(warmup_steps=len(warm.steps_s), steps_s=timing.steps_s,
                   step_nums=timing.step_nums, timing_phase_s=timing.elapsed)
    timings["rounds"] = [{"round": 0, "steps_s": list(timing.steps_s), "step_nums": list(timing.step_nums),
                          **load}]
    next_step = timing.next_step

    if cal_untraced is not None and cal_in_trace is not None:
        timings["calibration"] = {"calls": calibrate.CALLS, "untraced_s": cal_untraced,
                                  "traced_s": cal_in_trace}
    traced: dict[str, Any] = {"host": host}
    # 4. python pass
    if spec.get("python_tracer", True):
        progress(mode_path, "python trace")
        prec, py = traced_phase(tf, driver, mode_path / "python", spec["python_trace_ms"],
                                PYTHON_LEVELS, spec["python_max_steps"], next_step, "python")
        py.update(steps_s=[s for s, t in zip(prec.steps_s, prec.traced) if t],
                  step_nums=[n for n, t in zip(prec.step_nums, prec.traced) if t])
        traced["python"] = py
        next_step = prec.next_step  # rounds number their steps after the python pass's
    timings["traced"] = traced
    timings["details"] = dict(driver.details)
    # each layer class's call frame -> its layers (keras_driver.layer_calls): the layers table's
    # map of the python-tracer pass
    if timings["details"].get("layer_calls"):
        timings["layer_calls"] = timings["details"].pop("layer_calls")
    timings["details"].pop("layer_calls", None)
    # the python tracer names frames by file base name only: record which package each is from
    timings["python_files"] = loaded_python_files(spec.get("workload"))
    if getattr(driver, "signatures", None) is not None:
        timings["input_signatures"] = driver.signatures.summary()
    timings["load"] = {**machine.cpu_count(), "loadavg_start": load_start, "loadavg_end": machine.loadavg(),
                       "timing_phase": load}
    server = RoundServer(tf, driver, spec, mode_path, next_step) if spec.get("rounds", 1) > 1 else None
    return timings, server


class RoundServer:
    """Interleaved rounds: after its capture, the mode's process stays alive and times another short
    untraced round each time the parent asks (one JSON line on stdin: ``{"round": i, "out": path}``;
    ``{"exit": true}`` ends it). The parent asks mode A, B, C, then A, B, C again, so a burst of load
    on the machine lands on every mode's round alike, and ratios can come from paired rounds."""

    def __init__(self, tf, driver, spec: dict, mode_path: Path, next_step: int):
        self.tf, self.driver, self.spec, self.mode_path, self.next_step = tf, driver, spec, mode_path, next_step

    def serve(self) -> None:
        for line in sys.stdin:
            try:
                cmd = json.loads(line)
            except ValueError:
                continue
            if not isinstance(cmd, dict) or cmd.get("exit"):
                return
            try:
                out = self.round(int(cmd["round"]))
            except WorkloadError as e:   # the workload's own failure (a signature that stopped
                # holding): said to the parent in one line, then this process ends
                reserve.hand_back(Path(cmd["out"]), {"round": cmd["round"], "error": str(e)})
                raise
            reserve.hand_back(Path(cmd["out"]), out)

    def recorder(self, phase: str, next_step: int, done: Callable[[Recorder], bool]) -> Recorder:
        """A step recorder for a round (TF's step marker; Keras on JAX overrides it)."""
        return Recorder(self.tf, phase, next_step, done)

    def round(self, i: int) -> dict:
        spec = self.spec
        progress(self.mode_path, f"round {i} (untraced)")
        # one untimed step first: the process sat idle while the other modes ran (cold caches)
        warm = self.recorder("round-warmup", self.next_step, lambda r: len(r.steps_s) >= 1)
        self.driver.run(warm)
        min_steps = spec.get("round_min_steps", 3)
        rec = self.recorder(f"round-{i}", warm.next_step,
                            lambda r: len(r.steps_s) >= min_steps and r.elapsed >= spec.get("round_time", 1.0)
                            or (len(r.steps_s) >= 1 and r.elapsed >= spec["max_time"]))
        usage = machine.Usage()
        self.driver.run(rec)
        load = usage.finish()
        self.next_step = rec.next_step
        progress(self.mode_path, "waiting for the next round")
        out = {"round": i, "steps_s": list(rec.steps_s), "step_nums": list(rec.step_nums), **load}
        if getattr(self.driver, "signatures", None) is not None:  # the arguments fed, rounds included
            out["input_signatures"] = self.driver.signatures.summary()
        return out



def _v1_optimizers() -> None:
    """Keras 2's optimizers (``tf_keras.optimizers.Adam`` ...) need eager; their TF1 twins live in
    ``tf_keras.optimizers.legacy``. A TF1 mode gives the workload the twins under the usual names,
    as TF 1.x Keras did (tf-keras 2.21)."""
    from traceinsight.capture import compat
    keras2 = compat.legacy_keras()
    legacy = keras2.optimizers.legacy
    for name in dir(legacy):
        if name[:1].isupper() and name != "Optimizer":
            setattr(keras2.optimizers, name, getattr(legacy, name))
