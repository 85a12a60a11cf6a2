"""The one-op twin of matmul_loop.py: the 1000 small matmuls as a single tf.einsum('ijk,kl->ijl').

Same inputs and result as ``samples/matmul_loop.py``; one kernel per step, so eager and
``tf.function`` should be close and both far faster than the loop.
"""

import numpy as np
import tensorflow as tf

N = 1000


def step(x, w):
    return tf.einsum("ijk,kl->ijl", x, w)


def inputs():
    rng = np.random.default_rng(0)
    x = tf.constant(rng.standard_normal((N, 8, 16), dtype=np.float32))
    w = tf.constant(rng.standard_normal((16, 16), dtype=np.float32))
    return x, w
