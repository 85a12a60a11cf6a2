"""Keras 2's ``fit`` in a TF1 graph (eager execution disabled: the model is Keras 2's
``training_v1.Model``), as a TF1-era script runs it: ``keras_tf1_fit.py EPOCHS OWN.json`` writes
the batches' own perf_counter times (a callback's batch begin to end) to OWN.json."""

import json
import sys
import time

import numpy as np
import tensorflow as tf

epochs, own_file = int(sys.argv[1]), sys.argv[2]
tf.compat.v1.disable_eager_execution()
x = np.random.rand(1024, 32).astype("float32")
y = np.random.rand(1024, 1).astype("float32")
m = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu", input_shape=(32,)),
                         tf.keras.layers.Dense(1)])
m.compile("adam", "mse")
times: list[float] = []


class Own(tf.keras.callbacks.Callback):
    def on_train_batch_begin(self, batch, logs=None):
        self.t = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        times.append(time.perf_counter() - self.t)


m.fit(x, y, batch_size=32, epochs=epochs, verbose=0, callbacks=[Own()])
with open(own_file, "w") as f:
    json.dump(times, f)
