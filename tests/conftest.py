from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
RUNS = DATA / "runs"


@pytest.fixture(scope="session")
def real_runs():
    """The committed real runs (captured by tools/make_test_data.py), loaded once per session."""
    import traceinsight
    return {p.name: traceinsight.load(p) for p in sorted(RUNS.iterdir()) if (p / "run.json").is_file()}
