"""Time two Keras call styles of one workload against each other, interleaved, with perf_counter and
no traceinsight: the independent side of a ``train_on_batch`` / ``fit`` ratio the tool reports.

    python tools/time_keras_pair.py samples/tf2_vs_tf1_small.py [--rounds 8] [--calls 40]

Each round times ``--calls`` ``train_on_batch(x, y)`` calls (median per call), then one batch
inside ``fit()``: the difference between a ``fit`` over 2n and over n batches of the same data,
divided by n, so fit()'s own setup per call cancels out (its batch callbacks are not used). The two
models are built alike and compiled alike; round r of one runs right beside round r of the other,
so a burst of load lands on both. Prints per round the two times, their ratio and the share of the
CPUs other processes took (``/proc/stat``), then the ratios' range and their geometric mean.
Only the standard library, numpy and TensorFlow / Keras are used.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import statistics
import sys
import time


def _cpu() -> tuple[int, int, int] | None:
    """(total ticks, busy ticks, this process's ticks), or None off Linux."""
    try:
        with open("/proc/stat", encoding="ascii") as f:
            v = [int(x) for x in f.readline().split()[1:9]]
        with open("/proc/self/stat", encoding="ascii") as f:
            own = f.read().rsplit(")", 1)[1].split()
    except (OSError, ValueError):
        return None
    return sum(v), sum(v) - v[3] - v[4], int(own[11]) + int(own[12])


def _others(t0, t1) -> float | None:
    if t0 is None or t1 is None or t1[0] <= t0[0]:
        return None
    return max(0.0, ((t1[1] - t0[1]) - (t1[2] - t0[2])) / (t1[0] - t0[0]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("workload")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--calls", type=int, default=40, help="train_on_batch calls per round")
    ap.add_argument("--batches", type=int, default=20, help="n: fit over n and 2n batches")
    args = ap.parse_args()
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    spec = importlib.util.spec_from_file_location("workload", args.workload)
    wl = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(wl)
    import numpy as np

    x, y = wl.data()
    models = []
    for _ in range(2):
        m = wl.model()
        m.compile(**wl.compile_kwargs())
        models.append(m)
    tob, fit = models
    n = args.batches
    xs, ys = np.concatenate([x] * (2 * n)), np.concatenate([y] * (2 * n))
    bs = len(x)

    def fit_time(batches: int) -> float:
        t0 = time.perf_counter()
        fit.fit(xs[: batches * bs], ys[: batches * bs], batch_size=bs, epochs=1, shuffle=False,
                verbose=0)
        return time.perf_counter() - t0

    for _ in range(5):          # warm-up: tracing, the first fit()'s setup
        tob.train_on_batch(x, y)
    fit_time(n)
    fit_time(2 * n)
    ratios = []
    print("round  train_on_batch ms  fit batch ms  ratio  others' CPU share")
    for r in range(args.rounds):
        c0 = _cpu()
        times = []
        for _ in range(args.calls):
            t0 = time.perf_counter()
            tob.train_on_batch(x, y)
            times.append(time.perf_counter() - t0)
        a = statistics.median(times) * 1e3
        b = (fit_time(2 * n) - fit_time(n)) / n * 1e3
        share = _others(c0, _cpu())
        ratios.append(a / b)
        print(f"{r:5d}  {a:17.3f}  {b:12.3f}  {a / b:5.2f}  "
              + (f"{share * 100:.0f} %" if share is not None else "?"))
    gm = math.exp(sum(math.log(v) for v in ratios) / len(ratios))
    print(f"train_on_batch / fit: per-round ratios {min(ratios):.2f} to {max(ratios):.2f}, "
          f"geometric mean {gm:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
