"""A plain eager loop (no tf.function) that marks its steps by hand in ``traceinsight.profile``
(argv[1]: the runs directory, argv[2]: ``with`` or ``bare``, argv[3]: where to write the loop's
own perf_counter step times as JSON). Step i repeats its work 1 + i % 3 times, so the steps'
durations have an order the analysis must find again."""
import json
import sys
import time

import tensorflow as tf

import traceinsight

out, form, times_path = sys.argv[1], sys.argv[2], sys.argv[3]
w = tf.random.normal((128, 128), seed=1)
x = tf.random.normal((64, 128), seed=2)


def work(i):
    h = x
    for _ in range(1 + i % 3):
        for _ in range(20):
            h = tf.tanh(tf.matmul(h, w))
    return h


own = []
with traceinsight.profile(out=out, name=f"eager_{form}", skip_steps=3, steps=6) as p:
    for i in range(15):
        if form == "with":
            with p.step():
                t0 = time.perf_counter()
                work(i).numpy()
                own.append(time.perf_counter() - t0)
        else:
            p.step()
            t0 = time.perf_counter()
            work(i).numpy()
            own.append(time.perf_counter() - t0)
with open(times_path, "w") as f:
    json.dump(own, f)
print("done", len(own))
