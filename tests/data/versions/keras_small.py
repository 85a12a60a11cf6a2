"""A small Dense model for the version matrix (tools/make_tf_envs.py): Keras 2 (TF 2.15, tf_keras)
and Keras 3 alike; batch 32 x 64, SGD, mean squared error."""

import keras
import numpy as np


def model():
    inputs = keras.Input((64,))
    h = keras.layers.Dense(64, activation="relu")(inputs)
    outputs = keras.layers.Dense(1)(h)
    return keras.Model(inputs, outputs)


def data():
    rng = np.random.default_rng(0)
    return rng.standard_normal((32, 64)).astype("float32"), rng.standard_normal((32, 1)).astype("float32")


def compile_kwargs():
    return {"optimizer": "sgd", "loss": "mse"}
