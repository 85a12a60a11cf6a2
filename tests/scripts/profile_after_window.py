"""A loop that profiles itself (``traceinsight.profile``, runs directory argv[1]) and goes on
stepping after the traced window until its trace is on disk, then a few steps more: the steps
after which the profiler's untraced calibration blocks are taken again."""
import sys
import time
from pathlib import Path

import tensorflow as tf

import traceinsight


@tf.function
def step(x):
    return tf.reduce_sum(x * x)


x = tf.ones((16, 16))
out = Path(sys.argv[1])
with traceinsight.profile(out=out, name="after", skip_steps=2, steps=3):
    for _ in range(5):
        step(x)
    deadline = time.monotonic() + 120
    while not list((out / "after").glob("*/host/**/*.xplane.pb")) and time.monotonic() < deadline:
        step(x)
        time.sleep(0.02)
    for _ in range(5):
        time.sleep(0.05)
        step(x)
print("done")
