"""Check a run's factor table against the same Keras calls timed alone with perf_counter.

    python tools/factor_timing.py RUN [WORKLOAD] [--rounds 4] [--steps 30]

WORKLOAD (default: tools/factor_mlp.py, the workload RUN captured) is run in one process per
flavour and call, as the capture runs one mode per process: flavours TF1 (tf_keras, eager
disabled: a Session runs the graph), Keras 2 on TF2 (tf_keras) and Keras 3; calls ``predict``,
``predict_on_batch``, ``train_on_batch`` (numpy, and tensors made once: TF2 only) and one batch
inside ``fit`` (from batch callbacks), each timed with perf_counter and no traceinsight, outputs
fetched. The processes take their rounds in turn (A B C A B C ...), so load on the machine lands
on each alike. Then, for every single-factor pair
of RUN's factor table, it prints the table's ratio with its interval beside the ratio of the
medians timed here and the per-round ratios, and the machine's load average.

Needs tf_keras beside TensorFlow 2.16+ (``pip install --no-deps "tf-keras==<TF's minor>.*"``).
The parent imports no TensorFlow; only the workers do.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MARK = "@@factor-timing@@ "
FLAVOURS = ("tf1", "tf_keras", "keras3")
PREFIX = {"tf1": "tf1:", "tf_keras": "tf_keras:", "keras3": ""}
CALLS = ("predict", "predict_on_batch", "train_on_batch", "train_on_batch+tensor", "fit")


# --- the worker: one flavour's calls, timed alone ----------------------------------------------

def _worker(flavour: str, only: str, workload: str) -> None:
    if flavour != "keras3":
        os.environ["TF_USE_LEGACY_KERAS"] = "1"
    import numpy as np
    import tensorflow as tf
    if flavour != "keras3":
        import tf_keras
        sys.modules["keras"] = tf_keras
    if flavour == "tf1":
        tf.compat.v1.disable_eager_execution()
        legacy = sys.modules["keras"].optimizers.legacy   # Keras 2's v1 optimizers work without eager
        for name in dir(legacy):
            if name[:1].isupper() and name != "Optimizer":
                setattr(sys.modules["keras"].optimizers, name, getattr(legacy, name))
    spec = importlib.util.spec_from_file_location("workload", workload)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    keras = sys.modules["keras"]
    x, y = module.data()
    n = len(x)
    # one call per process, as the capture has one mode per process: nothing else of Keras or
    # TensorFlow runs beside it

    def compiled():
        m = module.model()
        ck = dict(module.compile_kwargs())
        if flavour != "tf1":
            ck.update(run_eagerly=False, jit_compile=False)
        m.compile(**ck)
        return m

    if only in ("predict", "predict_on_batch"):
        infer = infer_batch = module.model()
    else:
        train = train_t = fitted = compiled()
    reps = 64
    xs, ys = np.concatenate([x] * reps), np.concatenate([y] * reps)

    def fetch(out):
        for v in tf.nest.flatten(out):
            if hasattr(v, "numpy"):
                v.numpy()

    calls = {}
    if only == "predict":
        calls["predict"] = lambda: infer.predict(x, batch_size=n, verbose=0)
    elif only == "predict_on_batch":
        calls["predict_on_batch"] = lambda: fetch(infer_batch.predict_on_batch(x))
    elif only == "train_on_batch":
        calls["train_on_batch"] = lambda: fetch(train.train_on_batch(x, y))
    elif only == "train_on_batch+tensor":
        xt, yt = tf.convert_to_tensor(x), tf.convert_to_tensor(y)
        calls["train_on_batch+tensor"] = lambda: fetch(train_t.train_on_batch(xt, yt))

    def timed(fn, steps: int) -> list[float]:
        out = []
        for _ in range(steps):
            t0 = time.perf_counter()
            fn()
            out.append(time.perf_counter() - t0)
        return out

    def fit_steps(steps: int) -> list[float]:
        times: list[float] = []
        t0 = [0.0]

        class Cb(keras.callbacks.Callback):  # type: ignore[name-defined]
            def on_train_batch_begin(self, batch, logs=None):
                t0[0] = time.perf_counter()

            def on_train_batch_end(self, batch, logs=None):
                for v in (logs or {}).values():
                    if hasattr(v, "numpy"):
                        v.numpy()
                times.append(time.perf_counter() - t0[0])
                if len(times) >= steps:
                    self.model.stop_training = True

        while len(times) < steps:
            fitted.fit(xs, ys, batch_size=n, epochs=1, verbose=0, shuffle=False, callbacks=[Cb()])
        return times[1:steps]      # the first batch of a fit() call holds its setup

    for fn in calls.values():      # first calls: tracing, graph building
        timed(fn, 3)
    if only == "fit":
        fit_steps(3)
    print(MARK + json.dumps({"ready": flavour}), flush=True)
    for line in sys.stdin:
        cmd = json.loads(line)
        if cmd.get("exit"):
            return
        steps = int(cmd["steps"])
        out = {c: timed(fn, steps) for c, fn in calls.items()}
        if only == "fit":
            out["fit"] = fit_steps(steps + 1)
        print(MARK + json.dumps(out), flush=True)


# --- the parent ----------------------------------------------------------------------------------

def _read(proc: subprocess.Popen) -> dict:
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith(MARK):
            return json.loads(line[len(MARK):])
    raise RuntimeError(f"worker {proc.args!r} ended without an answer (rc {proc.wait()})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", nargs="?", help="the run folder whose factor table to check")
    ap.add_argument("workload", nargs="?", default=str(ROOT / "tools" / "factor_mlp.py"))
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        flavour, only = a.worker.split("/")
        _worker(flavour, only, a.workload)
        return
    load_start = os.getloadavg()
    jobs = [(f, c) for f in FLAVOURS for c in CALLS if not (f == "tf1" and c.endswith("+tensor"))]
    procs = {j: subprocess.Popen([sys.executable, __file__, "--worker", "/".join(j), "x",
                                  a.workload], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 text=True, stderr=subprocess.DEVNULL) for j in jobs}
    for p in procs.values():
        _read(p)
    rounds: dict[str, list[list[float]]] = {}
    for _ in range(a.rounds):
        for f, p in procs.items():
            assert p.stdin is not None
            p.stdin.write(json.dumps({"steps": a.steps}) + "\n")
            p.stdin.flush()
            for call, times in _read(p).items():
                rounds.setdefault(PREFIX[f[0]] + call, []).append([t * 1e3 for t in times])
    for p in procs.values():
        assert p.stdin is not None
        p.stdin.write(json.dumps({"exit": True}) + "\n")
        p.stdin.flush()
        p.wait()
    load_end = os.getloadavg()

    def med(mode: str) -> float:
        return statistics.median(t for r in rounds[mode] for t in r)

    print(f"load average (1, 5, 15 min): start {load_start}, end {load_end}; "
          f"{a.rounds} interleaved rounds of {a.steps} steps per call")
    print("alone (perf_counter, median ms/step): "
          + ", ".join(f"{m} {med(m):.3f}" for m in sorted(rounds)))
    if not a.run:
        return
    import traceinsight
    run = traceinsight.load(a.run)
    table = run.factors
    if table is None:
        print("the run has no factor table")
        return
    print(f"\n{'factor':<14}{'pair':<58}{'run (95 % CI)':<24}{'alone':>8}  per round")
    for s in table.effects:
        c = s.comparison
        pair = f"{s.from_mode} -> {s.to_mode}"
        if s.from_mode not in rounds or s.to_mode not in rounds:
            print(f"{s.factor:<14}{pair:<58}{c.ratio:.2f} [{c.ratio_lo:.2f}, {c.ratio_hi:.2f}]"
                  "   (not timed alone)")
            continue
        alone = med(s.to_mode) / med(s.from_mode)
        per_round = [statistics.median(b) / statistics.median(f)
                     for f, b in zip(rounds[s.from_mode], rounds[s.to_mode])]
        print(f"{s.factor:<14}{pair:<58}{c.ratio:.2f} [{c.ratio_lo:.2f}, {c.ratio_hi:.2f}]"
              f"{'':<6}{alone:>8.2f}  " + " ".join(f"{r:.2f}" for r in per_round))
    for g in table.gaps:
        steps = " x ".join(f"{s.comparison.ratio:.2f} ({s.factor})" for s in g.steps) or \
            f"not split; add {', '.join(g.missing)}"
        gap_alone = (f"{med(g.to_mode) / med(g.from_mode):.2f}"
                     if g.to_mode in rounds and g.from_mode in rounds else "-")
        print(f"gap {g.from_mode} -> {g.to_mode}: run {g.comparison.ratio:.2f} = {steps}; "
              f"alone {gap_alone}")


if __name__ == "__main__":
    main()
