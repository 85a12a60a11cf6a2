"""README's quick start, rule table and mode list stay true."""

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
    table = (ROOT / "docs" / "attribution.md").read_text()      # README links it
    for kind, pattern, category, _ in RULES:
        assert f"| `{pattern}` | {kind} | {category} |" in table, pattern


def _mode_bullet(opening: str) -> str:
    """The bullet of the mode list (docs/capture.md, "The workload file") that opens with ``opening``."""
    capture = (ROOT / "docs" / "capture.md").read_text()     # README links it
    section = capture.split("## The workload file", 1)[1].split("\n## ", 1)[0]
    listing = section.split("lists the modes:", 1)[1].split("\n\n", 2)[1]
    return next(b for b in listing.split("\n* ") if b.lstrip("* ").startswith(opening))


def test_the_mode_list_names_every_mode_of_the_capture_table():
    """The documented mode list is the capture's mode table (``capture/modes.py``): each base of the
    Keras and function modes, and the ``tf1:`` and ``jax:`` modes by name, all of them and no
    other; the ``+tensor`` and ``tf_keras:`` variants are named as rules."""
    from traceinsight.capture import modes

    def names(text: str) -> set[str]:
        return set(re.findall(r"`([^`]+)`", text)) - {modes.TF1_PREFIX, modes.JAX_PREFIX}

    keras = _mode_bullet("Keras:")
    plain = {m.base for m in modes.keras_modes()
             if not m.legacy_keras and not m.tensor_inputs and m.backend == "tensorflow"}
    assert names(keras.split(";", 1)[0]) == plain
    assert {n for n in names(keras) if n.startswith(modes.TF1_PREFIX)} == \
        {m.name for m in modes.keras_modes() if m.tf1}
    assert f"`{modes.TENSOR_SUFFIX}`" in keras and f"`{modes.LEGACY_PREFIX}<mode>`" in keras
    jax = _mode_bullet("Keras on JAX")
    assert {n for n in names(jax) if n.startswith(modes.JAX_PREFIX)} == \
        {m.name for m in modes.keras_modes() if m.backend == "jax"}
    function = _mode_bullet("Function:")
    assert names(function.split("(", 1)[0]) == {m.name for m in modes.function_modes()}


def test_readme_is_short_and_its_links_and_pictures_exist():
    """README is the newcomer's page: short, and everything it links or draws is in the clone."""
    assert len(README.splitlines()) <= 220
    for target in re.findall(r"\]\(([^)#]+)", README):
        if not target.startswith("http"):
            assert (ROOT / target).exists(), target
    for doc in (ROOT / "docs").glob("*.md"):
        for target in re.findall(r"\]\(([^)#]+)", doc.read_text()):
            if not target.startswith("http"):
                assert (doc.parent / target).exists(), (doc.name, target)
