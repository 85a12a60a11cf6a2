"""A TF1 training loop (``tf.compat.v1`` graph, ``Session.run`` of the train op with a feed), with
a known cost in the loop body between the runs: ``tf1_session_loop.py N SLEEP_S OWN.json`` runs
the initializer and N training runs, sleeping SLEEP_S after each, and writes the loop's own
perf_counter times of its iterations to OWN.json (iteration i: from the start of run call i to
the start of call i + 1, the initializer's call being 0), what ``traceinsight run`` should say
its steps are."""

import json
import sys
import time

import numpy as np
import tensorflow as tf

n, sleep_s, own_file = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
tf.compat.v1.disable_eager_execution()
x = tf.compat.v1.placeholder(tf.float32, [None, 32])
w = tf.Variable(tf.random.normal([32, 32]))
loss = tf.reduce_sum(tf.tanh(tf.matmul(x, w)))
train = tf.compat.v1.train.GradientDescentOptimizer(0.01).minimize(loss)
data = np.random.rand(64, 32).astype("float32")
starts = []
with tf.compat.v1.Session() as s:
    starts.append(time.perf_counter())
    s.run(tf.compat.v1.global_variables_initializer())
    for _ in range(n):
        starts.append(time.perf_counter())
        s.run(train, feed_dict={x: data})
        time.sleep(sleep_s)
with open(own_file, "w") as f:
    json.dump(np.diff(starts).tolist(), f)
