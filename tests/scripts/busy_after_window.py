"""A custom loop whose machine gets busy after the traced window: at step ``busy_from`` it starts
one busy-looping process per usable CPU (killed at exit), then keeps stepping for ``seconds``.
Other processes' load is then high while the untraced steps run and low while the traced ones
did: what ``run`` must record and say, so that the difference is not read as the profiler's."""
import atexit
import os
import subprocess
import sys
import time

import tensorflow as tf

busy_from = int(sys.argv[1])
seconds = float(sys.argv[2])
x = tf.random.normal((128, 128), seed=1)


@tf.function
def train_step(x):
    for _ in range(4):
        x = tf.tanh(tf.matmul(x, x) * 0.01)
    return x


hogs: list = []


def _stop() -> None:
    for h in hogs:
        h.kill()
    for h in hogs:
        h.wait(timeout=30)


atexit.register(_stop)
n = min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1, 8)
i, t_busy = 0, None
while t_busy is None or time.perf_counter() - t_busy < seconds:
    if i == busy_from:
        hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
        t_busy = time.perf_counter()
    train_step(x)
    time.sleep(0.03)   # a window of 8 steps lasts long enough for a load figure on one CPU
    i += 1
print(f"done {i} steps")
