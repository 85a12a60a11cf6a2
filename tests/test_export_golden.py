"""The exported files of a committed real run, byte for byte: the Chrome trace (both capture
passes, a few steps, uncompressed) and the CSV tables of two modes of tests/data/runs/retracing.
The trace's own checks (against XProf's converter, against the mode's steps table) are in
test_export_trace.py and test_export_agrees.py; these files pin everything else the export writes
(record order, number formatting, metadata, CSV layout), so a refactor of the writers shows any
change in what a user gets.

After an intended change, rewrite them with ``TRACEINSIGHT_UPDATE_GOLDEN=1 .venv/bin/pytest
tests/test_export_golden.py`` (the rewritten ones fail once), read the diff and commit the
goldens on their own."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from traceinsight import cli

DATA = Path(__file__).parent / "data" / "runs" / "retracing"
GOLDEN = Path(__file__).parent / "golden" / "export"
# (mode, pass, steps): step 0 of function holds its tracing; eager's steps 2-3 are steady (its
# python-tracer pass numbers its steps on from the host pass's)
CASES = [("eager", "host", "2-3"), ("eager", "python", "5240"), ("function", "host", "0-1")]


def check(name: str, data: bytes) -> None:
    path = GOLDEN / name
    old = path.read_bytes() if path.exists() else None
    if os.environ.get("TRACEINSIGHT_UPDATE_GOLDEN") and data != old:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        pytest.fail(f"{path.name} rewritten: read `git diff {path}`, commit it on its own with the reason")
    assert old is not None, f"{path} missing: run with TRACEINSIGHT_UPDATE_GOLDEN=1"
    assert data == old, name


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    # a copy without the analysis cache: the export analyses the traces itself
    return shutil.copytree(DATA, tmp_path_factory.mktemp("r") / "retracing",
                           ignore=shutil.ignore_patterns(".traceinsight"))


@pytest.mark.parametrize("mode,pass_name,steps", CASES)
def test_trace_is_byte_identical(run, tmp_path, mode, pass_name, steps):
    out = tmp_path / "out"
    assert cli.main(["export", str(run), "--mode", mode, "--trace", pass_name, "--steps", steps,
                     "--no-gzip", "--tables", "none", "-o", str(out)]) == 0
    data = (out / "trace.json").read_bytes()
    # the trace files' absolute paths (in the metadata) are this test's temporary folder
    data = data.replace(json.dumps(str(run))[1:-1].encode(), b"RUN")
    check(f"retracing-{mode}-{pass_name}-{steps}.trace.json", data)


@pytest.mark.parametrize("mode", ["eager", "function"])
def test_tables_are_byte_identical(run, tmp_path, mode):
    out = tmp_path / "out"
    assert cli.main(["export", str(run), "--mode", mode, "--trace", "none", "--tables", "csv",
                     "-o", str(out)]) == 0
    written = sorted(p.name for p in out.iterdir())
    check(f"retracing-{mode}.tables.txt", "\n".join(written).encode() + b"\n")
    for name in written:
        check(f"retracing-{mode}-{name}", (out / name).read_bytes())
