"""What does a Python loop of 1000 small tf.matmul cost next to one tf.einsum doing the same work?

``step`` multiplies each of 1000 matrices (8x16) by the same 16x16 matrix, one ``tf.matmul`` per
iteration from Python, then stacks the results. ``samples/matmul_einsum.py`` does it as one
``tf.einsum('ijk,kl->ijl')``. Eager pays Python + op dispatch 1000 times per step; ``tf.function``
removes the Python but still runs 1000 tiny kernels; XLA may fuse them. Compare the two runs with
``traceinsight diff``.
"""

import numpy as np
import tensorflow as tf

N = 1000


def step(x, w):
    return tf.stack([tf.matmul(x[i], w) for i in range(N)])


def inputs():
    rng = np.random.default_rng(0)
    x = tf.constant(rng.standard_normal((N, 8, 16), dtype=np.float32))
    w = tf.constant(rng.standard_normal((16, 16), dtype=np.float32))
    return x, w
