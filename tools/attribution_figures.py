"""The tool's figures on the attribution runs (tests/data/attribution), to set beside
tools/measure_attribution_truth.py. No TensorFlow needed.

    .venv/bin/python tools/attribution_figures.py                  # this checkout's analysis
    PYTHONPATH=/path/to/other/checkout python tools/attribution_figures.py   # e.g. before a change

Per mode: median ms per steady traced step of each category, the traced step, the untraced median
(perf_counter), and for maxpool the worker op self times beside XProf's framework_op_stats.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "attribution"


def main() -> int:
    import traceinsight
    from traceinsight.analysis.attribute import attribute
    from traceinsight.analysis.events import load_files
    from traceinsight.analysis.results import op_totals

    print(f"analysis from {Path(traceinsight.__file__).parent}")
    for run_dir in sorted(p for p in DATA.iterdir() if (p / "run.json").is_file()):
        run = traceinsight.load(run_dir, use_cache=False)
        for m in run.ok_modes():
            c = m.category_ms()
            cats = " ".join(f"{k} {v:.2f}" for k, v in c.items() if v)
            print(f"{run_dir.name:15s} {m.name:11s} {cats} | traced step "
                  f"{m.breakdown.loc['total', 'median']:.2f}, untraced {m.timing.median_ms:.2f} ms")
    try:
        from xprof.convert import raw_to_tool_data
    except ImportError:
        print("xprof not installed: no framework_op_stats comparison")
        return 0
    run = traceinsight.load(DATA / "maxpool", use_cache=False)
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for p in run.modes["function"].trace_paths:
            if "/host/" in p:  # XProf writes caches beside the trace: work on a copy
                files.append(shutil.copy(p, Path(tmp) / Path(p).name))
        data = json.loads(raw_to_tool_data.xspace_to_tool_data(files, "framework_op_stats", {})[0])
        table = data[0] if isinstance(data, list) else data
        cols = [c["id"] for c in table["cols"]]
        rows = [dict(zip(cols, [c.get("v") for c in r["c"]])) for r in table["rows"]]
        a = attribute(load_files(files))
        mine = op_totals(a, np.array([a.table.start.min()]),
                               np.array([a.table.end.max() + 1])).to_pandas()
        mine = mine[mine["thread"] == "worker"].set_index(["op", "type"])
        print("maxpool function, whole trace, self µs: op type | traceinsight | XProf framework_op_stats")
        for r in rows:
            if r["type"] == "IDLE":
                continue
            key = (r["operation"], r["type"])
            got = mine.loc[key, "self_ps"] / 1e6 if key in mine.index else float("nan")
            print(f"  {key[0]} {key[1]} | {got:.1f} | {r['total_self_time']:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
