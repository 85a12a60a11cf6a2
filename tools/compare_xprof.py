"""traceinsight vs XProf on the same trace file: step time, device compute and the top kernels.

    .venv/bin/python tools/compare_xprof.py PATH.xplane.pb [--top 5]

XProf's figures come from its own converters (``overview_page``: average step time and device
compute; ``kernel_stats``: total duration per kernel, summed here over rows of the same kernel
name, since XProf lists a kernel once per launch configuration / op). traceinsight's: the median
step, the slowest device's median device compute, and kernels summed by whole name over all devices.
XProf may write cache files next to the trace (``*.op_stats*.pb``); they are left there.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def xprof_figures(path: Path) -> dict:
    from xprof.convert import raw_to_tool_data as r

    def tool(name):
        out = r.xspace_to_tool_data([str(path)], name, {})
        data = out[0] if isinstance(out, tuple) else out
        return json.loads(data.decode() if isinstance(data, bytes) else data)

    ov = tool("overview_page")
    p = next(t["p"] for t in ov if t.get("p") and "steptime_ms_average" in t["p"])
    ks = tool("kernel_stats")
    cols = [c["id"] for c in ks["cols"]]
    kernels: dict[str, float] = {}
    for row in ks.get("rows") or []:
        v = dict(zip(cols, [c.get("v") for c in row["c"]]))
        kernels[v["kernel_name"]] = kernels.get(v["kernel_name"], 0.0) + v["total_duration_us"] / 1e3
    steps = next((t["rows"] for t in ov if t.get("cols") and t["cols"][0]["id"] == "stepnum"), [])
    step_ms = [row["c"][-1]["v"] for row in steps]
    compute = [row["c"][1]["v"] for row in steps]
    return {"step_ms": float(p["steptime_ms_average"]), "steps": len(step_ms),
            "step_ms_exact": sum(step_ms) / len(step_ms) if step_ms else float("nan"),
            "compute_ms": sum(compute) / len(compute) if compute else float("nan"),
            "kernels": kernels}


def ours(path: Path) -> dict:
    import traceinsight
    from traceinsight.analysis.device import kernel_totals
    run = traceinsight.load(path, use_cache=False)
    m = next(iter(run.modes.values()))
    slow = m.devices[m.devices["slowest"]].iloc[0] if len(m.devices) else None
    k = kernel_totals(m.kernels)
    n = len(m.steady_steps)
    return {"step_ms": float(m.steady_steps["wall_ms"].mean()) if n else float("nan"),
            "steps": n, "compute_ms": float(slow["compute_ms"]) if slow is not None else float("nan"),
            "device": slow["device"] if slow is not None else "-",
            "kernels": dict(zip(k["kernel"], k["device_ms"])), "rule": m.step_rule}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("path", type=Path)
    ap.add_argument("--top", type=int, default=5)
    args = ap.parse_args(argv)
    x, o = xprof_figures(args.path), ours(args.path)

    def pct(a, b):
        return f"{(a - b) / b * 100:+.2f} %" if b else "-"

    print(f"| {args.path.name} | traceinsight | XProf | difference |")
    print("|---|---:|---:|---:|")
    print(f"| steps | {o['steps']} | {x['steps']} | |")
    print(f"| step time, ms (mean) | {o['step_ms']:.3f} | {x['step_ms_exact']:.3f} | "
          f"{pct(o['step_ms'], x['step_ms_exact'])} |")
    print(f"| device compute, ms/step ({o['device']}) | {o['compute_ms']:.3f} | {x['compute_ms']:.3f} | "
          f"{pct(o['compute_ms'], x['compute_ms'])} |")
    top = sorted(x["kernels"].items(), key=lambda kv: (-kv[1], kv[0]))[: args.top]
    for name, ms in top:
        mine = o["kernels"].get(name, 0.0)
        short = name if len(name) <= 70 else name[:67] + "..."
        print(f"| kernel `{short}`, ms total | {mine:.3f} | {ms:.3f} | {pct(mine, ms)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
