"""Test workload: works eager and as tf.function, fails under XLA, and kills its process in v1-session.

``tf.py_function`` cannot be compiled by XLA, so ``xla`` raises at the first call; in ``v1-session``
(eager disabled) the step kills its own process with SIGKILL, like a segfaulting extension would.
"""

import os
import signal

import numpy as np
import tensorflow as tf


def step(x):
    if not tf.compat.v1.executing_eagerly_outside_functions():
        os.kill(os.getpid(), signal.SIGKILL)
    y = tf.py_function(lambda t: t * 2.0, [x], tf.float32)
    return tf.reduce_sum(y)


def inputs():
    return (np.ones((8, 8), np.float32),)
