"""A custom training loop (GradientTape + tf.function), no Keras fit, no model.py."""
import sys

import tensorflow as tf

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 40
crash_at = int(sys.argv[2]) if len(sys.argv) > 2 else -1
w = tf.Variable(tf.random.normal((32, 8), seed=1))
opt_lr = 0.01
x = tf.random.normal((64, 32), seed=2)
y = tf.random.normal((64, 8), seed=3)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((tf.matmul(x, w) - y) ** 2)
    w.assign_sub(opt_lr * tape.gradient(loss, w))
    return loss


for i in range(steps):
    if i == crash_at:
        raise RuntimeError(f"crashed at step {i}")
    loss = train_step(x, y)
print(f"done {steps} steps, loss {float(loss):.3f}")
