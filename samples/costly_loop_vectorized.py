"""The vectorized twin of costly_loop.py: the same 99 matmuls of a 100x100 tensor as one batched op.

``tf.einsum('ij,njk->ik')`` does the work of the 99-iteration Python loop (sum of x @ w[i]) in one
kernel: no per-op Python and dispatch cost, so eager and tf.function come close. Compare the two
runs with ``traceinsight diff``.
"""

import numpy as np
import tensorflow as tf

N, SIZE = 99, 100


def step(x, w):
    return tf.einsum("ij,njk->ik", x, w)


def inputs():
    rng = np.random.default_rng(0)
    x = tf.constant(rng.standard_normal((SIZE, SIZE), dtype=np.float32))
    w = tf.constant(rng.standard_normal((N, SIZE, SIZE), dtype=np.float32) / SIZE)
    return x, w
