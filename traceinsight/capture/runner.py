"""The workload process: ``python -m traceinsight.capture.runner {probe|mode} --spec JSON``.

This module is the process entry (``probe``, ``main``); the work is split along its jobs:
``loading`` (the workload file, calling its functions), ``steps`` (step markers and perf_counter
times), ``drivers`` / ``keras_driver`` / ``function_driver`` (what one step of a mode runs, TF1's
Session included), ``profiling`` (traced passes: a profiler session in this process, no server), ``phases`` (one mode's
phases, below).

These are the only modules of traceinsight that import TensorFlow. The parent (``capture`` command)
starts one process per mode, because eager disabling (``v1-session``), XLA caches, Keras' global
state and memory are process-global, and a mode that crashes or hangs must not take the others with it.

One mode, in order:

1. build the model / inputs for the mode;
2. **host pass** (host tracer level 3, python tracer 0): a profiler session in this process
   (``compat.LocalTrace``, levels as ``compat.Level``: TF 2.21 drops plain ints, the trace's own
   ``profile_options`` then show levels 2/0), bounded by ``host_trace_ms``. We wait until
   ``traceme_enabled()`` turns true, then run the **first step** (tracing / compilation happen there,
   so the trace shows them; its time is measured with perf_counter, and is therefore a traced time),
   then keep stepping until the trace ends or ``host_max_steps`` steps were taken. If the first
   step outlasted the trace (``retry_cut_first_step``), stop here: the parent starts a fresh process
   with a host trace long enough for it;
3. warm-up steps, then the **untraced timing phase** (at least ``min_steps`` steps and ``min_time``
   seconds, at most ``max_time`` seconds once ``min_steps`` are done);
4. **python pass** (python tracer level 1, host 3), bounded by time and ``python_max_steps``;
5. read each saved trace's own ``profile_options`` and record requested vs recorded levels;
6. write the result (the parent writes ``timings.json``); with ``rounds`` > 1, stay alive and time
   one more untraced round each time the parent asks on stdin (``phases.RoundServer``), so the
   modes' rounds interleave (A B C A B C ...), with the machine's load recorded per round.

Every step is wrapped in a step marker ``tf.profiler.experimental.Trace("train", step_num=n, _r=1)``
(step numbers are unique across the passes; the first step is number 0), and its outputs are
materialized (``.numpy()``) inside the timed region, so asynchronous work is counted.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any

from traceinsight.capture import modes as modes_mod
from traceinsight.capture import reserve
from traceinsight.capture.loading import (  # noqa: F401
    SetupError,
    WorkloadError,
    call_user,
    describe_arg,
    input_source,
    keras_batch,
    load_workload,
    one_line,
)


def probe(spec: dict) -> dict:
    """Import the workload, call its functions once, report what it is and the environment."""
    import platform

    from traceinsight.capture import compat
    try:
        import numpy as np
        import tensorflow as tf
    except Exception as e:  # missing, or broken (numpy 2 under TF 2.15 / 2.16, a protobuf too new)
        version = _installed_version("tensorflow") or _installed_version("tensorflow-cpu")
        raise SetupError(f"capture needs a working TensorFlow in {sys.executable} ({one_line(e)}); "
                         + compat.install_hint(version)) from e
    result: dict[str, Any] = {"tensorflow": tf.__version__, "numpy": np.__version__,
                              "gpus": [d.name for d in tf.config.list_physical_devices("GPU")],
                              "tf_built_with_cuda": bool(tf.test.is_built_with_cuda()),
                              "python": platform.python_version(), "python_executable": sys.executable,
                              "tf_keras_installed": compat.legacy_keras_available(),
                              # the jax: modes run in this interpreter too
                              "jax_installed": modes_mod.jax_installed()}
    if not compat.supported(tf.__version__):
        result["unsupported"] = (f"TensorFlow {tf.__version__} is outside the supported "
                                 f"{compat.SUPPORTED_RANGE}: capture may fail or trace differently")
    try:
        import keras
        result["keras"] = keras.__version__
    except Exception:
        result["keras"] = None
    if (compat.version_tuple(result["keras"]) or (3, 0)) < (3, 0):
        # jax: modes run Keras 3 on JAX; TF 2.12 - 2.15 bring Keras 2 (and 2.12 - 2.14 install jax
        # as a dependency of their own): no jax: mode here
        result["jax_installed"] = False
    module = load_workload(spec["workload"])
    if spec["kind"] == modes_mod.KERAS:
        model = call_user(module.model, "model()")
        if not hasattr(model, "predict_on_batch"):
            raise WorkloadError(f"model() returned {type(model).__name__}, not a keras.Model")
        x, y = keras_batch(module)
        result.update(has_y=y is not None, x_shape=[int(d) for d in np.shape(x)] if not isinstance(x, (dict, list, tuple)) else None)
        if hasattr(module, "compile_kwargs"):
            ck = call_user(module.compile_kwargs, "compile_kwargs()")
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


def _installed_version(dist: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version(dist)
    except PackageNotFoundError:
        return None


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
    server = None
    try:
        if args.what == "probe":
            result = probe(spec)
        else:
            # phases imports numpy / protobuf (TensorFlow's own dependencies): after the probe
            # checked that this interpreter has a working TensorFlow
            mode = modes_mod.get(spec["kind"], spec["mode"])
            if mode is not None and mode.backend == "jax":
                # Keras on JAX: its own phases, traced with jax.profiler
                from traceinsight.capture.jax_driver import run_jax_mode
                result, server = run_jax_mode(spec, mode)
            else:
                from traceinsight.capture.phases import run_mode
                result, server = run_mode(spec)
    except WorkloadError as e:
        _print_exc()
        reserve.hand_back(out.with_name(out.name + ".error"), {"error": str(e)})
        status = 3
    except SetupError as e:
        _print_exc()
        reserve.hand_back(out.with_name(out.name + ".error"), {"error": str(e), "setup": True})
        status = 3
    except BaseException as e:
        _print_exc()
        reserve.hand_back(out.with_name(out.name + ".error"), {"error": one_line(e)})
        status = 4
    else:
        reserve.hand_back(out, result)
        status = 0
        if server is not None:  # the parent reads the result, then asks for rounds on stdin
            try:
                sys.stdout.flush()
                server.serve()
            except BaseException:
                _print_exc()
                status = 4
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except OSError:     # the log is on the run folder's disk, which may be full
            pass
    # os._exit: skip interpreter teardown (TF's profiler and thread pools can make a clean
    # exit slow or hang); every file is already written and fsynced.
    os._exit(status)


def _print_exc() -> None:
    """The traceback into the log the parent keeps; a log the disk refuses (full) is not a second
    error: what the process hands back says what happened."""
    try:
        traceback.print_exc()
    except OSError:
        pass


if __name__ == "__main__":
    sys.exit(main())
