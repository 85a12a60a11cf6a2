"""the pipeline costs more than the step's independent compute: the
part of the IteratorGetNext wait after the compute is done is input. Compare with data_none.py."""

import numpy as np
import tensorflow as tf

MODES = ["function"]
SIZE, MAP_MATMULS, CHAIN = 256, 16, 4


def _make_batch(i):
    x = tf.random.stateless_normal((SIZE, SIZE), seed=tf.stack([i, i]))
    for _ in range(MAP_MATMULS):
        x = tf.tanh(tf.matmul(x, x) / SIZE)
    return x


def _pipeline():
    ds = tf.data.Dataset.range(1 << 40).map(_make_batch)
    # a sequential pipeline that makes each batch when asked (TF 2.21 would otherwise parallelize
    # the map and prefetch), so IteratorGetNext runs beside the step's compute
    opts = tf.data.Options()
    opts.experimental_optimization.map_parallelization = False
    opts.experimental_optimization.inject_prefetch = False
    opts.autotune.enabled = False
    return ds.with_options(opts)


def step(it, w):
    x = next(it)
    y = w
    for _ in range(CHAIN):
        y = tf.tanh(tf.matmul(y, w))
    return tf.reduce_sum(y) + tf.reduce_sum(x)


def inputs():
    w = tf.constant(np.random.default_rng(0).standard_normal((SIZE, SIZE), dtype=np.float32) / 16)
    return iter(_pipeline()), w
