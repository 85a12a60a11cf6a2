"""A Keras script that profiles its own fit with traceinsight.keras.Profile when given a runs
directory (argv[1]); without it, the same script untouched. Prints what a script would use."""
import sys

import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
tf.config.experimental.enable_op_determinism()
rng = np.random.default_rng(0)
x = rng.normal(size=(30 * 16, 32)).astype("float32")
y = (x.sum(axis=1) > 0).astype("float32")
model = keras.Sequential([keras.Input((32,)), keras.layers.Dense(64, activation="relu"),
                          keras.layers.Dense(1, activation="sigmoid")])
model.compile(optimizer="adam", loss="binary_crossentropy")
callbacks = []
if len(sys.argv) > 1:
    import traceinsight.keras
    callbacks.append(traceinsight.keras.Profile(out=sys.argv[1], name="cb", skip_steps=4, steps=6))
history = model.fit(x, y, batch_size=16, epochs=2, verbose=0, callbacks=callbacks)
print(type(history).__module__, type(history).__name__, sorted(history.history),
      f"loss {history.history['loss'][-1]:.3f}")
weights = model.get_weights()
print(type(weights).__name__, [(type(w).__name__, w.shape) for w in weights])
