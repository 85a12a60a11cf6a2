from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
RUNS = DATA / "runs"


@pytest.fixture(scope="session")
def real_runs():
    """The committed real runs (captured by tools/make_test_data.py), loaded once per session."""
    import traceinsight
    # fresh analysis (no cache), so the tests exercise the analysis itself
    return {p.name: traceinsight.load(p, use_cache=False) for p in sorted(RUNS.iterdir())
            if (p / "run.json").is_file()}
