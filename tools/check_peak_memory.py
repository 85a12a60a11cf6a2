"""The capture's peak resident memory per mode (``capture/memory.py``: the untraced timing phase's
own peak, ``VmHWM`` after a reset) against ``resource.getrusage`` in the same process, and against
an injected allocation of known size.

    python tools/check_peak_memory.py samples/slow_layers.py [RUN] [--steps 20] [--inject-mib 256]

Per mode (eager, tf.function, XLA of the workload's ``model()`` on its ``data()``), in a fresh
process each: build, three warm-up steps, then the phase as the capture times it (``PeakRss()``,
the steps, ``.finish()``), with ``getrusage(RUSAGE_SELF).ru_maxrss`` read before the phase (the
process's lifetime peak so far) and after it; then the same phase again with ``--inject-mib`` MiB
allocated and touched inside it, whose peak must be that much higher. With RUN, the capture's
recorded peak of the same mode is printed beside (another process, the same work).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import importlib.util, json, resource, sys
import numpy as np
import tensorflow as tf
from traceinsight.capture.memory import PeakRss
spec = importlib.util.spec_from_file_location("workload", sys.argv[1])
mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
mode, steps, inject = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
model = mod.model(); x = tf.convert_to_tensor(mod.data()[0])
call = {"eager": model, "function": tf.function(model),
        "xla": tf.function(model, jit_compile=True)}[mode]
for _ in range(3):
    call(x).numpy()
def maxrss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
out = {"ru_maxrss_before": maxrss()}
p = PeakRss()
for _ in range(steps):
    call(x).numpy()
out["phase"] = p.finish()
out["ru_maxrss_after"] = maxrss()
p = PeakRss()
for i in range(steps):
    if i == steps // 2:
        block = np.ones(inject << 18, dtype=np.float32)   # inject MiB, every page touched
    call(x).numpy()
out["injected"] = p.finish()
del block
print(json.dumps(out))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("workload")
    ap.add_argument("run", nargs="?")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--inject-mib", type=int, default=256)
    args = ap.parse_args()
    mib = lambda b: b / 2**20   # noqa: E731
    recorded = {}
    if args.run:
        for mode in ("eager", "function", "xla"):
            t = Path(args.run) / mode / "timings.json"
            if t.is_file():
                recorded[mode] = (json.loads(t.read_text()).get("memory") or {}).get("peak_rss_bytes")
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    print(f"{'mode':<9} {'phase peak':>11} {'ru_maxrss before':>17} {'after':>9} "
          f"{'+' + str(args.inject_mib) + ' MiB peak':>15} {'rise':>7} {'capture':>9}  (MiB)")
    for mode in ("eager", "function", "xla"):
        done = subprocess.run([sys.executable, "-c", CHILD, args.workload, mode, str(args.steps),
                               str(args.inject_mib)], capture_output=True, text=True, env=env,
                              timeout=600)
        if done.returncode != 0:
            print(f"{mode}: failed: {done.stderr.strip().splitlines()[-1:]}")
            continue
        r = json.loads(done.stdout.strip().splitlines()[-1])
        peak, inj = r["phase"]["peak_rss_bytes"], r["injected"]["peak_rss_bytes"]
        cap = recorded.get(mode)
        print(f"{mode:<9} {mib(peak):>11.1f} {mib(r['ru_maxrss_before']):>17.1f} "
              f"{mib(r['ru_maxrss_after']):>9.1f} {mib(inj):>15.1f} {mib(inj - peak):>7.1f} "
              f"{mib(cap) if cap else float('nan'):>9.1f}   basis {r['phase']['basis']}")


if __name__ == "__main__":
    main()
