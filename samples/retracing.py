"""Why is my tf.function slower than eager? Retracing: fed Python floats and changing shapes.

``step(x, scale)`` multiplies a vector by a Python float and reduces it. ``inputs(i)`` feeds every
step a new Python float (``0.01 * i``) and one of five vector lengths, so ``tf.function(step)``
retraces on nearly every call: every distinct Python value and every new shape is a new trace (see
the ``tracing`` category and the retrace table). Eager does not trace at all. The fix: pass tensors
(``tf.constant(scale)``), and give a ``input_signature`` or ``reduce_retracing=True`` for shapes.
"""

import numpy as np
import tensorflow as tf

MODES = ["eager", "function"]

LENGTHS = (100, 200, 300, 400, 500)


def step(x, scale):
    y = tf.nn.relu(x * scale)
    return tf.reduce_sum(y * y) + tf.reduce_max(y)


def inputs(i):
    n = LENGTHS[i % len(LENGTHS)]
    x = np.linspace(-1.0, 1.0, n, dtype=np.float32)
    return x, 0.01 * i          # a Python float: a new value is a new trace under tf.function
