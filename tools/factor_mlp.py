"""A small Keras MLP for the factor table's check (tools/factor_timing.py): TF2 against TF1 for
predict, predict_on_batch, train_on_batch and fit, with the Keras 2 (tf_keras) modes between them
so that each factor has a pair of modes that differs in it alone. Needs tf_keras."""

import keras
import numpy as np

BATCH, FEATURES, HIDDEN = 64, 32, 64

CALLS = ["predict", "predict_on_batch", "train_on_batch", "fit"]
MODES = ["tf1:predict", "tf1:predict_on_batch", "tf1:train_on_batch", "tf1:fit",
         "tf_keras:predict", "tf_keras:predict_on_batch", "tf_keras:train_on_batch", "tf_keras:fit",
         "predict", "predict_on_batch", "train_on_batch", "fit",
         "tf_keras:train_on_batch+tensor", "train_on_batch+tensor"]


def model():
    inputs = keras.Input((FEATURES,))
    h = keras.layers.Dense(HIDDEN, activation="relu")(inputs)
    h = keras.layers.Dense(HIDDEN, activation="relu")(h)
    outputs = keras.layers.Dense(1)(h)
    return keras.Model(inputs, outputs)


def data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, FEATURES)).astype("float32")
    y = rng.standard_normal((BATCH, 1)).astype("float32")
    return x, y


def compile_kwargs():
    return {"optimizer": keras.optimizers.SGD(0.01), "loss": "mse"}
