"""Capture the small real runs under tests/data/attribution/ (tests/test_attribution_truth.py).

    .venv/bin/python tools/make_attribution_traces.py            # all runs
    .venv/bin/python tools/make_attribution_traces.py sum-numpy  # one of them

Each is a real ``traceinsight capture`` of a workload in tests/workloads/attribution/ (or a sample)
with few steps, a short host trace and no python-tracer pass, so the folder stays small (< 3 MB).
Figures in them are whatever this machine measured; tests must not pin timings.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))   # make_test_data: the capture loop both scripts share

from make_test_data import make_all  # noqa: E402

OUT = ROOT / "tests" / "data" / "attribution"
W = "tests/workloads/attribution"

SMALL = ["--min-steps", "10", "--min-time", "0.5", "--max-time", "3", "--warmup", "2",
         "--host-trace-ms", "800", "--host-max-steps", "6", "--no-python-tracer"]

RUNS = {
    # name: (workload, modes, extra flags)
    "sum-numpy": (f"{W}/sum_numpy.py", "eager", []),
    "sum-tensor": (f"{W}/sum_tensor.py", "eager", []),
    "add-tensors": (f"{W}/add_tensors.py", "eager", ["--host-max-steps", "3"]),
    "data-overlap": (f"{W}/data_overlap.py", "function", []),
    "data-wait": (f"{W}/data_wait.py", "function", []),
    "data-none": (f"{W}/data_none.py", "function", []),
    "maxpool": (f"{W}/maxpool.py", "function,xla", []),
    # a host trace shorter than the first step: it ends inside XLA's compilation, so the compile
    # events around the passes it holds never ended in it
    "xla-cut": (f"{W}/maxpool.py", "xla", ["--host-trace-ms", "300"]),
    "costly-loop-v1": ("samples/costly_loop.py", "v1-session,function", ["--host-max-steps", "4"]),
}


if __name__ == "__main__":
    sys.exit(make_all(RUNS, OUT, SMALL, sys.argv[1:]))
