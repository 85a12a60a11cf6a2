"""A custom training loop that profiles itself with ``with traceinsight.profile(...)`` when given
a runs directory (argv[1]); without it, the same loop untouched."""
import contextlib
import sys

import tensorflow as tf

tf.config.experimental.enable_op_determinism()
w = tf.Variable(tf.random.normal((32, 8), seed=1))
x = tf.random.normal((64, 32), seed=2)
y = tf.random.normal((64, 8), seed=3)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((tf.matmul(x, w) - y) ** 2)
    w.assign_sub(0.01 * tape.gradient(loss, w))
    return loss


if len(sys.argv) > 1:
    import traceinsight
    block = traceinsight.profile(out=sys.argv[1], name="loop", skip_steps=4, steps=6)
else:
    block = contextlib.nullcontext()
with block:
    for _i in range(30):
        loss = train_step(x, y)
print(type(loss).__name__, f"loss {float(loss):.4f}", w.shape)
