"""Time XLA compilation of the version-trace step without the profiler, in fresh processes: the
independent figure the derived compile of a trace without compile events is checked against.

    /path/to/env/bin/python tools/measure_xla_compile.py [--runs 3] [--depth 0]

For each of ``jit_compile=False`` and ``jit_compile=True``, ``--runs`` fresh processes each time,
with ``time.perf_counter``, the step of tools/make_version_traces.py (the ``function`` / ``xla``
cases):

* ``first``: the first call (tracing, instantiation, XLA compilation and the run), wall time and
  the process's CPU time (less sensitive to other processes on a loaded machine; all threads);
* ``after_trace``: the first call after the function was traced by ``get_concrete_function`` (the
  trace's op time on that call is this without the dispatch around it);
* ``steady``: the median of the next 20 calls.

Prints medians over the runs and two figures (ms):

* ``jit first - nojit first``: compilation proper (what XLA adds to the first call);
* ``jit after_trace - jit steady``: what the trace-derived compile stands for (compilation and the
  function's other one-time setup on its first run).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def _child(jit: bool, traced_first: bool, depth: int) -> dict:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf
    from make_version_traces import _step_fn, _variables

    w1, w2, x, y, hidden = _variables(tf, depth)
    step = _step_fn(tf, w1, w2, jit, hidden)
    if traced_first:
        step.get_concrete_function(x, y)
    t0, c0 = time.perf_counter(), time.process_time()
    step(x, y).numpy()
    first = (time.perf_counter() - t0) * 1e3
    first_cpu = (time.process_time() - c0) * 1e3
    times = []
    for _ in range(20):
        t0 = time.perf_counter()
        step(x, y).numpy()
        times.append((time.perf_counter() - t0) * 1e3)
    return {"first": first, "first_cpu": first_cpu, "steady": statistics.median(times),
            "tf": tf.__version__}


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--depth", type=int, default=0,
                   help="hidden layers of the step (tools/make_version_traces.py --depth)")
    p.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.child:
        print(json.dumps(_child(a.child[0] == "1", a.child[1] == "1", a.depth)))
        return 0
    res: dict[tuple[bool, bool], list[dict]] = {}
    for _ in range(a.runs):   # interleaved, so a change of machine load hits every variant
        for jit in (False, True):
            for traced_first in (False, True):
                out = subprocess.run([sys.executable, __file__, "--child", str(int(jit)),
                                      str(int(traced_first)), "--depth", str(a.depth)], capture_output=True, text=True,
                                     check=True).stdout.strip().splitlines()[-1]
                res.setdefault((jit, traced_first), []).append(json.loads(out))

    def med(jit, tf_, key):
        return statistics.median(r[key] for r in res[(jit, tf_)])

    version = res[(False, False)][0]["tf"]
    for jit in (False, True):
        print(f"TF {version} jit_compile={jit}: first {med(jit, False, 'first'):.1f} ms, "
              f"first after tracing {med(jit, True, 'first'):.1f} ms, "
              f"steady {med(jit, True, 'steady'):.2f} ms (medians of {a.runs} fresh processes)")
    print(f"TF {version} compile, jit first - nojit first: "
          f"{med(True, False, 'first') - med(False, False, 'first'):.1f} ms")
    print(f"TF {version} compile, CPU time of jit first - nojit first (all threads): "
          f"{med(True, False, 'first_cpu') - med(False, False, 'first_cpu'):.1f} ms")
    print(f"TF {version} jit first after tracing - jit steady: "
          f"{med(True, True, 'first') - med(True, True, 'steady'):.1f} ms")
    print(f"TF {version} nojit first after tracing - nojit steady: "
          f"{med(False, True, 'first') - med(False, True, 'steady'):.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
