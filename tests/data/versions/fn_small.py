"""A small function workload for the version matrix (tools/make_tf_envs.py): a 64x64 matmul, relu
and sum, a few ops per step on any TensorFlow 2.15+."""

import numpy as np
import tensorflow as tf


def step(x, w):
    return tf.reduce_sum(tf.nn.relu(tf.matmul(x, w)))


def inputs():
    rng = np.random.default_rng(0)
    return (rng.standard_normal((64, 64)).astype("float32"), rng.standard_normal((64, 64)).astype("float32"))
