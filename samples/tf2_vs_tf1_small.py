"""Why is TF2 slower than TF1 on this small Conv1D model? train_on_batch vs fit, eager vs graph, numpy vs tf.data.

The small model of the "TF2 is slower than TF1" reports: batch 32 x 140 x 30, Conv1D + Dense layers,
Adam (learning rate 1e-4), binary crossentropy. Each mode runs the same batch; compare:

* ``train_on_batch-eager`` vs ``train_on_batch``: what eager execution costs per step;
* ``train_on_batch`` vs ``fit``: per-call overhead of ``train_on_batch`` vs a batch inside ``fit()``;
* ``fit`` vs ``fit-dataset``: numpy input vs a ``tf.data`` pipeline with prefetch;
* ``eager`` / ``function`` / ``xla``: the forward pass alone;
* ``tf1:train_on_batch`` / ``tf1:fit`` / ``tf1:predict_on_batch``: the TF1 baseline itself, the same
  model under Keras 2 (``tf_keras``) in a TF1 graph (eager disabled, run by a Session; Adam is Keras
  2's v1 ``optimizers.legacy.Adam``). Skipped, and said so, when ``tf_keras`` is not installed.
"""

import keras
import numpy as np

BATCH, STEPS, CHANNELS = 32, 140, 30

MODES = ["eager", "function", "xla", "predict", "predict_on_batch", "train_on_batch-eager",
         "train_on_batch", "fit", "fit-dataset",
         "tf1:predict_on_batch", "tf1:train_on_batch", "tf1:fit"]


def build(steps: int) -> keras.Model:
    """The model of the reports, for a sequence length (shared with tf2_vs_tf1_medium.py)."""
    inputs = keras.Input((steps, CHANNELS))
    h = keras.layers.Conv1D(32, 3, padding="same", activation="relu")(inputs)
    h = keras.layers.Conv1D(32, 3, padding="same", activation="relu")(h)
    h = keras.layers.GlobalAveragePooling1D()(h)
    h = keras.layers.Dense(32, activation="relu")(h)
    outputs = keras.layers.Dense(1, activation="sigmoid")(h)
    return keras.Model(inputs, outputs)


def batch(steps: int):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, steps, CHANNELS)).astype("float32")
    y = rng.integers(0, 2, (BATCH, 1)).astype("float32")
    return x, y


def model():
    return build(STEPS)


def data():
    return batch(STEPS)


def compile_kwargs():
    return {"optimizer": keras.optimizers.Adam(1e-4), "loss": "binary_crossentropy"}
