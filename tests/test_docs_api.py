"""The Python API's example in docs/api.md runs as written, on a committed run of the sample it names."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_api_example_runs(tmp_path, monkeypatch):
    doc = (ROOT / "docs" / "api.md").read_text()
    block = re.search(r"```python\n(.+?)\n```", doc, flags=re.S).group(1)
    path = re.search(r'traceinsight\.load\("([^"]+)"\)', block).group(1)
    assert "tf2_vs_tf1_small" in path          # the quick start's sample, as committed below
    block = block.replace(f'"{path}"', repr(str(ROOT / "tests" / "data" / "runs" / "conv1d")))
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    exec(compile(block, "docs/api.md", "exec"), scope)     # noqa: S102 - our own documentation
    assert scope["text"].startswith("# traceinsight report")
    assert (tmp_path / "eager.json.gz").stat().st_size > 0
