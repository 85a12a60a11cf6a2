"""A custom loop whose TensorFlow cannot start a profiler server (it was replaced by a function
that raises): traceinsight run must say why it could not mark the steps."""
import sys

import tensorflow as tf


def _refuse(port):
    raise RuntimeError("no profiler server here")


tf.profiler.experimental.server.start = _refuse

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 6


@tf.function
def step(x):
    return tf.reduce_sum(x * 2.0)


for _ in range(steps):
    step(tf.ones((4,)))
print(f"done {steps} steps")
