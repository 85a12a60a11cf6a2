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
history = model.fit(x, y, batch_size=16, epochs=1, verbose=0)
print(f"trained: loss {history.history['loss'][-1]:.3f}")
sys.exit(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
