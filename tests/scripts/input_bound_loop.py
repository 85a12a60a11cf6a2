"""A custom loop that waits on its input: a tf.data map whose function (a py_function) sleeps
``argv[2]`` seconds per element, batched by 4, then a small tf.function train step. The loop times
each of its own iterations with perf_counter, from just before one ``train_step`` call to just
before the next (what ``next(iterator)`` waits is between them), and writes them as JSON to
argv[3]: iteration i is the time from call i to call i + 1."""
import json
import sys
import time

import numpy as np
import tensorflow as tf

n = int(sys.argv[1])
sleep_s = float(sys.argv[2])
x = np.random.default_rng(0).random((4 * n, 16), dtype=np.float32)


def slow(v):
    time.sleep(sleep_s)
    return v


ds = tf.data.Dataset.from_tensor_slices(x).map(
    lambda v: tf.py_function(slow, [v], tf.float32)).batch(4)
w = tf.Variable(tf.ones((16, 16)))


@tf.function
def train_step(xb):
    w.assign_sub(1e-4 * tf.matmul(tf.transpose(xb), tf.matmul(xb, w)))
    return w


starts = []
for xb in ds:
    starts.append(time.perf_counter())
    train_step(xb)
with open(sys.argv[3], "w") as f:
    json.dump(np.diff(starts).tolist(), f)
print("done", len(starts))
