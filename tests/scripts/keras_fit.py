"""A plain Keras training script (no model.py): what `traceinsight run` profiles from outside."""
import sys

import keras
import numpy as np

rng = np.random.default_rng(0)
x = rng.normal(size=(40 * 16, 32)).astype("float32")
y = (x.sum(axis=1) > 0).astype("float32")
model = keras.Sequential([keras.Input((32,)), keras.layers.Dense(64, activation="relu"),
                          keras.layers.Dense(1, activation="sigmoid")])
model.compile(optimizer="adam", loss="binary_crossentropy")
epochs = int(sys.argv[2]) if len(sys.argv) > 2 else 1
history = model.fit(x, y, batch_size=16, epochs=epochs, verbose=0)
print(f"trained: loss {history.history['loss'][-1]:.3f}")
# lines in the form of TensorFlow's own log (absl, and TF 2.15's), not about the profiler: the
# stderr filter of `traceinsight run` must let them through (which lines TensorFlow itself prints
# at import depends on the CPU, so the test does not wait for one of those)
print("I0000 00:00:1795608729.634534   25171 cpu_feature_guard.cc:227] keras_fit: a TF log line",
      file=sys.stderr)
print("2026-11-25 12:04:45.117710: I tensorflow/core/util/port.cc:153] keras_fit: an older one",
      file=sys.stderr)
sys.exit(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
