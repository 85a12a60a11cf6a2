"""Is this Keras model faster on the JAX backend than on TensorFlow, and why?

The same model file and batch under Keras 3's two backends: TensorFlow's eager / tf.function / XLA
forward pass and its ``predict_on_batch``, ``train_on_batch`` (graph and XLA) and ``fit``, beside
``jax:predict_on_batch``, ``jax:train_on_batch`` and ``jax:fit``, each in its own process with
``KERAS_BACKEND=jax`` (Keras on JAX always compiles its steps with XLA). The overview puts them on
one page; the finding ``jax-backend-faster`` / ``-slower`` says by which op family and how much
first-step compile. A Conv1D + Dense classifier, batch 32 x 140 x 30, Adam 1e-4, binary
crossentropy. The JAX modes need ``pip install "traceinsight-tf[jax]"``; without JAX they are
skipped, and said so.
"""

import keras
import numpy as np

BATCH, STEPS, CHANNELS = 32, 140, 30

MODES = ["eager", "function", "xla", "predict_on_batch", "jax:predict_on_batch",
         "train_on_batch", "train_on_batch-xla", "jax:train_on_batch", "fit", "jax:fit"]


def model():
    inputs = keras.Input((STEPS, CHANNELS))
    h = keras.layers.Conv1D(32, 3, padding="same", activation="relu")(inputs)
    h = keras.layers.Conv1D(32, 3, padding="same", activation="relu")(h)
    h = keras.layers.GlobalAveragePooling1D()(h)
    h = keras.layers.Dense(32, activation="relu")(h)
    outputs = keras.layers.Dense(1, activation="sigmoid")(h)
    return keras.Model(inputs, outputs)


def data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, STEPS, CHANNELS)).astype("float32")
    y = rng.integers(0, 2, (BATCH, 1)).astype("float32")
    return x, y


def compile_kwargs():
    return {"optimizer": keras.optimizers.Adam(1e-4), "loss": "binary_crossentropy"}
