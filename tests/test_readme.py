"""README's quick start and rule table stay true."""

from __future__ import annotations

import re
from pathlib import Path

from traceinsight.analysis.rules import RULES

ROOT = Path(__file__).parent.parent
README = (ROOT / "README.md").read_text()


def quick_start_commands() -> list[str]:
    section = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.+?)\n```", section, flags=re.S)


def test_quick_start_is_two_commands_and_ci_runs_the_test_one():
    commands = quick_start_commands()
    assert len(commands) == 2
    assert all("\n" not in c for c in commands)
    assert "traceinsight capture samples/" in commands[0]
    assert "pytest" in commands[1]
    ci = (ROOT / ".ci" / "run").read_text()
    assert commands[1] in ci.splitlines()


def test_quick_start_sample_exists():
    sample = re.search(r"capture (samples/\S+\.py)", quick_start_commands()[0]).group(1)
    assert (ROOT / sample).is_file()


def test_every_rule_is_documented():
    for kind, pattern, category, _ in RULES:
        assert f"| `{pattern}` | {kind} | {category} |" in README, pattern
