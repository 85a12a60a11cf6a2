"""A custom loop whose TensorFlow cannot start a profiler session (it was replaced by a function
that raises): traceinsight run must say why nothing was traced, and the script runs on."""
import sys

import tensorflow as tf


def _refuse(*args, **kwargs):
    raise RuntimeError("no profiler here")


tf.profiler.experimental.start = _refuse

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 6


@tf.function
def step(x):
    return tf.reduce_sum(x * 2.0)


for _ in range(steps):
    step(tf.ones((4,)))
print(f"done {steps} steps")
