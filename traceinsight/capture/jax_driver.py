"""Keras 3 on its JAX backend: one mode's phases in the workload process, traced with jax.profiler.

The same model file and data as the TensorFlow modes (``model()``, ``data()``, ``compile_kwargs()``),
with ``KERAS_BACKEND=jax`` set by the parent for this process, and the same phases as the TF modes
(``traceinsight.capture.phases``):

1. **host pass**: ``jax.profiler.start_trace`` (host tracer level 3, python tracer 0) holding the
   **first step** (JAX's tracing, lowering and XLA compile happen there) and further steps for
   ``host_trace_ms`` after it, at most ``host_max_steps``;
2. warm-up steps, then the **untraced timing phase** (the same stopping rule as the TF modes);
3. **python pass** (python tracer level 1), bounded by time and ``python_max_steps``;
4. with ``rounds`` > 1, interleaved untraced rounds on request (``phases.RoundServer``).

Every step is wrapped in ``jax.profiler.StepTraceAnnotation("train", step_num=n)`` (a ``train``
event with a ``step_num`` stat: the step marker the analysis reads for TF traces too), and its
outputs are waited for (``jax.block_until_ready``) inside the timed region, so JAX's asynchronous
dispatch is counted.

jax.profiler traces record no ``profile_options``: the requested levels are written with the pass,
and ``recorded`` stays null.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Callable

from traceinsight import runfolder
from traceinsight.analysis.names import STEP_MARKER_TRAIN
from traceinsight.capture import machine
from traceinsight.capture import modes as modes_mod
from traceinsight.capture.drivers import FitDriver
from traceinsight.capture.keras_driver import default_loss, layer_calls
from traceinsight.capture.loading import WorkloadError, call_user, keras_batch, load_workload
from traceinsight.capture.phases import RoundServer, progress
from traceinsight.capture.steps import Recorder
from traceinsight.modekind import FIT, PREDICT_ON_BATCH, TRAIN_ON_BATCH
from traceinsight.pyfiles import loaded_python_files

HOST_LEVELS = {"host_tracer_level": 3, "device_tracer_level": 1, "python_tracer_level": 0}
PYTHON_LEVELS = {"host_tracer_level": 3, "device_tracer_level": 1, "python_tracer_level": 1}


class _Tracing:
    """Whether a jax.profiler trace is being recorded (set by ``traced_pass``)."""

    now = False


def _recorder(phase: str, next_step: int, done: Callable[[Recorder], bool]) -> Recorder:
    """``capture.steps.Recorder`` with JAX's step marker (StepTraceAnnotation)."""
    import jax
    annotation = jax.profiler.StepTraceAnnotation
    return Recorder(None, phase, next_step, done,
                    marker=lambda step: annotation(STEP_MARKER_TRAIN, step_num=step),
                    enabled=lambda: _Tracing.now)


def _wait(out) -> None:
    import jax
    jax.block_until_ready(out)


class JaxCallDriver:
    """One call per step; its outputs waited for inside the step."""

    def __init__(self, call: Callable[[], Any], details: dict):
        self.call = call
        self.details = details
        self.signatures = None

    def run(self, rec) -> None:
        while not rec.done:
            rec.begin()
            try:
                _wait(self.call())
            except BaseException:
                if rec.in_step:
                    rec.end()
                raise
            rec.end()


def jax_keras_driver(mode: modes_mod.Mode, module):
    import jax
    import keras
    import numpy as np
    if keras.backend.backend() != "jax":
        raise WorkloadError(f"mode {mode.name}: Keras runs on {keras.backend.backend()!r}, not jax "
                            "(KERAS_BACKEND must be set before keras is imported)")
    model = call_user(module.model, "model()")
    if not hasattr(model, "predict_on_batch"):
        raise WorkloadError(f"model() returned {type(model).__name__}, not a keras.Model")
    x, y = keras_batch(module)
    flat = jax.tree_util.tree_leaves
    details: dict[str, Any] = {"keras": keras.__version__, "keras_module": keras.__name__,
                               "keras_backend": "jax", "jax": jax.__version__,
                               "jax_devices": [str(d) for d in jax.devices()],
                               "model_class": f"{type(model).__module__}.{type(model).__name__}",
                               "x_shape": [list(np.shape(a)) for a in flat(x)],
                               "y_shape": [list(np.shape(a)) for a in flat(y)] if y is not None else None}
    if mode.needs_y:
        if y is None:
            raise WorkloadError(f"mode {mode.name} trains, and data() returned no y")
        ck = dict(call_user(module.compile_kwargs, "compile_kwargs()")) if hasattr(module, "compile_kwargs") \
            else {"optimizer": "adam", "loss": default_loss(np, y)}
        ck.update(run_eagerly=False)   # jit_compile: Keras' default on JAX (jitted steps)
        call_user(lambda: model.compile(**ck), "model.compile()")
        details["compile_kwargs"] = {k: (v if isinstance(v, (str, int, float, bool, type(None)))
                                         else f"{type(v).__module__}.{type(v).__name__}")
                                     for k, v in ck.items()}
    # the model's layers by class, as for the TensorFlow modes: the layers table names each HLO
    # op's layer by its metadata and matches it to the other modes' layers by class
    details["layer_calls"] = layer_calls(model)
    if mode.row.call == PREDICT_ON_BATCH:
        return JaxCallDriver(lambda: model.predict_on_batch(x), details)
    if mode.row.call == TRAIN_ON_BATCH:
        return JaxCallDriver(lambda: model.train_on_batch(x, y), details)
    if mode.row.call == FIT:
        n = int(np.shape(flat(x)[0])[0])
        # as the TF fit mode: the batch repeated so one epoch holds several batches
        nbytes = sum(int(np.prod(np.shape(a))) * 4 for a in flat((x, y)))
        reps = max(1, min(64, (64 << 20) // max(1, nbytes)))
        xs = jax.tree_util.tree_map(lambda a: np.concatenate([a] * reps, 0), x)
        ys = jax.tree_util.tree_map(lambda a: np.concatenate([a] * reps, 0), y)
        details.update(batches_per_epoch=reps, batch_size=n)
        return FitDriver(None, keras, model, {"x": xs, "y": ys, "batch_size": n, "epochs": 10**9,
                                              "shuffle": False}, details, wait=_wait)
    raise WorkloadError(f"mode {mode.name} is not implemented")


def traced_pass(driver, logdir: Path, duration_ms: int, levels: dict[str, int], max_steps: int,
                next_step: int, name: str) -> tuple[Recorder, dict]:
    """Steps under ``jax.profiler.start_trace`` until ``duration_ms`` (counted after the first
    step in the pass that holds it) or ``max_steps``. A step is never cut by the trace's end."""
    import jax
    logdir.mkdir(parents=True, exist_ok=True)
    opts = jax.profiler.ProfileOptions()
    opts.host_tracer_level = levels["host_tracer_level"]
    opts.python_tracer_level = levels["python_tracer_level"]
    opts.device_tracer_level = levels["device_tracer_level"]
    problem = None
    t0 = time.perf_counter()
    # the pass holding the first step (JAX's tracing and compile) runs for the duration after
    # that step, so that it has as many steady steps as a TF mode's host trace (which traces the
    # host again after warm-up when the first step outlasts it); a trace never cuts a step

    def done(r: Recorder) -> bool:
        if len(r.steps_s) >= max_steps:
            return True
        first = r.steps_s[0] if next_step == 0 and r.steps_s else 0.0
        return len(r.steps_s) >= 1 and time.perf_counter() - t0 - first >= duration_ms / 1000

    rec = _recorder(name, next_step, done)
    jax.profiler.start_trace(str(logdir), profiler_options=opts)
    _Tracing.now = True
    usage = machine.Usage()
    try:
        driver.run(rec)
    finally:
        _Tracing.now = False
        load = usage.finish()
        try:
            jax.profiler.stop_trace()
        except Exception as e:  # reported in timings.json
            problem = f"stop_trace failed: {type(e).__name__}: {e}"
    files = runfolder.find_xplanes(logdir)
    path = max(files, key=lambda p: p.stat().st_mtime) if files else None
    result: dict[str, Any] = {
        "duration_ms": duration_ms, "live": True, "tracer": "jax.profiler",
        "profile_options": {"requested": dict(levels), "recorded": None, "ok": None,
                            "trace": str(path) if path else None},
        "trace": str(path.relative_to(logdir.parent.parent)) if path else None,
        "steps_s": [s for s, t in zip(rec.steps_s, rec.traced) if t],
        "step_nums": [n for n, t in zip(rec.step_nums, rec.traced) if t],
        "load": load,   # the machine's load while the traced steps ran
    }
    if path is None:
        problem = problem or "jax.profiler saved no trace"
    if problem:
        result["problem"] = problem
    return rec, result


class JaxRoundServer(RoundServer):
    """The TF modes' interleaved rounds, stepped with JAX's step marker."""

    def recorder(self, phase: str, next_step: int, done: Callable[[Recorder], bool]) -> Recorder:
        return _recorder(phase, next_step, done)


def run_jax_mode(spec: dict, mode: modes_mod.Mode) -> tuple[dict, RoundServer | None]:
    mode_path = Path(spec["mode_path"])
    if os.environ.get("KERAS_BACKEND") != "jax":
        raise WorkloadError(f"mode {mode.name} needs KERAS_BACKEND=jax in its process")
    progress(mode_path, "importing JAX")
    try:
        import jax  # noqa: F401
    except ImportError as e:
        from traceinsight.capture.loading import SetupError
        raise SetupError(f"mode {mode.name} needs JAX ({e}): {modes_mod.JAX_INSTALL}") from e
    progress(mode_path, "building the workload")
    module = load_workload(spec["workload"])
    driver = jax_keras_driver(mode, module)
    load_start = machine.loadavg()
    timings: dict[str, Any] = {"mode": mode.name, "kind": mode.kind, "pid": os.getpid(),
                               "first_step_s": None, "first_step_traced": True, "first_step_num": 0}

    # 1. host pass, holding the first step
    progress(mode_path, "host trace: first step")
    rec, host = traced_pass(driver, mode_path / "host", spec["host_trace_ms"], HOST_LEVELS,
                            spec["host_max_steps"], 0, "host")
    timings["first_step_s"] = rec.steps_s[0]
    host.update(steps_s=[s for s, n in zip(host["steps_s"], host["step_nums"]) if n != 0],
                step_nums=[n for n in host["step_nums"] if n != 0], untraced_steps=0)
    next_step = rec.next_step

    # 2. warm-up
    progress(mode_path, "warm-up")
    warm = _recorder("warmup", next_step,
                     lambda r: len(r.steps_s) >= spec["warmup_steps"] or
                     (len(r.steps_s) >= 1 and r.elapsed >= spec["max_time"]))
    driver.run(warm)
    next_step = warm.next_step

    # 3. untraced timing (round 0 of the interleaved rounds)
    progress(mode_path, "timing (untraced)")
    timing = _recorder("timing", next_step,
                       lambda r: len(r.steps_s) >= spec["min_steps"] and r.elapsed >= spec["min_time"]
                       or (len(r.steps_s) >= max(3, min(spec["min_steps"], 3)) and r.elapsed >= spec["max_time"]))
    usage = machine.Usage()
    driver.run(timing)
    load = usage.finish()
    timings.update(warmup_steps=len(warm.steps_s), steps_s=timing.steps_s,
                   step_nums=timing.step_nums, timing_phase_s=timing.elapsed)
    timings["rounds"] = [{"round": 0, "steps_s": list(timing.steps_s),
                          "step_nums": list(timing.step_nums), **load}]
    next_step = timing.next_step

    traced: dict[str, Any] = {"host": host}
    # 4. python pass
    if spec.get("python_tracer", True):
        progress(mode_path, "python trace")
        prec, py = traced_pass(driver, mode_path / "python", spec["python_trace_ms"], PYTHON_LEVELS,
                               spec["python_max_steps"], next_step, "python")
        traced["python"] = py
        next_step = prec.next_step
    timings["traced"] = traced
    timings["details"] = dict(driver.details)
    if timings["details"].get("layer_calls"):
        timings["layer_calls"] = timings["details"].pop("layer_calls")
    timings["details"].pop("layer_calls", None)
    timings["python_files"] = loaded_python_files(spec.get("workload"))
    timings["load"] = {**machine.cpu_count(), "loadavg_start": load_start,
                       "loadavg_end": machine.loadavg(), "timing_phase": load}
    server = JaxRoundServer(None, driver, spec, mode_path, next_step) if spec.get("rounds", 1) > 1 \
        else None
    return timings, server
