"""A custom loop whose tf.function step retraces: its batch size varies and it gets a new Python
float every call. ``retracing_loop.py N``: N calls, as ``traceinsight run`` profiles them.
``retracing_loop.py N SIGNATURE.json``: the same N calls of the same step compiled with that
input signature (``[{"shape": [null, 8], "dtype": "float32"}, ...]``, built from data); prints
``traces K`` (the fix applied: a signature that holds traces once)."""

import json
import sys

import tensorflow as tf

w = tf.Variable(tf.ones([8, 8]))


def body(x, lr):
    w.assign_sub(lr * tf.matmul(tf.transpose(x), x))
    return tf.reduce_sum(w)


n = int(sys.argv[1])
if len(sys.argv) > 2:
    with open(sys.argv[2]) as f:
        specs = [tf.TensorSpec(s["shape"], getattr(tf, s["dtype"])) for s in json.load(f)]
    step = tf.function(body, input_signature=specs)
else:
    step = tf.function(body)
for i in range(n):
    step(tf.random.normal([4 + i % 5, 8]), 0.01 / (1 + i))
if len(sys.argv) > 2:
    print(f"traces {step.experimental_get_tracing_count()}")
