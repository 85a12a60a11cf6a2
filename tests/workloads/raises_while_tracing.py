"""Test workload: step() raises MemoryError while tf.function traces it (eager runs fine)."""

import numpy as np
import tensorflow as tf


def step(x):
    if not tf.executing_eagerly():
        raise MemoryError("Unable to allocate 8.00 GiB for an array with shape (1073741824,) "
                          "and data type float64")
    return tf.reduce_sum(x)


def inputs():
    return (np.ones((8,), np.float32),)
