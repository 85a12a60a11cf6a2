"""The driver of a function workload's mode (``step()`` + ``inputs()``), TF1's Session included."""

from __future__ import annotations

from typing import Any

from traceinsight.capture import modes as modes_mod
from traceinsight.capture.drivers import CallDriver
from traceinsight.capture.loading import SignatureLog, WorkloadError, _call, input_source

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

