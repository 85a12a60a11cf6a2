"""``traceinsight analyze`` piped writes its tables without rich (``report.terminal._plain``): the
same bytes as rich's layout of the same renderables, checked here against rich itself on the
committed runs, a hostile run, a run with a failed mode and random text, at several widths; and
every case it does not lay out (characters rich measures otherwise, forced colour, a terminal) is
left to rich."""

from __future__ import annotations

import io
import random
import shutil
from pathlib import Path

import pytest
from rich.cells import cell_len
from rich.console import Console

import traceinsight
from traceinsight.report import terminal
from traceinsight.report.options import TerminalOptions

from test_report import hostile_run, sample_run

RUNS = Path(__file__).parent / "data" / "runs"
WIDTHS = (20, 41, 80, 100, 163)


def by_rich(blocks: list, width: int) -> str:
    """What ``terminal.show`` prints through rich on a piped console of ``width`` columns."""
    from rich.table import Table

    from traceinsight import present
    buf = io.StringIO()
    console = Console(file=buf, width=width, emoji=False, force_terminal=False)
    for b in blocks:
        r = terminal._to_rich(b)
        if isinstance(r, Table):
            present.print_table(console, r)
        else:
            console.print(r)
    return buf.getvalue()


def agree(blocks: list, width: int) -> bool:
    """The plain writer's output equals rich's, or it declined (None); True when it wrote."""
    plain = terminal._plain(blocks, width)
    if plain is not None:
        assert plain == by_rich(blocks, width)
    return plain is not None


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    out = {}
    for name in ("conv1d", "costly-loop", "retracing"):
        path = tmp_path_factory.mktemp(name) / name
        shutil.copytree(RUNS / name, path, ignore=shutil.ignore_patterns(".traceinsight"))
        out[name] = traceinsight.load(path, use_cache=False)
    out["sample"] = sample_run()
    out["hostile"] = hostile_run()
    conv = out["conv1d"]
    out["failed"] = traceinsight.model.Run(
        path=None, name="with a failed mode",
        modes={**conv.modes, "eager": conv.modes["eager"].replace(status="failed", error="boom")})
    return out


@pytest.mark.parametrize("name", ["conv1d", "costly-loop", "retracing", "sample", "hostile",
                                  "failed"])
def test_the_runs_print_as_rich_prints_them(runs, name):
    from traceinsight.derive import complete
    run = complete(runs[name]) if name == "failed" else runs[name]
    written = 0
    for top in (3, 10):
        blocks = terminal._blocks(run, TerminalOptions(top=top))
        written += sum(agree(blocks, w) for w in WIDTHS)
    if name != "hostile":       # the hostile run's names hold characters left to rich
        assert written == 2 * len(WIDTHS)


def test_random_text_lays_out_as_rich_does():
    rng = random.Random(7)
    alphabet = "abcXYZ019 .,:;()[]/%–×…→─é"
    def text(n: int) -> str:
        words = ["".join(rng.choice(alphabet) for _ in range(rng.choice((1, 3, 8, 30, 90))))
                 for _ in range(n)]
        return rng.choice(("", " ", "  ")).join(words) + rng.choice(("", " ", "   "))
    written = 0
    for _ in range(300):
        width = rng.randint(20, 120)
        cols = [(text(1).strip() or "h", rng.random() < 0.5) for _ in range(rng.randint(1, 6))]
        rows = [[text(rng.randint(1, 4)).strip() if rng.random() < 0.8 else text(1)
                 for _ in cols] for _ in range(rng.randint(0, 4))]
        blocks = [terminal._TableBlock(text(rng.randint(1, 12)).strip() or "t", cols, rows),
                  terminal._LineBlock((text(rng.randint(1, 30)), None)),
                  terminal._LineBlock(("note:", "yellow"), (" ", None), (text(5), None)),
                  terminal._RuleBlock(text(rng.randint(1, 3)).strip() or "r")]
        written += agree(blocks, width)
    assert written > 100        # the rest have a rule's title too long for the width (rich cuts it)


def test_the_one_cell_characters_are_one_cell_in_rich():
    assert all(cell_len(c) == 1 for c in terminal._ONE_CELL)


def test_what_the_writer_leaves_to_rich():
    wide = [terminal._LineBlock(("日本語 モード", None))]
    assert terminal._plain(wide, 80) is None
    emoji = [terminal._RuleBlock("mode 🙂")]
    assert terminal._plain(emoji, 80) is None
    markup = [terminal._TableBlock("t", [("[bold]x", False)], [])]
    assert terminal._plain(markup, 80) is None
    long_rule = [terminal._RuleBlock("m" * 77)]        # rich cuts it with an ellipsis
    assert terminal._plain(long_rule, 80) is None
    assert terminal._plain([object()], 80) is None     # a rich renderable (the hosts' tables)


@pytest.mark.parametrize("env,plain", [
    ({}, True), ({"FORCE_COLOR": "1"}, False), ({"FORCE_COLOR": ""}, True),
    ({"TTY_COMPATIBLE": "1"}, False), ({"TTY_COMPATIBLE": "0", "FORCE_COLOR": "1"}, True),
    ({"COLUMNS": "7"}, False)])
def test_colour_forced_or_a_terminal_goes_through_rich(monkeypatch, env, plain):
    for k in ("FORCE_COLOR", "TTY_COMPATIBLE", "COLUMNS"):
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    out = io.StringIO()
    assert (terminal.plain_width(out) is not None) == plain

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True
    assert terminal.plain_width(Tty()) is None or env.get("TTY_COMPATIBLE") == "0" \
        or env.get("FORCE_COLOR") == ""


def test_the_width_is_rich_s(monkeypatch):
    monkeypatch.setenv("COLUMNS", "123")
    assert terminal.plain_width(io.StringIO()) == Console(file=io.StringIO()).width == 123
    monkeypatch.delenv("COLUMNS")
    assert terminal.plain_width(io.StringIO()) == Console(file=io.StringIO()).width


def test_one_blas_thread_only_for_the_analysing_commands(monkeypatch):
    """numpy's OpenBLAS thread pool (started at import) is kept to one thread by the commands that
    only analyse, never by those that run the user's workload, and never against the user's
    choice."""
    import os
    import sys

    from traceinsight import cli
    monkeypatch.delitem(sys.modules, "numpy")       # as in a fresh process, before the import
    for command, env, want in (("analyze", {}, "1"), ("report", {}, "1"), ("capture", {}, None),
                               ("run", {}, None), (None, {}, None),
                               ("analyze", {"OMP_NUM_THREADS": "4"}, None),
                               ("view", {"OPENBLAS_NUM_THREADS": "8"}, "8")):
        monkeypatch.setattr(os, "environ", dict(env))
        cli.one_blas_thread(command)
        assert os.environ.get("OPENBLAS_NUM_THREADS") == want, (command, env)


def test_the_command_s_own_process_tunes_its_garbage_collector(monkeypatch, capsys):
    """Run as the process's command (no argv: the console script), ``main`` collects the youngest
    generation less often where the command only analyses, and freezes the objects it made out of
    the garbage collector when it ends, however the command ended, so the exit's collections skip
    them; called with an argv (a caller's process, as here) it changes neither."""
    import gc
    import sys

    from traceinsight import cli
    frozen: list[int] = []
    thresholds: list[tuple] = []
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(1))
    monkeypatch.setattr(gc, "set_threshold", lambda *t: thresholds.append(t))
    with pytest.raises(SystemExit):
        cli.main(["--version"])
    assert frozen == [] and thresholds == []
    for argv, status, tuned in ((["traceinsight"], 2, []),
                                (["traceinsight", "capture", "--no-such-option"], 2, []),
                                (["traceinsight", "analyze", "/no/such/path"], 2,
                                 [(cli.GC_YOUNG_THRESHOLD,)])):
        monkeypatch.setattr(sys, "argv", argv)
        try:
            assert cli.main() == status
        except SystemExit as e:       # argparse's own exit, on a bad option
            assert e.code == status
        assert frozen == [1] and thresholds == tuned, argv
        frozen.clear()
        thresholds.clear()
    capsys.readouterr()



def test_a_long_step_rule_is_shown_whole():
    """The steps note is the tool's own sentence around a marker's name (a run's loop iterations
    take 250 characters): shown whole, a name in it cut only where it alone is too long."""
    from traceinsight.derive import complete
    from traceinsight.model import Run
    from traceinsight.testing import make_mode
    rule = ("step markers 'train traceinsight' (step_num): each step is one iteration of the loop: "
            "from one train_step call to the next (what the loop does between calls, its input "
            "fetch included, is in the step; the last call, which has no next, is not a step)")
    run = complete(Run(None, "r", {"m": make_mode("m", {"op": 1.0}).replace(step_rule=rule)}))
    text = " ".join(by_rich(terminal._blocks(run, TerminalOptions()), 100).split())
    assert f"steps: {rule};" in text
