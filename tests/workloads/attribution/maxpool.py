"""graph ops whose kernels split their work with ParallelFor (MaxPool, Conv2D): the
nested ParallelFor is the op's own execution and part of its self time (as in XProf's
framework_op_stats)."""

import numpy as np
import tensorflow as tf

MODES = ["function", "xla"]


def step(x, k):
    y = tf.nn.relu(tf.nn.conv2d(x, k, strides=1, padding="SAME"))
    y = tf.nn.max_pool2d(y, ksize=3, strides=2, padding="SAME")
    return tf.reduce_mean(y)


def inputs():
    rng = np.random.default_rng(0)
    x = tf.constant(rng.standard_normal((8, 64, 64, 16), dtype=np.float32))
    k = tf.constant(rng.standard_normal((3, 3, 16, 16), dtype=np.float32) / 12)
    return x, k
