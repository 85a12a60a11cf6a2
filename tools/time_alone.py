"""Time the version matrix's steps alone, with perf_counter and no traceinsight, in one interpreter.

    <env>/bin/python tools/time_alone.py [--tf1]      # JSON: mode -> median ms per step

The independent side of the version matrix (tools/make_tf_envs.py captures the same workloads,
tests/data/versions/fn_small.py and keras_small.py): each step is run as a user would, outputs
fetched to numpy, timed with perf_counter. Keras fit is timed as one fit() over N batches (the
second call, so its setup is done) divided by N, and as Keras' train function alone on a dataset
iterator (the step fit() runs per batch). ``--tf1``: the TF1 mode (eager disabled, Keras 2),
which needs a process of its own. Only the standard library, numpy and TensorFlow are used.
"""

from __future__ import annotations

import importlib.util
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "tests", "data", "versions")
N = 200


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, os.path.join(DATA, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _median_ms(fn, n: int = N, warm: int = 5) -> float:
    for _ in range(warm):
        fn()
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return round(statistics.median(times) * 1e3, 4)


def _fit_ms(model, x, y) -> float:
    import numpy as np
    xs, ys = np.concatenate([x] * N), np.concatenate([y] * N)
    model.fit(xs, ys, batch_size=len(x), epochs=1, verbose=0)       # setup, first traces
    t0 = time.perf_counter()
    model.fit(xs, ys, batch_size=len(x), epochs=1, verbose=0)
    return round((time.perf_counter() - t0) / N * 1e3, 4)


def main() -> None:
    import tensorflow as tf
    out: dict = {"tensorflow": tf.__version__}
    if "--tf1" in sys.argv:
        tf.compat.v1.disable_eager_execution()
        import keras
        if int(keras.__version__.split(".")[0]) >= 3:
            import tf_keras as keras
            sys.modules["keras"] = keras       # the workload's `import keras` gets Keras 2, as in capture
        k = _load("keras_small")
        model = k.model()
        # TF1 needs Keras 2's legacy optimizer; Keras 2.12 - 2.14 pick it themselves for "sgd" with
        # eager disabled (their optimizers.legacy has no SGD attribute until it is imported)
        legacy_sgd = getattr(keras.optimizers.legacy, "SGD", None)
        model.compile(optimizer=legacy_sgd() if legacy_sgd is not None else "sgd", loss="mse")
        x, y = k.data()
        out["tf1:fit (fit over N batches / N)"] = _fit_ms(model, x, y)
        print(json.dumps(out))
        return
    fn = _load("fn_small")
    x, w = fn.inputs()
    out["fn eager"] = _median_ms(lambda: fn.step(x, w).numpy())
    f = tf.function(fn.step)
    out["fn function"] = _median_ms(lambda: f(x, w).numpy())
    fx = tf.function(fn.step, jit_compile=True)
    out["fn xla"] = _median_ms(lambda: fx(x, w).numpy())
    g = tf.Graph()
    with g.as_default():
        px = tf.compat.v1.placeholder(tf.float32, x.shape)
        vw = tf.Variable(w)
        result = fn.step(px, vw)
        init = tf.compat.v1.global_variables_initializer()
    sess = tf.compat.v1.Session(graph=g)
    sess.run(init)
    out["fn v1-session"] = _median_ms(lambda: sess.run(result, {px: x}))
    k = _load("keras_small")
    x, y = k.data()
    model = k.model()
    model.compile(**k.compile_kwargs())
    out["keras fit (fit over N batches / N)"] = _fit_ms(model, x, y)
    # the step fit() runs per batch, alone: Keras' train function on a dataset iterator
    model3 = k.model()
    model3.compile(**k.compile_kwargs())
    it = iter(tf.data.Dataset.from_tensors((x, y)).repeat())
    model3.make_train_function()
    train = model3.train_function

    def one():
        for v in tf.nest.flatten(train(it)):
            if hasattr(v, "numpy"):
                v.numpy()
    out["keras fit (train function alone)"] = _median_ms(one)
    m2 = k.model()
    mx = tf.function(m2, jit_compile=True)
    out["keras xla"] = _median_ms(lambda: mx(x).numpy())
    print(json.dumps(out))


if __name__ == "__main__":
    main()
