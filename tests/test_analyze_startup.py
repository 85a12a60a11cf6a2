"""`traceinsight analyze` prints from the analysis's light column tables (``traceinsight.columns``):
a fresh process never imports pandas (start-up, see tools/bench_startup.py; not timed here), and it
prints the figures it printed when the analysis computed pandas DataFrames: the goldens
tests/golden/analyze_*.txt were written by that earlier code (commit 5c046ff), not by this one.

Checked on a committed trace (the one tools/bench_startup.py times) and on a committed run folder,
analysed and then read back from its analysis cache.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from test_report import check_golden

RUNS = Path(__file__).parent / "data" / "runs"
TRACE = RUNS / "conv1d" / "xla" / "host" / "plugins" / "profile" / "2026_11_21_23_56_21" / \
    "localhost_59041.xplane.pb"
HEAVY = ("pandas", "pyarrow")


def analyze(path: Path) -> tuple[str, set[str]]:
    """stdout of ``python -m traceinsight analyze PATH`` in a fresh process, and every module it
    imported (``-X importtime`` lists each one the first time it is imported)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "NO_COLOR")}
    env["COLUMNS"] = "100"      # rich's width when not a terminal; the goldens were written so
    env["TRACEINSIGHT_JOBS"] = "1"
    r = subprocess.run([sys.executable, "-X", "importtime", "-m", "traceinsight", "analyze", str(path)],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    imported = {line.rsplit("|", 1)[1].strip() for line in r.stderr.splitlines()
                if line.startswith("import time:") and "|" in line}
    assert "traceinsight.report.terminal" in imported   # the listing is there
    return r.stdout, imported


def heavy(imported: set[str]) -> list[str]:
    return sorted(m for m in imported if m.split(".")[0] in HEAVY)


def test_analyze_a_trace_without_pandas():
    out, imported = analyze(TRACE)
    assert heavy(imported) == []
    # start-up: a trace's analysis reads no analysis cache and no JSON, its protobuf classes come
    # from serialized schemas (under upb, without protobuf's pure-Python implementation), the help
    # formatter is sized without shutil; a trace analysed alone compares no two modes and has no
    # timings.json, so the comparisons' modules and the timings' (their frozen classes) are not
    # imported
    assert not imported & {"traceinsight.analysis.cache", "google.protobuf.descriptor_pb2", "shutil",
                           "google.protobuf.internal.python_message", "google.protobuf.text_format",
                           "json", "traceinsight.compare", "traceinsight.comparison",
                           "traceinsight.ratio", "traceinsight.analysis.timings",
                           "traceinsight.machineload",
                           # numpy's sort-based set functions import its masked arrays (~6 ms):
                           # the analysis takes resample.unique / isin instead
                           "numpy.ma"}
    check_golden("analyze_trace.txt", out)


def test_analyze_a_run_folder_and_its_cache_without_pandas(tmp_path):
    run = tmp_path / "conv1d"
    shutil.copytree(RUNS / "conv1d", run, ignore=shutil.ignore_patterns(".traceinsight"))
    first, imported = analyze(run)            # analyses the four modes, writes the cache
    assert heavy(imported) == [] and "numpy.ma" not in imported
    assert list((run / ".traceinsight").rglob("*.json"))
    again, imported = analyze(run)            # reads the cache
    assert heavy(imported) == []
    # nothing to decode: neither the trace analysis nor protobuf; valid JSON needs no jsonschema
    assert not imported & {"traceinsight.analysis.mode", "google.protobuf", "jsonschema"}
    # start-up: nor decimal (the compiled validators), shutil, or the host groups' classes
    assert not imported & {"decimal", "shutil", "traceinsight.hostgroup"}
    assert again == first
    check_golden("analyze_run.txt", first)
