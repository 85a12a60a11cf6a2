"""Baseline: the same reduce_sum as sum_numpy.py on an already converted tensor."""

import numpy as np
import tensorflow as tf

MODES = ["eager"]
N = 8 * 1024 * 1024  # float32: 32 MiB


def step(x):
    return tf.reduce_sum(x)


def inputs():
    return (tf.constant(np.random.default_rng(0).standard_normal(N, dtype=np.float32)),)
