"""How much does a Python loop of small TF ops cost? 99 tf.matmul on a 100x100 tensor, one by one.

The loop from TensorFlow's "Better performance with tf.function" guide idea: many tiny ops issued
from a Python loop. Eager pays Python + dispatch per op; ``tf.function`` traces the loop once into a
graph of 99 MatMul nodes; XLA fuses it. Compare with ``samples/costly_loop_vectorized.py`` (the same
arithmetic as one batched op) using ``traceinsight diff``.
"""

import numpy as np
import tensorflow as tf

N, SIZE = 99, 100


def step(x, w):
    outs = []
    for i in range(N):
        outs.append(tf.matmul(x, w[i]))
    return tf.add_n(outs)


def inputs():
    rng = np.random.default_rng(0)
    x = tf.constant(rng.standard_normal((SIZE, SIZE), dtype=np.float32))
    w = tf.constant(rng.standard_normal((N, SIZE, SIZE), dtype=np.float32) / SIZE)
    return x, w
