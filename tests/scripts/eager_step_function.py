"""A plain eager loop for ``traceinsight run --step-function``: its step is ``train_step`` of this
script (argv[1] = "main") or ``stepwork.train_step`` of a module (argv[1] = "module");
argv[2]: where to write the loop's own perf_counter time of each call as JSON."""
import json
import sys
import time

import tensorflow as tf
from stepwork import train_step as module_step

w = tf.random.normal((128, 128), seed=1)
x = tf.random.normal((64, 128), seed=2)


def train_step(i):
    h = x
    for _ in range(20 * (1 + i % 3)):
        h = tf.tanh(tf.matmul(h, w))
    return h.numpy()


own = []
for i in range(12):
    t0 = time.perf_counter()
    if sys.argv[1] == "main":
        train_step(i)     # looked up in the script's globals at each call, where run wraps it
    else:
        module_step(x, w, i)
    own.append(time.perf_counter() - t0)
with open(sys.argv[2], "w") as f:
    json.dump(own, f)
print("done", len(own))
