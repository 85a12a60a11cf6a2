"""The driver of a function workload's mode (``step()`` + ``inputs()``), TF1's Session included."""

from __future__ import annotations

from typing import Any

from traceinsight.capture import modes as modes_mod
from traceinsight.capture.drivers import CallDriver
from traceinsight.capture.loading import (
    SignatureLog,
    WorkloadError,
    call_user,
    describe_arg,
    input_source,
    one_line,
    signature_of_data,
    tensor_specs,
)
from traceinsight.modekind import CALL, EAGER, XLA


def function_driver(tf, mode: modes_mod.Mode, module, signature: list | None = None):
    """``signature``: the input signature a ``fixed_signature`` mode runs the step with, as data
    (``[{"shape": [...], "dtype": "float32"}, ...]``, from the run's mode entry)."""
    source = SignatureLog(input_source(module))
    step = module.step
    details: dict[str, Any] = {}
    row = mode.row   # its compile axis (and how it retraces) decide how the step is called
    if row.call != CALL:
        raise WorkloadError(f"mode {mode.name} is not implemented")
    if row.tf1_graph:
        driver = session_driver(tf, step, source, details)
    elif row.compile == EAGER:
        driver = CallDriver(tf, step, prepare=source, details=details)
    elif row.compile == XLA:
        driver = CallDriver(tf, tf.function(step, jit_compile=True), prepare=source, details=details)
    elif row.fixed_signature:
        if signature is None:
            raise WorkloadError(f"mode {mode.name} needs an input signature (capture --verify "
                                "gives it the one the retracing finding quotes)")
        driver = SignatureDriver(tf, step, tensor_specs(tf, signature), source, details)
        details["input_signature"] = [{"shape": sh, "dtype": dt}
                                      for sh, dt in signature_of_data(signature)]
    elif row.relaxed_retracing:
        driver = CallDriver(tf, tf.function(step, reduce_retracing=True), prepare=source,
                            details=details)
    else:
        driver = CallDriver(tf, tf.function(step), prepare=source, details=details)
    driver.signatures = source
    return driver


class SignatureDriver(CallDriver):
    """``tf.function(step, input_signature=specs)``, checked to hold: the step traced once. A
    retrace (an input the signature fits but that traced again) or a call whose inputs do not fit
    it (TensorFlow raises) fails the mode in one line: the signature did not hold. Checked before
    each step's inputs are made and after each phase, outside the timed region; ``details["traces"]``
    is the function's trace count."""

    def __init__(self, tf, step, specs: list, source, details: dict):
        self.fn = tf.function(step, input_signature=specs)
        self.source = source
        self.step_num: int | None = None
        self.last_args = ""
        super().__init__(tf, self.fn, prepare=self.inputs, details=details)
        details["traces"] = 0

    def inputs(self, i: int) -> tuple:
        self.check()
        args = self.source(i)
        self.step_num, self.last_args = i, "; ".join(describe_arg(a) for a in args)
        return args

    def check(self) -> None:
        n = int(self.fn.experimental_get_tracing_count())
        self.details["traces"] = n
        if n > 1:
            raise WorkloadError(f"the input_signature did not hold: step() traced {n} times, "
                                f"again at step {self.step_num} (inputs: {self.last_args})")

    def run(self, rec) -> None:
        try:
            super().run(rec)
        except WorkloadError:
            raise
        except Exception as e:   # the inputs do not fit the signature (TF raises), or the step
            raise WorkloadError(f"the input_signature did not hold: step {self.step_num} "
                                f"(inputs: {self.last_args}) raised {one_line(e)}") from e
        self.check()


def session_driver(tf, step, source, details):
    """TF1 style: a graph built once, Session.run per step, feeding only what changes per step."""
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

    # What changes from step to step is fed; the rest is part of the graph, as a TF1 program would
    # write it: Python values stay Python values (a Python int used in range(n) works), unchanging
    # arrays become non-trainable variables, initialized once (not copied into the session every
    # step). Not graph constants: grappler would fold the whole step away at the first run.
    args0 = source(0)
    probe = getattr(raw_source, "source", raw_source)  # not counted as a step by SignatureLog
    args1 = fetch(probe(1))
    fed = [i for i, (a, b) in enumerate(zip(args0, args1)) if not _same(np, a, b)]
    graph = tf.Graph()
    placeholders = []
    with graph.as_default():
        graph_args: list[Any] = []
        init_feed = {}
        for i, a in enumerate(args0):
            if i not in fed:
                if a is None or isinstance(a, (bool, int, float, str)):
                    graph_args.append(a)
                    continue
                arr = np.asarray(a)
                if arr.dtype == np.float64 and not isinstance(a, np.ndarray):
                    arr = arr.astype(np.float32)
                init = v1.placeholder(tf.as_dtype(arr.dtype), shape=arr.shape, name=f"arg{i}_init")
                init_feed[init] = arr
                var = v1.Variable(init, trainable=False, name=f"arg{i}", use_resource=True)
                graph_args.append(var.read_value())
                continue
            arr = np.asarray(a)
            dtype = tf.as_dtype(np.float32 if arr.dtype == np.float64 and not isinstance(a, np.ndarray)
                                else arr.dtype)
            b = np.asarray(args1[i])
            shape = [d if b.ndim == arr.ndim and b.shape[k] == d else None for k, d in enumerate(arr.shape)]
            ph = v1.placeholder(dtype, shape=shape, name=f"arg{i}")
            placeholders.append(ph)
            graph_args.append(ph)
        out = call_user(lambda: step(*graph_args), "step() while building the v1 graph")
        if out is None:
            raise WorkloadError("step() returned None: return the tensors to compute "
                                "(v1-session runs what step returns)")
        init = v1.global_variables_initializer()
    sess = v1.Session(graph=graph)
    sess.run(init, feed_dict=init_feed)
    details["graph_ops"] = len(graph.get_operations())
    details["placeholders"] = sum(1 for op in graph.get_operations()
                                  if op.type == "Placeholder" and not op.name.endswith("_init"))
    details["fed_args"] = fed
    details["constant_args"] = [i for i in range(len(args0)) if i not in fed]
    details["feeds"] = ("arguments that change between steps are placeholders fed per step (feed_dict); "
                        "Python values stay Python values, unchanging arrays are variables set once")

    def prepare(i: int) -> tuple:
        args = source(i)
        return tuple(args[k] for k in fed)

    return CallDriver(tf, lambda *a: sess.run(out, feed_dict=dict(zip(placeholders, a))),
                      prepare=prepare, details=details)


def _same(np, a, b) -> bool:
    """Whether an argument is the same at steps 0 and 1 (then it is not fed)."""
    if a is b:
        return True
    if a is None or isinstance(a, (bool, int, float, str)):
        return type(a) is type(b) and a == b
    try:
        x, y = np.asarray(a), np.asarray(b)
    except Exception:
        return False
    return x.dtype == y.dtype and x.shape == y.shape and bool(np.array_equal(x, y))

