"""An eager custom training loop (no tf.function): Dense layers and Adam on numpy inputs, its step
the plain Python function ``train_step`` (``traceinsight run --step-function train_step``).
argv[1]: the number of steps (40); argv[2] "no-math-add": ``tf.math.add`` raises (the loop does not
call it; traceinsight's calibration of the profiler does)."""
import sys

import numpy as np
import tensorflow as tf

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 40
if sys.argv[2:] == ["no-math-add"]:
    def _no_add(*args, **kwargs):
        raise RuntimeError("tf.math.add is not for this script")
    tf.math.add = _no_add
rng = np.random.default_rng(0)
x = rng.standard_normal((128, 256)).astype("float32")
y = rng.standard_normal((128, 10)).astype("float32")
model = tf.keras.Sequential([tf.keras.Input((256,)), tf.keras.layers.Dense(256, activation="relu"),
                             tf.keras.layers.Dense(256, activation="relu"),
                             tf.keras.layers.Dense(10)])
opt = tf.keras.optimizers.Adam(1e-3)


def train_step(xb, yb):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(xb, training=True) - yb))
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
    return float(loss)


for _ in range(steps):
    loss = train_step(x, y)
print(f"done {steps} steps, loss {loss:.3f}")
