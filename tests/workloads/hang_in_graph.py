"""Test workload: fine eager, hangs while being traced by tf.function (a stuck step)."""

import time

import numpy as np
import tensorflow as tf


def step(x):
    if not tf.executing_eagerly():
        time.sleep(3600)
    return tf.reduce_sum(x * x)


def inputs():
    return (np.ones((8, 8), np.float32),)
