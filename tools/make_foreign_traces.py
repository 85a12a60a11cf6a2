"""Capture the small foreign traces committed under tests/data/foreign/ (traces traceinsight did
not capture itself: a Keras TensorBoard callback logdir, ``tf.profiler.experimental.start/stop``
with and without step markers, and markers that repeat one ``step_num``).

    .venv/bin/python tools/make_foreign_traces.py            # all of them
    .venv/bin/python tools/make_foreign_traces.py keras_tb    # one

Each is a tiny Dense model on CPU with a few steps, so the files stay small (tens of KB). Figures in
them are whatever this machine measured: tests must not pin them, only what the trace's structure
decides (how many steps, which rule found them).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# TRACEINSIGHT_FOREIGN_OUT: somewhere else (the capture test writes into a temporary folder)
OUT = Path(os.environ.get("TRACEINSIGHT_FOREIGN_OUT") or ROOT / "tests" / "data" / "foreign")


def _model():
    import keras
    import numpy as np
    model = keras.Sequential([keras.Input((16,)), keras.layers.Dense(32, activation="relu"),
                              keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    rng = np.random.default_rng(0)
    return model, rng.normal(size=(64, 16)).astype("float32"), rng.normal(size=(64, 1)).astype("float32")


def keras_tb(target: Path) -> None:
    """Keras TensorBoard callback, profile_batch=(2, 5): batches 2..5 are traced, each inside a
    ``Profiled batch`` event with its step_num."""
    import keras
    model, x, y = _model()

    class NoSummaries:
        # tf.summary needs the tensorboard package; only the callback's profile is wanted here:
        # every summary call (writers, scalars, their contexts) does nothing
        def __getattr__(self, name):
            return lambda *a, **k: NoSummaries()

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    class TraceOnly(keras.callbacks.TensorBoard):
        @property
        def summary(self):
            return NoSummaries()

    import json
    import time

    class BatchClock(keras.callbacks.Callback):
        # an independent figure: each batch timed with perf_counter between Keras' batch hooks
        # (registered after the TensorBoard callback, so its begin/end sit inside the marker)
        times: dict[int, float] = {}

        def on_train_batch_begin(self, batch, logs=None):
            self.t0 = time.perf_counter()

        def on_train_batch_end(self, batch, logs=None):
            self.times[batch] = (time.perf_counter() - self.t0) * 1e3

    cb = TraceOnly(log_dir=str(target), profile_batch=(2, 5), write_graph=False)
    clock = BatchClock()
    model.fit(x, y, batch_size=8, epochs=1, callbacks=[cb, clock], verbose=0)
    print("keras_tb: perf_counter ms per batch (0-based batch index): "
          + json.dumps({k: round(v, 3) for k, v in clock.times.items()}))


def _profiled(target: Path, body) -> None:
    import tensorflow as tf
    tf.profiler.experimental.start(str(target))
    try:
        body(tf)
    finally:
        tf.profiler.experimental.stop()


def start_stop_markers(target: Path) -> None:
    """tf.profiler.experimental.start/stop around 6 steps, each marked with Trace("train", step_num=i)."""
    model, x, _ = _model()
    import tensorflow as tf
    f = tf.function(model)
    f(x)

    def body(tf):
        for i in range(6):
            with tf.profiler.experimental.Trace("train", step_num=i, _r=1):
                f(x)
    _profiled(target, body)


def start_stop_plain(target: Path) -> None:
    """tf.profiler.experimental.start/stop around 6 tf.function calls, no step markers."""
    model, x, _ = _model()
    import tensorflow as tf
    f = tf.function(model)
    f(x)
    _profiled(target, lambda tf: [f(x) for _ in range(6)])


def duplicate_step_num(target: Path) -> None:
    """10 markers that all carry step_num 7 (a loop that reuses one number)."""
    model, x, _ = _model()
    import tensorflow as tf
    f = tf.function(model)
    f(x)

    def body(tf):
        for _ in range(10):
            with tf.profiler.experimental.Trace("train", step_num=7, _r=1):
                f(x)
    _profiled(target, body)


# input stalls in 3 of the 30 steps: the batch whose first element sleeps this long (ms) in map()
STALLS_MS = {7: 4.0, 15: 2.5, 23: 1.0}


def tfdata_stalls(target: Path) -> None:
    """A stock custom training loop on a tf.data pipeline (from_tensor_slices -> map -> batch ->
    prefetch), 30 steps marked Trace("train", step_num=i), where map() sleeps for one element of
    3 batches (STALLS_MS; a tf.cond calls Python only for those): input stalls in a few steps,
    a cost the median step does not show."""
    import time

    import numpy as np
    import tensorflow as tf

    rng = np.random.default_rng(0)
    x = rng.normal(size=(30 * 8, 16)).astype("float32")
    y = rng.normal(size=(30 * 8, 1)).astype("float32")
    w = tf.Variable(rng.normal(size=(16, 1)).astype("float32"))
    stall = np.zeros(len(x), dtype=np.float32)
    for batch, ms in STALLS_MS.items():
        stall[batch * 8] = ms
    armed = [False]   # the warm-up pass below does not sleep

    def sleep(ms):
        if armed[0]:
            time.sleep(float(ms) / 1e3)
        return ms

    def parse(ms, xi, yi):
        done = tf.cond(ms > 0, lambda: tf.py_function(sleep, [ms], tf.float32), lambda: ms)
        return xi + done * 0.0, yi

    ds = (tf.data.Dataset.from_tensor_slices((stall, x, y)).map(parse)
          .batch(8).prefetch(1))

    @tf.function
    def step(xb, yb):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((xb @ w - yb) ** 2)
        w.assign_sub(0.01 * tape.gradient(loss, w))
        return loss

    step(x[:8], y[:8])   # traced before the profile: every marked step is a steady one
    for _ in ds:         # one pass first: the pipeline's functions and kernels warm
        pass
    armed[0] = True

    def body(tf):
        it = iter(ds)
        for i in range(30):
            with tf.profiler.experimental.Trace("train", step_num=i, _r=1):
                xb, yb = next(it)
                step(xb, yb)
    _profiled(target, body)


TRACES = {"tfdata_stalls": tfdata_stalls, "keras_tb": keras_tb, "start_stop_markers": start_stop_markers,
          "start_stop_plain": start_stop_plain, "duplicate_step_num": duplicate_step_num}


def main(argv: list[str]) -> int:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    names = argv or list(TRACES)
    for n in names:
        target = OUT / n
        if target.exists():
            shutil.rmtree(target)
        TRACES[n](target)
        for p in target.rglob("*"):
            if p.is_file() and not p.name.endswith(".xplane.pb"):
                p.unlink()  # keep only the traces (no event files, no XProf caches)
        size = sum(p.stat().st_size for p in target.rglob("*.xplane.pb"))
        print(f"{n}: {size / 1e3:.0f} KB")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
