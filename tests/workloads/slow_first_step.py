"""Test workload: tracing step() takes at least 1.5 s (an injected sleep, which runs only while
tf.function traces), then XLA compiles it; later steps take microseconds. With a short host trace the
first step outlasts it."""

import time

import numpy as np
import tensorflow as tf

SLEEP_S = 1.5


def step(x):
    if not tf.executing_eagerly():  # graph building: tf.function's tracing
        time.sleep(SLEEP_S)
    return tf.reduce_sum(tf.tanh(x) * 2.0)


def inputs():
    return (np.ones((16, 16), np.float32),)
