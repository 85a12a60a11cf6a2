"""Record small stock traces with TensorFlow's own profiler APIs (not with traceinsight), in the
interpreter this script runs under, for the per-version analysis tests (tests/test_versions.py).

    /path/to/env/bin/python tools/make_version_traces.py                 # every case
    /path/to/env/bin/python tools/make_version_traces.py function xla    # some of them
    ... --out DIR                                                         # elsewhere

Writes ``tests/data/versions/<tf version>/<case>/`` (TensorBoard layout:
``plugins/profile/<run>/<host>.xplane.pb``) plus ``steps.json``: the step times the script measured
itself with ``time.perf_counter`` inside each step (the independent measure the tests compare the
trace's step markers with), the TF / Keras versions and the profiler options asked for.

Cases (each in a fresh process, so the first call of every function is inside the trace):

* ``function``: a tf.function train step (manual SGD, no Keras), each step marked
  ``tf.profiler.experimental.Trace("train", step_num=i, _r=1)``;
* ``xla``: the same step with ``jit_compile=True``;
* ``fit``: Keras ``Model.fit`` with the TensorBoard callback (``profile_batch``): the callback starts
  and stops the profiler and marks the batches itself;
* ``fit_one``: ``fit`` of a small Conv2D model (its graph's ops, not the call, take the step), the
  callback profiling one batch (``profile_batch=(4, 4)``): on Keras 2 the trace holds that batch's
  ``train_function`` call and no step marker (the batch's ``train`` marker opened before the
  profiler started), as a user's one-batch profile does;
* ``session``: a ``tf.compat.v1.Session.run`` loop with eager execution disabled;
* ``data``: a tf.function step fed by a tf.data pipeline whose map stalls (a ``py_function``
  that sleeps), no prefetch;
* ``eager_python``: an eager step (plain Python, no tf.function) with the python tracer on
  (``python_tracer_level=1``, which 2.21 drops like the other options: record it with 2.12 - 2.16),
  so each step holds exactly one frame of ``eager_step``.

The profiler is started with ``ProfilerOptions(host_tracer_level=3, python_tracer_level=0)``: TF
2.15 and 2.16 honour the options; 2.21 drops them (it logs ``python_tracer_level expects an i
value``) and records at its defaults (host tracer level 2, no python tracer), which also keeps the
trace small. No traceinsight code runs in the workload process; nothing is installed. Keras 3's
TensorBoard callback needs the ``tensorboard`` package, which tensorflow-cpu 2.21 does not install:
for the ``fit`` case there, put one on PYTHONPATH without touching the environment
(``pip install --target DIR --no-deps tensorboard``; ``PYTHONPATH=DIR``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CASES = ("function", "xla", "fit", "fit_one", "session", "data", "eager_python")
STEPS = 8
DEPTH = 0   # hidden layers of the function / xla step (--depth)


def _options(tf, python: int = 0):
    return tf.profiler.experimental.ProfilerOptions(host_tracer_level=3, python_tracer_level=python,
                                                    device_tracer_level=0)


def _variables(tf, depth: int = 0):
    tf.random.set_seed(0)
    w1 = tf.Variable(tf.random.normal([64, 128], stddev=0.1))
    w2 = tf.Variable(tf.random.normal([128, 10], stddev=0.1))
    hidden = [tf.Variable(tf.random.normal([128, 128], stddev=0.1)) for _ in range(depth)]
    x = tf.random.normal([256, 64])
    y = tf.random.normal([256, 10])
    return w1, w2, x, y, hidden


def _step_fn(tf, w1, w2, jit: bool, hidden=()):
    """The train step; ``hidden`` adds 128x128 layers (a longer XLA compile, for
    tools/measure_xla_compile.py's comparisons; the committed traces have none)."""
    weights = [w1, w2, *hidden]

    @tf.function(jit_compile=jit)
    def train_step(x, y):
        with tf.GradientTape() as tape:
            h = tf.nn.relu(tf.matmul(x, w1))
            for w in hidden:
                h = tf.nn.relu(tf.matmul(h, w))
            loss = tf.reduce_mean(tf.square(tf.matmul(h, w2) - y))
        grads = tape.gradient(loss, weights)
        for w, g in zip(weights, grads):
            w.assign_sub(0.01 * g)
        return loss
    return train_step


def _marked_loop(tf, logdir: str, step, args_of, n: int = STEPS, python: int = 0) -> list[dict]:
    """Run ``step`` n times inside the profiler, each step marked; perf_counter inside the marker."""
    steps = []
    tf.profiler.experimental.start(logdir, options=_options(tf, python))
    try:
        for i in range(n):
            with tf.profiler.experimental.Trace("train", step_num=i, _r=1):
                t0 = time.perf_counter()
                out = step(*args_of(i))
                _ = out.numpy() if hasattr(out, "numpy") else out
                steps.append({"step_num": i, "ms": (time.perf_counter() - t0) * 1e3})
    finally:
        tf.profiler.experimental.stop()
    return steps


def case_function(tf, logdir: str, jit: bool = False) -> dict:
    w1, w2, x, y, hidden = _variables(tf, DEPTH)
    step = _step_fn(tf, w1, w2, jit, hidden)
    return {"steps": _marked_loop(tf, logdir, step, lambda i: (x, y)), "depth": DEPTH}


def case_xla(tf, logdir: str) -> dict:
    return case_function(tf, logdir, jit=True)


def case_fit(tf, logdir: str, profile_batch: tuple[int, int] = (2, 6), conv: bool = False) -> dict:
    keras = tf.keras
    tf.random.set_seed(0)
    if conv:
        model = keras.Sequential([keras.Input(shape=(32, 32, 3)),
                                  keras.layers.Conv2D(32, 3, activation="relu"),
                                  keras.layers.Conv2D(32, 3, activation="relu"),
                                  keras.layers.Flatten(), keras.layers.Dense(10)])
        x = tf.random.normal([32 * 10, 32, 32, 3]).numpy()
    else:
        model = keras.Sequential([keras.Input(shape=(64,)), keras.layers.Dense(128, activation="relu"),
                                  keras.layers.Dense(10)])
        x = tf.random.normal([32 * 10, 64]).numpy()
    model.compile(optimizer="sgd", loss="mse")
    y = tf.random.normal([32 * 10, 10]).numpy()
    batches: list[dict] = []

    class Clock(keras.callbacks.Callback):
        def on_train_batch_begin(self, batch, logs=None):
            self.t0 = time.perf_counter()

        def on_train_batch_end(self, batch, logs=None):
            batches.append({"step_num": int(batch), "ms": (time.perf_counter() - self.t0) * 1e3})

    # the profile window: batches 2..6 (Keras 2 records only the inner ones)
    tb = keras.callbacks.TensorBoard(log_dir=logdir, profile_batch=profile_batch, histogram_freq=0,
                                     write_graph=False)
    model.fit(x, y, batch_size=32, epochs=1, verbose=0, callbacks=[Clock(), tb])
    return {"steps": batches, "profile_batch": list(profile_batch)}


def case_fit_one(tf, logdir: str) -> dict:
    return case_fit(tf, logdir, (4, 4), conv=True)


def case_session(tf, logdir: str) -> dict:
    tf.compat.v1.disable_eager_execution()
    v1 = tf.compat.v1
    x = v1.placeholder(tf.float32, [256, 64])
    w = v1.get_variable("w", [64, 128], initializer=v1.random_normal_initializer(stddev=0.1))
    w2 = v1.get_variable("w2", [128, 10], initializer=v1.random_normal_initializer(stddev=0.1))
    loss = tf.reduce_mean(tf.square(tf.matmul(tf.nn.relu(tf.matmul(x, w)), w2)))
    train = v1.train.GradientDescentOptimizer(0.01).minimize(loss)
    import numpy as np
    feed = np.random.default_rng(0).normal(size=(256, 64)).astype(np.float32)
    with v1.Session() as sess:
        sess.run(v1.global_variables_initializer())
        return {"steps": _marked_loop(tf, logdir, lambda: sess.run([train, loss], {x: feed}),
                                      lambda i: ())}


def case_data(tf, logdir: str) -> dict:
    def slow(v):
        time.sleep(0.02)   # the stall: the pipeline's map is slower than the step
        return v

    ds = (tf.data.Dataset.range(1000)
          .map(lambda i: tf.py_function(slow, [i], tf.int64))
          .map(lambda i: tf.fill([256, 64], tf.cast(i, tf.float32) * 1e-3))
          .batch(1))
    # no prefetch: without these, tf.data injects one and the first step's tracing fills it
    opts = tf.data.Options()
    opts.autotune.enabled = False
    opts.experimental_optimization.inject_prefetch = False
    it = iter(ds.with_options(opts))
    w1, w2, _, y, _ = _variables(tf)

    @tf.function
    def step(iterator):
        xb = tf.reshape(next(iterator), [256, 64])
        return tf.reduce_sum(tf.matmul(tf.nn.relu(tf.matmul(xb, w1)), w2) - y)

    return {"steps": _marked_loop(tf, logdir, step, lambda i: (it,))}


def case_eager_python(tf, logdir: str) -> dict:
    """An eager step (no tf.function) with the python tracer on: each call of ``eager_step`` is
    one frame event, and each step one marker, so the frames per step are known exactly."""
    w1, w2, x, _, _ = _variables(tf)

    def eager_step(x):
        return tf.reduce_sum(tf.matmul(tf.nn.relu(tf.matmul(x, w1)), w2))

    return {"steps": _marked_loop(tf, logdir, eager_step, lambda i: (x,), python=1),
            "python_tracer_level": 1}


def _child(case: str, logdir: str, record: str) -> None:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf
    out = globals()[f"case_{case}"](tf, logdir)
    out.update({"case": case, "tensorflow": tf.__version__,
                "keras": getattr(tf.keras, "__version__", None) or _keras_version(),
                "options_asked": {"host_tracer_level": 3, "python_tracer_level": 0,
                                  "device_tracer_level": 0},
                "made_by": "tools/make_version_traces.py (TensorFlow's own profiler APIs)"})
    if case in ("fit", "fit_one"):
        out["options_asked"] = "TensorBoard callback defaults"
    if case == "eager_python":
        out["options_asked"]["python_tracer_level"] = 1
    Path(record).write_text(json.dumps(out, indent=1) + "\n")


def _keras_version() -> str | None:
    try:
        import keras
        return keras.__version__
    except ImportError:
        return None


def _version(python: str) -> str:
    code = "import tensorflow as tf; print(tf.__version__)"
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    return subprocess.run([python, "-c", code], capture_output=True, text=True, check=True,
                          env=env).stdout.strip().splitlines()[-1]


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("cases", nargs="*", default=list(CASES))
    p.add_argument("--out", type=Path, default=ROOT / "tests" / "data" / "versions")
    p.add_argument("--depth", type=int, default=0,
                   help="hidden 128x128 layers in the function / xla step (default 0, as committed)")
    p.add_argument("--child", nargs=3, metavar=("CASE", "LOGDIR", "RECORD"), help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    global DEPTH
    DEPTH = a.depth
    if a.child:
        _child(*a.child)
        return 0
    bad = [c for c in a.cases if c not in CASES]
    if bad:
        print(f"unknown case(s) {', '.join(bad)}; cases: {', '.join(CASES)}", file=sys.stderr)
        return 2
    version = _version(sys.executable)
    for case in a.cases:
        dest = a.out / version / case
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        r = subprocess.run([sys.executable, __file__, "--child", case, str(dest),
                            str(dest / "steps.json"), "--depth", str(a.depth)])
        if r.returncode:
            print(f"{version} {case}: failed (exit {r.returncode})", file=sys.stderr)
            return 1
        # keep only the XSpace (the TensorBoard callback also writes event files)
        for f in sorted(dest.rglob("*")):
            if f.is_file() and not (f.name.endswith(".xplane.pb") or f.name == "steps.json"):
                f.unlink()
        for d in sorted((d for d in dest.rglob("*") if d.is_dir()), reverse=True):
            if not any(d.iterdir()):
                d.rmdir()
        sizes = ", ".join(f"{f.relative_to(dest)} {f.stat().st_size // 1024} KB"
                          for f in sorted(dest.rglob("*.xplane.pb")))
        print(f"{version} {case}: {sizes or 'NO TRACE'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
