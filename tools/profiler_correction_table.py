"""Print, mode by mode, how each run's breakdown was made from its traced steps: the untraced
median (the headline), the traced mean step, the drawn total (what the categories a page draws
add up to; it must equal the median), how it was obtained and the correction by category
(traced minus drawn ms/step; negative: the untraced step has more of it).

    python tools/profiler_correction_table.py                     # the committed runs
    python tools/profiler_correction_table.py runs/<run> ...      # any run folders
"""

from __future__ import annotations

import sys
from pathlib import Path

import traceinsight
from traceinsight.model import CATEGORIES

ROOT = Path(__file__).resolve().parents[1]


def rows(path: Path) -> list[str]:
    run = traceinsight.load(path)
    out = []
    for m in run.ok_modes():
        c = m.correction
        if c is None:
            continue
        drawn = m.breakdown_ms
        off = (drawn / m.median_ms - 1) * 100 if m.median_ms else float("nan")
        removed = ", ".join(f"{k} {v:+.3f}" for k, v in sorted(c.removed.items(), key=lambda kv: -abs(kv[1]))
                            if abs(v) >= 0.0005)
        cost = (f"{c.event_cost_ms:.3f} ms ({c.per_event_us:.2f} µs × {c.events_per_step:.0f} ev)"
                if c.per_event_us is not None else "–")
        out.append(f"| {run.name} | {m.name} | {m.median_ms:.3f} | {c.traced_ms:.3f} | {drawn:.3f} "
                   f"| {off:+.1f} % | {c.kind.value} | {cost} | ×{c.scale:.2f} | {removed} |")
    return out


def main(argv: list[str]) -> int:
    paths = [Path(p) for p in argv] or sorted(p for p in (ROOT / "tests/data/runs").iterdir() if p.is_dir())
    print("| run | mode | untraced median ms | traced mean ms | drawn total ms | drawn vs median "
          "| method | profiler cost taken out where it lands | rest scaled | correction by category "
          "(traced − drawn, ms/step) |")
    print("|---|---|---:|---:|---:|---:|---|---|---:|---|")
    for p in paths:
        for line in rows(p):
            print(line)
    print(f"\ncategories: {', '.join(CATEGORIES)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
