"""Test workload for v1-session: a Python int used in range(n), a large constant array, and one
argument that changes every step. Only the changing one may be fed."""

import numpy as np
import tensorflow as tf

N = 7


def step(x, w, n):
    acc = tf.zeros_like(x)
    for i in range(n):          # a Python int: must stay a Python int in the graph
        acc = acc + tf.matmul(x, w[i])
    return tf.reduce_sum(acc)


W = np.random.default_rng(0).standard_normal((N, 256, 256), dtype=np.float32)  # 1.8 MB, unchanging


def inputs(i):
    x = np.full((4, 256), float(i), dtype=np.float32)  # changes every step
    return x, W, N
