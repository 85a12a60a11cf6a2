"""The workload process: ``python -m traceinsight.capture.runner {probe|mode} --spec JSON``.

This is the only module of traceinsight that imports TensorFlow. The parent (``capture`` command)
starts one process per mode, because eager disabling (``v1-session``), XLA caches, Keras' global
state and memory are process-global, and a mode that crashes or hangs must not take the others with it.

One mode, in order:

1. build the model / inputs for the mode; start TF's profiler server on a free loopback port;
2. **host pass** (host tracer level 3, python tracer 0): a client thread traces the server through
   xprof's client, which keeps the requested options (TF 2.21's ``tf.profiler.experimental.start`` and
   ``client.trace`` silently drop them, see /work/shared/TRACE_FACTS.md section 1). We wait until
   ``traceme_enabled()`` turns true, then run the **first step** (tracing / compilation happen there,
   so the trace shows them; its time is measured with perf_counter, and is therefore a traced time),
   then keep stepping until the trace ends or ``host_max_steps`` steps were taken;
3. warm-up steps, then the **untraced timing phase** (at least ``min_steps`` steps and ``min_time``
   seconds, at most ``max_time`` seconds once ``min_steps`` are done);
4. **python pass** (python tracer level 1, host 3), bounded by time and ``python_max_steps``;
5. read each saved trace's own ``profile_options`` and record requested vs recorded levels;
6. write ``timings.json`` atomically.

Every step is wrapped in a step marker ``tf.profiler.experimental.Trace("train", step_num=n, _r=1)``
(step numbers are unique across the passes; the first step is number 0), and its outputs are
materialized (``.numpy()``) inside the timed region, so asynchronous work is counted.
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import json
import os
import socket
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any, Callable

from traceinsight import runfolder
from traceinsight.capture import modes as modes_mod
from traceinsight.capture import options as options_mod
from traceinsight.pyfiles import loaded_python_files

HOST_LEVELS = {"host_tracer_level": 3, "device_tracer_level": 1, "python_tracer_level": 0}
PYTHON_LEVELS = {"host_tracer_level": 3, "device_tracer_level": 1, "python_tracer_level": 1}


class WorkloadError(Exception):
    """The workload's own code failed (shown to the user as one line)."""


class SetupError(Exception):
    """This Python cannot capture at all (TensorFlow or xprof missing): not the workload's fault."""


# ----------------------------------------------------------------------------- workload loading

def load_workload(path: str):
    path = os.path.abspath(path)
    sys.path.insert(0, os.path.dirname(path))
    name = "_traceinsight_workload_" + Path(path).stem.replace("-", "_")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as e:
        raise WorkloadError(f"importing {Path(path).name} raised {_one_line(e)}") from e
    return module


def _one_line(e: BaseException) -> str:
    msg = str(e).strip().splitlines()
    return f"{type(e).__name__}: {msg[0]}" if msg else type(e).__name__


def _call(fn: Callable, what: str, *args):
    try:
        return fn(*args)
    except BaseException as e:
        raise WorkloadError(f"{what} raised {_one_line(e)}") from e


def keras_batch(module) -> tuple[Any, Any]:
    batch = _call(module.data, "data()")
    if isinstance(batch, dict):
        raise WorkloadError("data() must return x or (x, y), not a dict")
    if isinstance(batch, (tuple, list)):
        if len(batch) == 1:
            return batch[0], None
        if len(batch) == 2:
            return batch[0], batch[1]
        raise WorkloadError(f"data() returned {len(batch)} items; expected x or (x, y)")
    return batch, None


def input_source(module) -> Callable[[int], tuple]:
    """``step number -> args``: ``inputs()`` once, or ``inputs(i)`` before every step."""
    try:
        n_params = len([p for p in inspect.signature(module.inputs).parameters.values()
                        if p.default is inspect.Parameter.empty
                        and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)])
    except (TypeError, ValueError):
        n_params = 0

    def as_tuple(v):
        return tuple(v) if isinstance(v, (tuple, list)) else (v,)

    if n_params >= 1:
        return lambda i: as_tuple(_call(module.inputs, f"inputs({i})", i))
    fixed = as_tuple(_call(module.inputs, "inputs()"))
    return lambda i: fixed


# ----------------------------------------------------------------------------- step recording

class Recorder:
    """Times steps with perf_counter and wraps each one in a step marker."""

    def __init__(self, tf, phase: str, next_step: int, done: Callable[["Recorder"], bool]):
        self._Trace = tf.profiler.experimental.Trace
        from tensorflow.python.profiler.internal import _pywrap_traceme
        self._enabled = _pywrap_traceme.traceme_enabled
        self.phase = phase
        self.next_step = next_step
        self._done = done
        self.steps_s: list[float] = []
        self.step_nums: list[int] = []
        self.traced: list[bool] = []
        self.t_phase = time.perf_counter()
        self._open = None

    @property
    def in_step(self) -> bool:
        return self._open is not None

    def begin(self) -> None:
        marker = self._Trace("train", step_num=self.next_step, _r=1)
        marker.__enter__()
        traced = self._enabled()
        self._open = (marker, traced, time.perf_counter())

    def end(self) -> float:
        t1 = time.perf_counter()
        marker, traced_at_begin, t0 = self._open
        traced = traced_at_begin and self._enabled()
        marker.__exit__(None, None, None)
        self._open = None
        self.steps_s.append(t1 - t0)
        self.step_nums.append(self.next_step)
        self.traced.append(traced)
        self.next_step += 1
        return t1 - t0

    @property
    def done(self) -> bool:
        return self._done(self)

    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self.t_phase


def materialize(tf, out) -> None:
    for t in tf.nest.flatten(out):
        if hasattr(t, "numpy"):
            t.numpy()


# ----------------------------------------------------------------------------- drivers

class CallDriver:
    """One call per step."""

    def __init__(self, tf, call: Callable[[int], Any], prepare: Callable[[int], tuple] | None = None,
                 details: dict | None = None):
        self.tf = tf
        self.call = call            # (args) -> outputs
        self.prepare = prepare or (lambda i: ())
        self.details = details or {}

    def run(self, rec: Recorder) -> None:
        tf = self.tf
        while not rec.done:
            args = self.prepare(rec.next_step)
            rec.begin()
            try:
                materialize(tf, self.call(*args))
            except BaseException:
                if rec.in_step:
                    rec.end()
                raise
            rec.end()


class FitDriver:
    """One step = one batch inside ``model.fit``; markers and times from batch callbacks.

    The first step of the process starts before ``fit()`` is called, so it holds fit's setup and the
    train function's tracing. Later ``fit()`` calls' setup (one per phase) is outside every step.
    """

    def __init__(self, tf, keras, model, fit_args: dict, details: dict):
        self.tf, self.keras, self.model = tf, keras, model
        self.fit_args = fit_args
        self.details = details
        self.first = True

    def run(self, rec: Recorder) -> None:
        driver = self

        class _StepCallback(self.keras.callbacks.Callback):
            def on_train_batch_begin(self, batch, logs=None):
                if not rec.in_step:
                    rec.begin()

            def on_train_batch_end(self, batch, logs=None):
                for v in (logs or {}).values():   # materialize the step's results
                    if hasattr(v, "numpy"):
                        v.numpy()
                rec.end()
                if rec.done:
                    driver.model.stop_training = True

        if rec.done:
            return
        if self.first:
            rec.begin()  # the first step includes fit()'s setup
            self.first = False
        self.model.fit(callbacks=[_StepCallback()], verbose=0, **self.fit_args)
        if rec.in_step:  # fit returned without a batch (should not happen): close the marker
            rec.end()


def _default_loss(np, y) -> str:
    y = np.asarray(y)
    if np.issubdtype(y.dtype, np.integer):
        return "sparse_categorical_crossentropy" if y.max(initial=0) > 1 else "binary_crossentropy"
    if y.size and np.isin(y, (0, 1)).all():
        return "binary_crossentropy"
    return "mse"


def _batch_size(tf, np, x) -> int:
    """Rows of the batch (x may be an array, a tensor, or a structure of them for multi-input models)."""
    return int(np.shape(tf.nest.flatten(x)[0])[0])


def keras_driver(tf, mode: modes_mod.Mode, module):
    import numpy as np
    if mode.legacy_keras:
        import tf_keras as keras
    else:
        import keras
    model = _call(module.model, "model()")
    if not hasattr(model, "predict_on_batch"):
        raise WorkloadError(f"model() returned {type(model).__name__}, not a keras.Model")
    x, y = keras_batch(module)
    details: dict[str, Any] = {"keras": getattr(keras, "__version__", "?"),
                               "keras_module": keras.__name__,
                               "model_class": f"{type(model).__module__}.{type(model).__name__}",
                               "x_shape": tf.nest.map_structure(lambda a: list(np.shape(a)), x),
                               "y_shape": tf.nest.map_structure(lambda a: list(np.shape(a)), y) if y is not None else None}
    if mode.needs_y and y is None:
        raise WorkloadError(f"mode {mode.name} trains, and data() returned no y")
    if mode.tensor_inputs:
        x = tf.nest.map_structure(tf.convert_to_tensor, x)
        if y is not None:
            y = tf.nest.map_structure(tf.convert_to_tensor, y)
    base = mode.base
    if mode.needs_y:
        ck = dict(_call(module.compile_kwargs, "compile_kwargs()")) if hasattr(module, "compile_kwargs") \
            else {"optimizer": "adam", "loss": _default_loss(np, y)}
        if base == "train_on_batch-eager":
            ck.update(run_eagerly=True, jit_compile=False)
        elif base == "train_on_batch-xla":
            ck.update(run_eagerly=False, jit_compile=True)
        else:
            ck.update(run_eagerly=False, jit_compile=False)
        _call(lambda: model.compile(**ck), "model.compile()")
        details["compile_kwargs"] = {k: (v if isinstance(v, (str, int, float, bool, type(None)))
                                         else f"{type(v).__module__}.{type(v).__name__}")
                                     for k, v in ck.items()}

    if base == "eager":
        return CallDriver(tf, lambda: model(x), details=details)
    if base == "function":
        f = tf.function(model)
        return CallDriver(tf, lambda: f(x), details=details)
    if base == "xla":
        f = tf.function(model, jit_compile=True)
        return CallDriver(tf, lambda: f(x), details=details)
    if base == "predict":
        n = _batch_size(tf, np, x)
        return CallDriver(tf, lambda: model.predict(x, batch_size=n, verbose=0), details=details)
    if base == "predict_on_batch":
        return CallDriver(tf, lambda: model.predict_on_batch(x), details=details)
    if base.startswith("train_on_batch"):
        return CallDriver(tf, lambda: model.train_on_batch(x, y), details=details)
    n = _batch_size(tf, np, x)
    if base == "fit":
        # Repeat the batch so one epoch holds several batches (epoch bookkeeping stays out of most
        # steps) without using much memory: at most 64 batches or ~64 MB.
        nbytes = sum(int(np.prod(np.shape(a))) * 4 for a in tf.nest.flatten((x, y)))
        reps = max(1, min(64, (64 << 20) // max(1, nbytes)))
        if mode.tensor_inputs:
            xs = tf.nest.map_structure(lambda a: tf.concat([a] * reps, 0), x)
            ys = tf.nest.map_structure(lambda a: tf.concat([a] * reps, 0), y)
        else:
            xs = tf.nest.map_structure(lambda a: np.concatenate([a] * reps, 0), x)
            ys = tf.nest.map_structure(lambda a: np.concatenate([a] * reps, 0), y)
        details.update(batches_per_epoch=reps, batch_size=n)
        return FitDriver(tf, keras, model, {"x": xs, "y": ys, "batch_size": n, "epochs": 10**9,
                                            "shuffle": False}, details)
    if base == "fit-dataset":
        ds = tf.data.Dataset.from_tensors((x, y)).repeat().prefetch(tf.data.AUTOTUNE)
        details.update(batch_size=n, dataset="from_tensors((x, y)).repeat().prefetch(AUTOTUNE)")
        return FitDriver(tf, keras, model, {"x": ds, "steps_per_epoch": 10**9, "epochs": 1}, details)
    raise WorkloadError(f"mode {mode.name} is not implemented")


def describe_arg(v: Any) -> str:
    """What tf.function keys a trace on, for one argument: a Python value by its value, an array
    or tensor by dtype and shape, anything else by its type."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return f"Python {type(v).__name__} {v!r}"[:80]
    shape, dtype = getattr(v, "shape", None), getattr(v, "dtype", None)
    if shape is not None and dtype is not None:
        dims = tuple(None if d is None else int(d) for d in (shape.as_list()
                     if hasattr(shape, "as_list") and shape.rank is not None else tuple(shape)))
        kind = "ndarray" if type(v).__module__ == "numpy" else "tensor"
        return f"{kind} {getattr(dtype, 'name', dtype)} shape {dims}"
    if isinstance(v, (list, tuple)):
        return f"{type(v).__name__} of {len(v)}: " + ", ".join(describe_arg(x) for x in v[:4])
    return f"{type(v).__module__}.{type(v).__name__} object"


class SignatureLog:
    """Wraps a step's input source and records the distinct argument signatures it fed (kept to
    the first ``limit``): the evidence for why a tf.function retraced."""

    def __init__(self, source: Callable[[int], tuple], limit: int = 64):
        self.source = source
        self.limit = limit
        self.seen: dict[tuple, dict] = {}
        self.steps = 0

    def __call__(self, i: int) -> tuple:
        args = self.source(i)
        sig = tuple(describe_arg(a) for a in args)
        self.steps += 1
        entry = self.seen.get(sig)
        if entry is not None:
            entry["steps"] += 1
        elif len(self.seen) < self.limit:
            self.seen[sig] = {"args": list(sig), "first_step": i, "steps": 1}
        return args

    def summary(self) -> dict:
        return {"steps": self.steps, "distinct": list(self.seen.values()),
                "truncated": len(self.seen) >= self.limit}


def function_driver(tf, mode: modes_mod.Mode, module):
    source = SignatureLog(input_source(module))
    step = module.step
    details: dict[str, Any] = {}
    if mode.base == "eager":
        driver = CallDriver(tf, step, prepare=source, details=details)
    elif mode.base == "function":
        driver = CallDriver(tf, tf.function(step), prepare=source, details=details)
    elif mode.base == "xla":
        driver = CallDriver(tf, tf.function(step, jit_compile=True), prepare=source, details=details)
    elif mode.base == "v1-session":
        driver = session_driver(tf, step, source, details)
    else:
        raise WorkloadError(f"mode {mode.name} is not implemented")
    driver.signatures = source
    return driver


def session_driver(tf, step, source, details):
    """TF1 style: placeholders for every argument (unknown dims), graph built once, Session.run."""
    import numpy as np
    v1 = tf.compat.v1

    def fetch(args: tuple) -> tuple:
        # inputs() ran with eager disabled: tf.constant & co. gave symbolic tensors of the default
        # graph. Evaluate them to numpy (outside the timed region) so they can be fed.
        symbolic = [i for i, a in enumerate(args) if isinstance(a, (tf.Tensor, tf.Variable))]
        if not symbolic:
            return args
        graph = args[symbolic[0]].graph
        with v1.Session(graph=graph) as s:
            if any(isinstance(args[i], tf.Variable) for i in symbolic):
                s.run(v1.variables_initializer([args[i] for i in symbolic if isinstance(args[i], tf.Variable)]))
            values = s.run([args[i] for i in symbolic])
        out = list(args)
        for i, v in zip(symbolic, values):
            out[i] = v
        return tuple(out)

    cache: dict[int, tuple] = {}
    raw_source = source

    def source(i: int) -> tuple:  # noqa: F811 -- the same contract, numpy values out
        args = raw_source(i)
        key = id(args)
        if key not in cache:
            cache.clear()
            cache[key] = (args, fetch(args))
        return cache[key][1]

    args0 = source(0)
    graph = tf.Graph()
    placeholders = []
    with graph.as_default():
        for i, a in enumerate(args0):
            arr = np.asarray(a)
            dtype = tf.as_dtype(np.float32 if arr.dtype == np.float64 and not isinstance(a, np.ndarray)
                                else arr.dtype)
            placeholders.append(v1.placeholder(dtype, shape=[None] * arr.ndim, name=f"arg{i}"))
        out = _call(lambda: step(*placeholders), "step() while building the v1 graph")
        if out is None:
            raise WorkloadError("step() returned None: return the tensors to compute "
                                "(v1-session runs what step returns)")
        init = v1.global_variables_initializer()
    sess = v1.Session(graph=graph)
    sess.run(init)
    details["graph_ops"] = len(graph.get_operations())
    details["feeds"] = "every argument is a placeholder fed per step (feed_dict)"
    return CallDriver(tf, lambda *a: sess.run(out, feed_dict=dict(zip(placeholders, a))),
                      prepare=source, details=details)


# ----------------------------------------------------------------------------- profiling

def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class TracedPass:
    """A client-side trace of this process's profiler server, from a thread (duration-based)."""

    def __init__(self, port: int, logdir: Path, duration_ms: int, levels: dict[str, int]):
        from tensorflow.python.profiler.internal import _pywrap_traceme
        from xprof.convert import _pywrap_profiler_plugin

        self._enabled = _pywrap_traceme.traceme_enabled
        self._trace = _pywrap_profiler_plugin.trace
        self.port, self.logdir, self.duration_ms, self.levels = port, Path(logdir), duration_ms, levels
        self.error: str | None = None
        self.thread = threading.Thread(target=self._run, name="traceinsight-trace", daemon=True)

    def _run(self) -> None:
        try:
            # (service_addr, logdir, worker_list, include_dataset_ops, duration_ms, attempts, options)
            self._trace(f"localhost:{self.port}", str(self.logdir), "", True, int(self.duration_ms), 3,
                        dict(self.levels))
        except Exception as e:  # reported in timings.json, the capture goes on
            self.error = _one_line(e)

    def start(self, live_timeout_s: float = 20.0) -> bool:
        """Start tracing; True once the profiler session records (TraceMe enabled)."""
        self.logdir.mkdir(parents=True, exist_ok=True)
        self.thread.start()
        deadline = time.perf_counter() + live_timeout_s
        while time.perf_counter() < deadline:
            if self._enabled():
                return True
            if not self.thread.is_alive():
                return False
            time.sleep(0.0005)
        return False

    @property
    def live(self) -> bool:
        return self.thread.is_alive() and self._enabled()

    def finish(self) -> Path | None:
        self.thread.join()
        files = runfolder.find_xplanes(self.logdir)
        return max(files, key=lambda p: p.stat().st_mtime) if files else None


def traced_phase(tf, driver, port, logdir, duration_ms, levels, max_steps, next_step, name):
    tp = TracedPass(port, logdir, duration_ms, levels)
    live = tp.start()

    def done(rec: Recorder) -> bool:
        return len(rec.steps_s) >= max_steps or not tp.live

    rec = Recorder(tf, name, next_step, done)
    if live:
        driver.run(rec)
    path = tp.finish()
    result = {
        "duration_ms": duration_ms,
        "profile_options": options_mod.check(levels, path),
        "trace": str(path.relative_to(logdir.parent.parent)) if path else None,
    }
    if not live:
        result["problem"] = "the profiler never started recording" + (f" ({tp.error})" if tp.error else "")
    elif tp.error:
        result["problem"] = tp.error
    return rec, result


PROGRESS = ".progress.json"


def progress(mode_path: Path, phase: str) -> None:
    """Tell the parent which phase runs (its live display, and what a timed-out mode was doing)."""
    runfolder.atomic_write_json(mode_path / PROGRESS, {"phase": phase, "t": time.time()})


def run_mode(spec: dict) -> dict:
    mode = modes_mod.get(spec["kind"], spec["mode"])
    if mode is None:
        raise WorkloadError(f"unknown mode {spec['mode']!r} for a {spec['kind']} workload")
    if mode.legacy_keras:
        import tf_keras
        sys.modules["keras"] = tf_keras  # the workload's `import keras` gets Keras 2
    mode_path = Path(spec["mode_path"])
    progress(mode_path, "importing TensorFlow")
    import tensorflow as tf
    if mode.base == "v1-session":
        tf.compat.v1.disable_eager_execution()
    progress(mode_path, "building the workload")
    module = load_workload(spec["workload"])
    driver = keras_driver(tf, mode, module) if mode.kind == modes_mod.KERAS else function_driver(tf, mode, module)

    port = free_port()
    tf.profiler.experimental.server.start(port)
    timings: dict[str, Any] = {"mode": mode.name, "kind": mode.kind, "pid": os.getpid(),
                               "first_step_s": None, "first_step_traced": True, "first_step_num": 0}

    # 1. host pass, holding the first step
    progress(mode_path, "host trace: first step")
    rec, host = traced_phase(tf, driver, port, mode_path / "host", spec["host_trace_ms"], HOST_LEVELS,
                             spec["host_max_steps"], 0, "host")
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
        rec2, host = traced_phase(tf, driver, port, mode_path / "host", spec["host_trace_ms"],
                                  HOST_LEVELS, spec["host_max_steps"], next_step, "host")
        host.update(steps_s=[s for s, t in zip(rec2.steps_s, rec2.traced) if t],
                    step_nums=[n for n, t in zip(rec2.step_nums, rec2.traced) if t],
                    untraced_steps=sum(1 for t in rec2.traced if not t),
                    first_session={k: first_session.get(k) for k in ("trace", "profile_options")},
                    first_step_note=(
                        f"the first step ({timings['first_step_s']:.1f} s) outlasted the host trace "
                        f"({spec['host_trace_ms']} ms): host/ has a second session, after warm-up, "
                        "with steady steps; raise --host-trace-ms to trace the whole first step"))
        if not first_session["profile_options"].get("ok"):
            host["profile_options"] = first_session["profile_options"]  # report the worse one
        next_step = rec2.next_step

    # 3. untraced timing
    timing = Recorder(tf, "timing", next_step,
                      lambda r: len(r.steps_s) >= spec["min_steps"] and r.elapsed >= spec["min_time"]
                      or (len(r.steps_s) >= max(3, min(spec["min_steps"], 3)) and r.elapsed >= spec["max_time"]))
    progress(mode_path, "timing (untraced)")
    driver.run(timing)
    timings.update(warmup_steps=len(warm.steps_s), steps_s=timing.steps_s,
                   step_nums=timing.step_nums, timing_phase_s=timing.elapsed)
    next_step = timing.next_step

    traced: dict[str, Any] = {"host": host}
    # 4. python pass
    if spec.get("python_tracer", True):
        progress(mode_path, "python trace")
        prec, py = traced_phase(tf, driver, port, mode_path / "python", spec["python_trace_ms"],
                                PYTHON_LEVELS, spec["python_max_steps"], next_step, "python")
        py.update(steps_s=[s for s, t in zip(prec.steps_s, prec.traced) if t],
                  step_nums=[n for n, t in zip(prec.step_nums, prec.traced) if t])
        traced["python"] = py
    timings["traced"] = traced
    timings["details"] = dict(driver.details)
    # the python tracer names frames by file base name only: record which package each is from
    timings["python_files"] = loaded_python_files(spec.get("workload"))
    if getattr(driver, "signatures", None) is not None:
        timings["input_signatures"] = driver.signatures.summary()
    return timings


def probe(spec: dict) -> dict:
    """Import the workload, call its functions once, report what it is and the environment."""
    import numpy as np
    try:
        import tensorflow as tf
    except ImportError as e:
        raise SetupError(f"capture needs TensorFlow in {sys.executable} ({_one_line(e)}): "
                         "pip install 'traceinsight[cpu]' (or '[capture]' for GPU builds)") from e
    try:
        from xprof.convert import _pywrap_profiler_plugin  # noqa: F401  (the profiler client)
    except ImportError as e:
        raise SetupError(f"capture needs xprof's profiler client in {sys.executable} ({_one_line(e)}): "
                         "pip install xprof") from e
    result: dict[str, Any] = {"tensorflow": tf.__version__, "numpy": np.__version__,
                              "gpus": [d.name for d in tf.config.list_physical_devices("GPU")],
                              "tf_built_with_cuda": bool(tf.test.is_built_with_cuda())}
    try:
        import keras
        result["keras"] = keras.__version__
    except Exception:
        result["keras"] = None
    module = load_workload(spec["workload"])
    if spec["kind"] == modes_mod.KERAS:
        model = _call(module.model, "model()")
        if not hasattr(model, "predict_on_batch"):
            raise WorkloadError(f"model() returned {type(model).__name__}, not a keras.Model")
        x, y = keras_batch(module)
        result.update(has_y=y is not None, x_shape=[int(d) for d in np.shape(x)] if not isinstance(x, (dict, list, tuple)) else None)
        if hasattr(module, "compile_kwargs"):
            ck = _call(module.compile_kwargs, "compile_kwargs()")
            if not isinstance(ck, dict):
                raise WorkloadError("compile_kwargs() must return a dict")
    else:
        if not callable(module.step) or not callable(module.inputs):
            raise WorkloadError("step and inputs must be functions")
        if hasattr(module.step, "python_function") or type(module.step).__name__ == "Function":
            raise WorkloadError("step() is decorated with @tf.function: give the plain Python "
                                "function, capture wraps it per mode")
        source = input_source(module)
        source(0)
        result["has_y"] = False
    return result


def _exit_with_parent() -> None:
    """A killed capture must not leave its workload running: exit when the parent goes away."""
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(1.0)
            if os.getppid() != parent:
                os._exit(5)

    threading.Thread(target=watch, name="traceinsight-parent-watch", daemon=True).start()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m traceinsight.capture.runner")
    p.add_argument("what", choices=["probe", "mode"])
    p.add_argument("--spec", required=True, help="JSON object")
    p.add_argument("--out", required=True, help="where to write the result (JSON)")
    args = p.parse_args(argv)
    spec = json.loads(args.spec)
    out = Path(args.out)
    _exit_with_parent()
    try:
        result = probe(spec) if args.what == "probe" else run_mode(spec)
    except WorkloadError as e:
        traceback.print_exc()
        runfolder.atomic_write_json(out.with_name(out.name + ".error"), {"error": str(e)})
        status = 3
    except SetupError as e:
        traceback.print_exc()
        runfolder.atomic_write_json(out.with_name(out.name + ".error"), {"error": str(e), "setup": True})
        status = 3
    except BaseException as e:
        traceback.print_exc()
        runfolder.atomic_write_json(out.with_name(out.name + ".error"), {"error": _one_line(e)})
        status = 4
    else:
        runfolder.atomic_write_json(out, result)
        status = 0
    sys.stdout.flush()
    sys.stderr.flush()
    # os._exit: skip interpreter teardown (TF's profiler server and thread pools can make a clean
    # exit slow or hang); every file is already written and fsynced.
    os._exit(status)


if __name__ == "__main__":
    sys.exit(main())
