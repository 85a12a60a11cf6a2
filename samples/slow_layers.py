"""Which layer of my model is slow, in which mode? A small Keras model with a deliberately slow
custom layer (``Sliced``: a Python loop over the channels in ``call``, one slice op per channel)
and a depthwise-heavy block (eight ``DepthwiseConv2D`` layers ``block*_dwconv``, each followed by a
1x1 ``Conv2D``), captured eager / tf.function / XLA. The layers table of each mode places the time
by layer (eager: the python-tracer pass's layer ``call`` frames; graph and XLA: the layer scopes of
the op names and the HLO metadata); the finding ``layer-explains`` names the layer that explains
most of a difference between two modes.

    traceinsight capture samples/slow_layers.py --modes eager,function,xla
    python tools/time_layers_alone.py samples/slow_layers.py runs/<run>   # each layer alone
"""

import keras
import numpy as np

BATCH, SIDE, CHANNELS, BLOCKS = 8, 32, 16, 8

MODES = ["eager", "function", "xla"]
# Keras 3 has keras.ops; Keras 2 (TensorFlow 2.15 and older, tf_keras) its backend module
_concatenate = keras.ops.concatenate if hasattr(keras, "ops") else keras.backend.concatenate


class Sliced(keras.layers.Layer):
    """Scales each channel by its own weight, one channel at a time: a Python loop of slice,
    multiply and concatenate ops that a vectorised ``x * w`` would do in one op."""

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1],), initializer="ones", name="w")

    def call(self, x):
        parts = []
        for c in range(x.shape[-1]):
            parts.append(x[..., c:c + 1] * self.w[c])
        return _concatenate(parts, axis=-1)


def model():
    inputs = keras.Input((SIDE, SIDE, CHANNELS))
    h = keras.layers.Conv2D(CHANNELS, 3, padding="same", name="stem")(inputs)
    h = Sliced(name="sliced")(h)
    for i in range(1, BLOCKS + 1):
        h = keras.layers.DepthwiseConv2D(5, padding="same", name=f"block{i}_dwconv")(h)
        h = keras.layers.Conv2D(CHANNELS, 1, activation="relu", name=f"block{i}_project")(h)
    h = keras.layers.GlobalAveragePooling2D(name="pool")(h)
    outputs = keras.layers.Dense(10, name="head")(h)
    return keras.Model(inputs, outputs, name="slow_layers")


def data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, SIDE, SIDE, CHANNELS)).astype("float32")
    y = rng.integers(0, 10, (BATCH,)).astype("int32")
    return x, y
