"""tf.reduce_sum of a 32 MB numpy array. With no axis, reduce_sum converts the array
twice per call: once for rank(x) in Python (convert_to_tensor) and once inside the C fast path
(TFE_Py_FastPathExecute_C copies it before its EagerLocalExecute: _EagerConst child)."""

import numpy as np
import tensorflow as tf

MODES = ["eager"]
N = 8 * 1024 * 1024  # float32: 32 MiB


def step(x):
    return tf.reduce_sum(x)


def inputs():
    return (np.random.default_rng(0).standard_normal(N, dtype=np.float32),)
