"""Where does the time of a small LSTM go: per-timestep ops in eager vs one graph or XLA program?

A one-layer LSTM (64 units) over 50 timesteps of 16 features, batch 32, then a Dense. On CPU the
LSTM runs as a loop of small matmuls per timestep (no cuDNN kernel): in eager each timestep's ops are
dispatched from Python, ``tf.function`` turns the loop into a graph ``While``, and XLA can fuse the
cell. Training modes add the backward loop.
"""

import keras
import numpy as np

BATCH, TIMESTEPS, FEATURES = 32, 50, 16

MODES = ["eager", "function", "xla", "train_on_batch-eager", "train_on_batch", "train_on_batch-xla"]


def model():
    inputs = keras.Input((TIMESTEPS, FEATURES))
    h = keras.layers.LSTM(64)(inputs)
    outputs = keras.layers.Dense(1)(h)
    return keras.Model(inputs, outputs)


def data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, TIMESTEPS, FEATURES)).astype("float32")
    y = rng.standard_normal((BATCH, 1)).astype("float32")
    return x, y
