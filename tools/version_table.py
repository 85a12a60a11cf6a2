"""The version table: for each TensorFlow version, each mode captured through ``capture --python``
(ok or not) and its untraced median step against the same step timed alone with perf_counter.

    .venv/bin/python tools/make_tf_envs.py 2.12.1 2.13.1 --capture OUT    # the captures
    .venv/bin/python tools/version_table.py OUT 2.12.1 2.13.1             # + time_alone, the table

The captures are tools/make_tf_envs.py's (the small function and Keras workloads of
tests/data/versions, few steps); the independent side is tools/time_alone.py, run here with each
version's interpreter (``.tf-envs/tf-<version>``; ``--python-of VERSION=PATH`` for one elsewhere,
``--tool-env`` for the versions this tool's own interpreter has), its JSON kept beside the runs
(``OUT/alone-<version>.json``, reused when present). Both run on whatever else the machine is doing:
the load average at each timing is printed, and a ratio is only as steady as that.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# capture name, mode -> time_alone's key (None: no alone timing of that step)
PAIRS = [
    ("fn", "eager", "fn eager"),
    ("fn", "function", "fn function"),
    ("fn", "xla", "fn xla"),
    ("fn", "v1-session", "fn v1-session"),
    # one batch inside fit(): against Keras' train function alone (the step fit() runs per batch;
    # time_alone.py also gives one fit() over N batches / N, which holds fit()'s own setup)
    ("keras", "fit", "keras fit (train function alone)"),
    ("keras", "xla", "keras xla"),
    ("tf1", "tf1:predict_on_batch", None),
    ("tf1", "tf1:fit", "tf1:fit (fit over N batches / N)"),
]


def _alone(python: str, out: Path, version: str) -> dict:
    path = out / f"alone-{version}.json"
    if path.is_file():
        return json.loads(path.read_text())
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    env.pop("PYTHONPATH", None)
    res: dict = {"load_before": os.getloadavg()[0]}
    for extra in ([], ["--tf1"]):
        r = subprocess.run([python, str(ROOT / "tools" / "time_alone.py"), *extra], capture_output=True,
                           text=True, env=env)
        lines = r.stdout.strip().splitlines()
        if r.returncode == 0 and lines:
            res.update(json.loads(lines[-1]))
        else:
            res[f"error{' '.join(extra)}"] = (r.stderr.strip().splitlines() or ["?"])[-1][:200]
    res["load_after"] = os.getloadavg()[0]
    path.write_text(json.dumps(res, indent=1) + "\n")
    return res


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", type=Path, help="the folder tools/make_tf_envs.py --capture wrote")
    p.add_argument("versions", nargs="+")
    p.add_argument("--python-of", action="append", default=[], metavar="VERSION=PATH")
    p.add_argument("--tool-env", action="append", default=[], metavar="VERSION",
                   help="this interpreter has that TensorFlow")
    a = p.parse_args(argv)
    pythons = dict(kv.split("=", 1) for kv in a.python_of)
    pythons.update({v: sys.executable for v in a.tool_env})
    print("| TF | mode | status | capture median ms (untraced) | alone ms (perf_counter) | capture / alone |")
    print("|---|---|---|---|---|---|")
    for v in a.versions:
        python = pythons.get(v) or str(ROOT / ".tf-envs" / f"tf-{v}" / "bin" / "python")
        alone = _alone(python, a.out, v)
        for capture, mode, key in PAIRS:
            run = a.out / f"tf-{v}-{capture}" / "run.json"
            if not run.is_file():
                print(f"| {v} | {mode} ({capture}) | not captured | | | |")
                continue
            entry = json.loads(run.read_text())["modes"].get(mode)
            if entry is None:
                print(f"| {v} | {mode} ({capture}) | not in the run | | | |")
                continue
            status = entry["status"] if entry["status"] == "ok" else f"{entry['status']}: {entry.get('error')}"
            med = (entry.get("summary") or {}).get("median_ms")
            ref = alone.get(key) if key else None
            ratio = f"{med / ref:.2f}" if med and ref else ""
            print(f"| {v} | {mode} ({capture}) | {status} | {med:.3f} | {ref if ref is not None else '-'} | {ratio} |"
                  if med is not None else f"| {v} | {mode} ({capture}) | {status} | | | |")
        print(f"| {v} | (load average during the alone timings: {alone.get('load_before', 0):.1f} -> "
              f"{alone.get('load_after', 0):.1f}) | | | | |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
