"""Independent figures for the attribution runs of tools/make_attribution_traces.py: each
operation timed alone with perf_counter (no profiler), to set beside what the tool attributes.

    .venv/bin/python tools/measure_attribution_truth.py

Prints one line per figure. Timings on a shared machine are noisy: medians of repeated runs.
"""

from __future__ import annotations

import importlib.util
import statistics
import sys
import time
from pathlib import Path

import tensorflow as tf

ROOT = Path(__file__).resolve().parents[1]
W = ROOT / "tests" / "workloads" / "attribution"


def load(name: str):
    spec = importlib.util.spec_from_file_location(name, W / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def median_ms(fn, n: int, warmup: int = 2) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def main() -> int:
    # 13.1: one numpy -> tensor conversion of the 32 MiB array, alone; interleaved rounds so a
    # burst of load on the shared machine lands on all three alike
    sn = load("sum_numpy")
    x_np = sn.inputs()[0]
    x_t = tf.constant(x_np)
    fns = {"convert": lambda: tf.convert_to_tensor(x_np),
           "sum_numpy": lambda: tf.reduce_sum(x_np).numpy(),
           "sum_tensor": lambda: tf.reduce_sum(x_t).numpy()}
    times = {k: [] for k in fns}
    for _ in range(25):
        for k, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - t0)
    med = {k: statistics.median(v[3:]) * 1e3 for k, v in times.items()}
    delta = med["sum_numpy"] - med["sum_tensor"]
    print(f"13.1 convert_to_tensor(32 MiB numpy) alone: {med['convert']:.2f} ms; reduce_sum(numpy) "
          f"{med['sum_numpy']:.2f} ms, reduce_sum(tensor) {med['sum_tensor']:.2f} ms, delta "
          f"{delta:.2f} ms = {delta / med['convert']:.2f} conversions")
    # 13.2: convert_to_tensor of a tensor, alone, and how many per step
    at = load("add_tensors")
    s, x = at.inputs()
    n = 2000
    t0 = time.perf_counter()
    for _ in range(n):
        tf.convert_to_tensor(x)
    per = (time.perf_counter() - t0) / n * 1e6
    print(f"13.2 convert_to_tensor(tensor) alone: {per:.2f} us per call; the step calls tf.add "
          f"{at.CALLS} times = {2 * at.CALLS} conversions of tensors (returned unchanged: "
          f"{tf.convert_to_tensor(x) is x})")
    # 13.3: the pipeline's cost per element alone, the chain alone, and the steps with / without
    for name in ("data_overlap", "data_wait"):
        d = load(name)
        it, w = d.inputs()
        produce = median_ms(lambda: next(it), 15)
        def on_constant(x, w):  # the same step with the batch already there
            y = w
            for _ in range(d.CHAIN):
                y = tf.tanh(tf.matmul(y, w))
            return tf.reduce_sum(y) + tf.reduce_sum(x)

        chain = tf.function(on_constant)
        batch = next(it)
        c_ms = median_ms(lambda: chain(batch, w).numpy(), 15)
        step = tf.function(d.step)
        with_pipe = median_ms(lambda: step(it, w).numpy(), 15)
        print(f"13.3 {name}: one batch alone {produce:.2f} ms; step on a constant batch "
              f"{c_ms:.2f} ms; step with the pipeline {with_pipe:.2f} ms: the pipeline costs the "
              f"step {with_pipe - c_ms:.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
