"""The same Keras call timed alone with perf_counter on each backend, beside a run's step medians.

    .venv/bin/python tools/backend_timing.py samples/tf2_vs_tf1_small.py [--run RUN] [--steps 200]

For each call (``predict_on_batch(x)``, ``train_on_batch(x, y)``) and backend (TensorFlow, JAX) a
fresh process (``KERAS_BACKEND`` set before Keras is imported) builds the workload's model from the
same file and data, compiles it for training as capture does (``jit_compile=False`` on TensorFlow,
Keras' default, compiled steps, on JAX), makes 20 untimed calls, then times ``--steps`` calls one by
one with ``time.perf_counter`` (outputs waited for: numpy on TensorFlow, ``block_until_ready`` on
JAX), with no profiler and none of traceinsight's capture code. The four processes stay alive and
time their calls in interleaved rounds (A B C D A B C D ...), so load on the machine hits them alike. With ``--run``, the run's untraced
medians of the matching modes (``predict_on_batch`` / ``jax:predict_on_batch``, ``train_on_batch``
/ ``jax:train_on_batch``) are printed beside them.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_CHILD = r"""
import importlib.util, json, os, statistics, sys, time
import numpy as np
spec = importlib.util.spec_from_file_location("workload", sys.argv[1])
w = importlib.util.module_from_spec(spec); spec.loader.exec_module(w)
import keras
backend = keras.backend.backend()
call, steps = sys.argv[2], int(sys.argv[3])
model = w.model()
x, y = w.data()
if call == "train_on_batch":
    ck = dict(w.compile_kwargs()) if hasattr(w, "compile_kwargs") else {"optimizer": "adam", "loss": "mse"}
    ck["run_eagerly"] = False
    if backend == "tensorflow":
        ck["jit_compile"] = False
    model.compile(**ck)
    f = lambda: model.train_on_batch(x, y)
else:
    f = lambda: model.predict_on_batch(x)
if backend == "jax":
    import jax
    wait = jax.block_until_ready
else:
    wait = lambda out: [np.asarray(o) for o in (out if isinstance(out, (list, tuple)) else [out])]
for _ in range(20):
    wait(f())
print("ready", flush=True)
for line in sys.stdin:          # one round of timed calls per line read
    if line.strip() != "go":
        break
    ts = []
    for _ in range(steps):
        t0 = time.perf_counter()
        wait(f())
        ts.append(time.perf_counter() - t0)
    print(json.dumps(ts), flush=True)
"""


def start(workload: Path, backend: str, call: str, steps: int) -> subprocess.Popen:
    env = dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="2")
    p = subprocess.Popen([sys.executable, "-c", _CHILD, str(workload), call, str(steps)], env=env,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         text=True)
    assert p.stdout is not None
    while p.stdout.readline().strip() != "ready":
        if p.poll() is not None:
            raise SystemExit(f"{backend} {call}: the timing process failed")
    return p


def one_round(p: subprocess.Popen) -> list[float]:
    assert p.stdin is not None and p.stdout is not None
    p.stdin.write("go\n")
    p.stdin.flush()
    return json.loads(p.stdout.readline())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("workload", type=Path)
    ap.add_argument("--run", type=Path, help="a run folder holding the matching modes")
    ap.add_argument("--steps", type=int, default=200, help="timed calls per job, in all rounds")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    run = None
    if args.run:
        sys.path.insert(0, str(ROOT))
        import traceinsight
        run = traceinsight.load(args.run)
    import statistics
    jobs = [(call, backend, prefix) for call in ("predict_on_batch", "train_on_batch")
            for backend, prefix in (("tensorflow", ""), ("jax", "jax:"))]
    procs = [start(args.workload, b, c, args.steps // args.rounds) for c, b, _ in jobs]
    times: list[list[float]] = [[] for _ in jobs]
    try:
        for _ in range(args.rounds):      # interleaved: load on the machine hits every job alike
            for i, p in enumerate(procs):
                times[i] += one_round(p)
    finally:
        for p in procs:
            p.kill()
    print("| call | backend | perf_counter alone, ms (median) | run's mode | run's untraced median, ms |")
    print("|---|---|---:|---|---:|")
    for (call, backend, prefix), ts in zip(jobs, times):
        mode = prefix + call
        med = run.modes[mode].median_ms if run is not None and mode in run.modes else float("nan")
        print(f"| {call} | {backend} | {statistics.median(ts) * 1e3:.3f} (n={len(ts)}) | {mode} | "
              f"{med:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
