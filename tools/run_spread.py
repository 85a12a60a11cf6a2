"""Run-to-run spread: how far apart are the medians of the same modes in separate captures of the
same workload, nothing changed? The figure behind ``stats.RUN_TO_RUN_TOLERANCE``.

    python tools/run_spread.py RUN1 RUN2 [RUN3 ...]
    # e.g. capture a sample twice, then compare:
    #   traceinsight capture samples/tf2_vs_tf1_medium.py --modes eager,function,xla --name m1
    #   traceinsight capture samples/tf2_vs_tf1_medium.py --modes eager,function,xla --name m2
    #   python tools/run_spread.py runs/m1 runs/m2

Prints per mode the untraced median of each run and max/min (1.00 = identical), then what
``traceinsight diff`` says of the first two runs.
"""

from __future__ import annotations

import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[3].strip(), file=sys.stderr)
        return 2
    import traceinsight
    from traceinsight.report.diff import diff_data
    runs = [traceinsight.load(Path(p)) for p in argv]
    names = [n for n in runs[0].modes if all(n in r.modes and r.modes[n].ok for r in runs)]
    print(f"{'mode':<24} " + " ".join(f"{r.name[:12]:>12}" for r in runs) + "  max/min")
    for n in names:
        meds = [r.modes[n].median_ms for r in runs]
        print(f"{n:<24} " + " ".join(f"{m:12.3g}" for m in meds) + f"  {max(meds) / min(meds):7.2f}")
    print()
    print(diff_data(runs[0], runs[1])["summary"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
