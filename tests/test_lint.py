"""ruff and mypy, configured in pyproject.toml, are clean (CI installs both with the `test` extra;
a developer's venv without them skips these)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def tool(name: str) -> str:
    """The tool installed beside this Python (the venv's), else on PATH; skip when absent."""
    here = Path(sys.executable).parent / name
    path = str(here) if here.exists() else shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed (pip install -e '.[test]')")
    return path


def test_ruff():
    r = subprocess.run([tool("ruff"), "check", "--no-cache", "."], cwd=ROOT, capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stdout + r.stderr



def test_mypy():
    r = subprocess.run([tool("mypy"), "--no-incremental", "--cache-dir", "/dev/null"], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
