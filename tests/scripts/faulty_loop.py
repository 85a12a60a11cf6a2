"""A training loop that times its own steps and can die or raise at a chosen step, profiled by a
chosen route: ``python faulty_loop.py ROUTE OUT FAULT [STEPS] [SLEEP_S]``.

ROUTE: ``profile`` (``with traceinsight.profile``, a custom loop), ``callback``
(``traceinsight.keras.Profile`` in ``fit``), ``plain`` (the custom loop alone: ``traceinsight run``
traces it from outside). FAULT, at step FAULT_AT (inside the traced window: skip 5, steps 5) or
after the window: ``none``, ``exit_in`` / ``exit_after`` (``os._exit(7)``), ``segv_in``
(SIGSEGV), ``raise_in`` / ``raise_after`` (RuntimeError out of the loop or out of ``fit``),
``interrupt_in`` (KeyboardInterrupt). RUNS (argv 6, default OUT): where the run folder goes.

Writes OUT/user.json: the script's own ``perf_counter`` time of every step call (``user_s``) and,
for the custom loop, of every iteration from one step call's start to the next's (``iter_s``: what
``run`` and ``profile()`` take as a loop's step), and the process's listening TCP sockets that are
not on loopback, seen inside the traced window."""
import importlib.util
import json
import os
import signal
import sys
import time

import tensorflow as tf

route, out, fault = sys.argv[1], sys.argv[2], sys.argv[3]
n_steps = int(sys.argv[4]) if len(sys.argv) > 4 else 16
sleep_s = float(sys.argv[5]) if len(sys.argv) > 5 else 0.0
runs = sys.argv[6] if len(sys.argv) > 6 else out     # where the run folder goes
SKIP, WINDOW = 5, 5
fault_at = SKIP + 2 if fault.endswith("_in") else SKIP + WINDOW + 3

spec = importlib.util.spec_from_file_location(
    "listeners", os.path.join(os.path.dirname(os.path.abspath(__file__)), "listeners.py"))
listeners = importlib.util.module_from_spec(spec)
spec.loader.exec_module(listeners)
state = {"user_s": [], "not_loopback": [], "checked": False}
starts = []


def dump():
    state["iter_s"] = [b - a for a, b in zip(starts, starts[1:])]
    with open(os.path.join(out, "user.json"), "w") as f:
        json.dump(state, f)


def at_step(i):
    if i == SKIP + 1:
        state["not_loopback"] = listeners.not_loopback()
        state["checked"] = True
    if i == fault_at:
        dump()
        if fault.startswith("exit"):
            os._exit(7)
        if fault.startswith("segv"):
            os.kill(os.getpid(), signal.SIGSEGV)
        if fault.startswith("raise"):
            raise RuntimeError(f"the script's own error at step {i}")
        if fault.startswith("interrupt"):
            raise KeyboardInterrupt


w = tf.Variable(tf.random.normal((32, 8), seed=1))
x = tf.random.normal((64, 32), seed=2)
y = tf.random.normal((64, 8), seed=3)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((tf.matmul(x, w) - y) ** 2)
    w.assign_sub(0.01 * tape.gradient(loss, w))
    return loss


def loop():
    for i in range(n_steps):
        at_step(i)
        t0 = time.perf_counter()
        starts.append(t0)
        train_step(x, y)
        state["user_s"].append(time.perf_counter() - t0)
        time.sleep(sleep_s)


if route == "callback":
    import keras
    import numpy as np

    import traceinsight.keras
    model = keras.Sequential([keras.Input((32,)), keras.layers.Dense(8)])
    model.compile(optimizer="sgd", loss="mse")

    class TimerStart(keras.callbacks.Callback):     # first: its time includes the Profile's
        def on_train_batch_begin(self, batch, logs=None):
            at_step(batch)
            time.sleep(sleep_s)
            state["t0"] = time.perf_counter()

    class TimerEnd(keras.callbacks.Callback):       # last
        def on_train_batch_end(self, batch, logs=None):
            state["user_s"].append(time.perf_counter() - state.pop("t0"))

    data = np.random.default_rng(0).normal(size=(16 * n_steps, 32)).astype("float32")
    model.fit(data, data[:, :8], batch_size=16, epochs=1, verbose=0, callbacks=[
        TimerStart(), traceinsight.keras.Profile(out=runs, name="run", skip_steps=SKIP,
                                                 steps=WINDOW), TimerEnd()])
elif route == "profile":
    import traceinsight
    with traceinsight.profile(out=runs, name="run", skip_steps=SKIP, steps=WINDOW):
        loop()
else:
    loop()
dump()
print("done")
