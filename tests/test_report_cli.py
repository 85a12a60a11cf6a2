"""The command line's own house rules: help texts, what ``--help`` imports, file modes of what it
writes, and ``analyze`` output that survives a pipe."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from traceinsight import present
from traceinsight.cli import COMMANDS, build_parser, main

ROOT = Path(__file__).resolve().parent.parent
RUN = ROOT / "tests" / "data" / "runs" / "retracing"


def run_cli(*args: str, **kwargs) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.pop("COLUMNS", None)
    code = "import sys; from traceinsight.cli import main; sys.exit(main())"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          env=env, **kwargs)


def test_help_imports_no_command_dependencies():
    code = ("import sys\nfrom traceinsight.cli import main\ntry:\n    main(['--help'])\n"
            "except SystemExit:\n    pass\n"
            "print('LOADED', sorted(m for m in ('numpy', 'pandas', 'rich', 'textual', 'google', "
            "'tensorflow', 'inspect') if m in sys.modules))")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         check=True).stdout
    assert "LOADED []" in out, out


def test_every_command_has_a_help_line():
    out = run_cli("--help").stdout
    for name in COMMANDS:
        line = next(x for x in out.splitlines() if x.strip().startswith(name + " "))
        assert line.split(None, 1)[1].strip() not in ("", name), line


def test_the_flags_a_command_documents_exist():
    """``export --help`` once named ``--pass``; every flag quoted in a command's text is real."""
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name, p in sub.choices.items():
        known = {s for a in p._actions for s in a.option_strings}
        # flags after a lone `--` belong to the user's own command (traceinsight run -- python ...),
        # and an example of another command (traceinsight diff ...) quotes that command's flags
        lines = [ln.split(" -- ")[0] for ln in (p.description or "").splitlines()
                 if not (ln.strip().startswith("traceinsight ")
                         and not ln.strip().startswith(f"traceinsight {name}"))]
        text = "\n".join(lines)
        quoted = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", text))
        assert quoted <= known, (name, quoted - known)


def test_a_command_is_set_up_only_when_named():
    parser = build_parser(["view", "x"])
    sub = next(a for a in parser._actions if a.dest == "command")
    assert any("--theme" in a.option_strings for a in sub.choices["view"]._actions)
    assert set(sub.choices) == {"view"}          # the other commands are not even imported
    sub = next(a for a in build_parser(["vew", "x"])._actions if a.dest == "command")
    assert set(sub.choices) == set(COMMANDS)     # a typo: argparse lists the commands
    assert not any("--modes" in a.option_strings for a in sub.choices["capture"]._actions)
    full = build_parser()
    sub = next(a for a in full._actions if a.dest == "command")
    assert any("--modes" in a.option_strings for a in sub.choices["capture"]._actions)


def test_format_choices_are_the_renderers_lists():
    """``--format`` offers what ``report.render`` / ``render_diff`` dispatch: a new format is one
    entry of their lists, and every format offered renders."""
    from traceinsight.report import DIFF_FORMATS, REPORT_FORMATS, render, render_diff
    from traceinsight.report.diff import diff_data
    from traceinsight.testing import sample_run
    for command, formats in (("report", REPORT_FORMATS), ("diff", DIFF_FORMATS)):
        sub = next(a for a in build_parser([command])._actions if a.dest == "command")
        fmt = next(a for a in sub.choices[command]._actions if "--format" in a.option_strings)
        assert tuple(fmt.choices) == formats
    run = sample_run()
    assert all(render(run, f) for f in REPORT_FORMATS)
    diff = diff_data(run, run, [(run.modes["eager"], run.modes["function"])])
    assert all(render_diff(diff, f) for f in DIFF_FORMATS)


@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002])
def test_written_files_follow_the_umask(tmp_path, mask):
    from traceinsight.runfolder import atomic_write_bytes, atomic_write_json
    old = os.umask(mask)
    try:
        atomic_write_bytes(tmp_path / "a.bin", b"x")
        atomic_write_json(tmp_path / "run.json", {"a": 1})
    finally:
        os.umask(old)
    for name in ("a.bin", "run.json"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o666 & ~mask, name


@pytest.mark.skipif(not RUN.is_dir(), reason="committed run missing")
def test_report_file_mode(tmp_path):
    old = os.umask(0o022)
    try:
        assert main(["report", str(RUN), "-o", str(tmp_path / "report.md")]) == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "report.md").stat().st_mode) == 0o644


@pytest.mark.skipif(not RUN.is_dir(), reason="committed run missing")
def test_piped_analyze_keeps_every_figure_whole():
    """Not a terminal: every table at its natural width; names whole, figures never cut."""
    import traceinsight
    r = run_cli("analyze", str(RUN))
    assert r.returncode == 0, r.stderr
    out = r.stdout
    summary = traceinsight.load(RUN).summary()
    for row in summary.itertuples():
        assert re.search(rf"\b{re.escape(present.ms(row.median_ms))}\b", out), row.mode
        ci = present.ratio_ci(row.ratio, row.ratio_lo, row.ratio_hi)
        assert ci in out.replace("│\n", ""), (ci, out)
    assert not re.search(r"\d…", out), "a figure was cut"
    for row in summary.itertuples():     # each mode's row starts with its whole name
        assert re.search(rf"^ {re.escape(row.mode)} ", out, re.M), row.mode


def test_rich_table_never_cuts_a_figure():
    """The shared terminal table: at 40 columns the name folds, the figures stay whole."""
    import io

    from rich.console import Console
    from rich.text import Text
    buf = io.StringIO()
    rows = [[Text("a-very-long-mode-name-" * 3), present.ms(8.4567), present.ratio_ci(2.5, 2.4, 2.6)]]
    Console(file=buf, width=40, color_system=None).print(
        present.rich_table("t", [("mode", False), ("median", True), ("vs fastest", True)], rows))
    out = buf.getvalue()
    assert "8.46" in out and "2.50× [2.40, 2.60]" in out and "…" not in out


def test_signed_ms_signs_every_positive_difference():
    """``+0.50`` (not ``0.50``) for a positive difference under 1 ms; zero and tiny ones as ms()."""
    assert [present.signed_ms(v) for v in (0.5, 1.2, -0.3, 0, 150, 0.04, 0.0001)] == \
        ["+0.50", "+1.20", "-0.30", "0", "+150", "+0.040", "<0.001"]
