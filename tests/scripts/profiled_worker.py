"""A stand-in for one worker of a running job: starts TF's profiler server on the given loopback
port, then steps a small tf.function with step markers until killed. Writes READY_FILE once
stepping (after the profiler server is up)."""
import sys
import time
from pathlib import Path

import tensorflow as tf

port, ready = int(sys.argv[1]), Path(sys.argv[2])
tf.profiler.experimental.server.start(port)
w = tf.Variable(tf.ones((64, 64)))


@tf.function
def step(x):
    return tf.reduce_sum(tf.matmul(x, w))


x = tf.ones((64, 64))
i = 0
while True:
    with tf.profiler.experimental.Trace("train", step_num=i, _r=1):
        step(x).numpy()
    if i == 3:
        ready.write_text("ok")
    i += 1
    time.sleep(0.002)
