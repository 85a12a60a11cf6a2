"""Strings from traces are data: a right-to-left override, terminal escape codes,
control characters, markup, a newline and a 1 MB name in op, event and host names, through every
renderer: markdown, HTML, JSON, the diff as text, ``analyze``'s tables and the viewer.

The trace is synthetic (tests/xspace_builder.py); every evil name must come out as visible escapes
(``\\u202e``, ``\\x1b``, ``\\n``), on its table row, and the 1 MB name cut with its length.
"""

from __future__ import annotations

import asyncio
import io
import json
import re

import pytest
from rich.console import Console

import traceinsight
from traceinsight import present

from xspace_builder import Space, session_path

RLO = "\u202e"
ESC = "\x1b"
HUGE = "A" * 1_000_000
EVIL_OP = f"model/{RLO}evil{ESC}[31m"             # a graph op on a worker thread (no whitespace)
EVIL_EVENTS = [f"rlo{RLO}gnp.exe", f"esc{ESC}]0;pwned\x07", "line1\nline2", "[bold]markup[/bold]",
               "bell\x07nul\x00del\x7fc1\x9bisolate\u2066zw\u200b", HUGE]
RAW = (RLO, ESC, "\x07", "\x00", "\x7f", "\x9b", "\u2066", "\u200b")


def evil_space(step_us: float) -> Space:
    sp = Space()
    sp.task_environment()
    h = sp.host()
    main = h.line("python")
    worker = h.line("tf_Compute/1")
    for i in range(4):
        t0 = i * step_us
        main.event("train", t0, step_us, step_num=i + 1, _r=1)
        for k, name in enumerate(EVIL_EVENTS):     # events no rule places: the "other" table
            main.event(name, t0 + 1 + 2 * k, 1)
        main.event("FunctionRun", t0 + 20, 10)
        worker.event(f"{EVIL_OP}:MatMul", t0 + 21, 8)
    return sp


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    logdir = tmp_path_factory.mktemp("evil")
    evil_space(50).write(session_path(logdir, run=f"a{RLO}{ESC}[2J", host=f"h{RLO}ost"))
    evil_space(60).write(session_path(logdir, run="b", host="plain"))
    return traceinsight.load(logdir, use_cache=False)


def assert_clean(out: str) -> None:
    for c in RAW:
        assert c not in out, f"raw {c!r} in the output"
    assert HUGE not in out and "A" * 1000 not in out
    assert "(1,000,000 characters)" in out           # the huge name is cut, with its length


def test_the_run_holds_the_evil_names(run):
    """The model keeps trace strings as they are (the JSON report and the API give them back)."""
    names = set()
    for m in run.modes.values():
        names |= set(m.other["name"])
    assert set(EVIL_EVENTS) <= names
    assert any(EVIL_OP in op for m in run.modes.values() for op in m.ops["op"])


def test_safe_by_hand():
    assert present.safe(f"a{RLO}b") == "a\\u202eb"
    assert present.safe(f"{ESC}[31mred") == "\\x1b[31mred"
    assert present.safe("a\nb\tc\rd") == "a\\nb\\tc\\rd"
    assert present.safe("x\ny", newlines=True) == "x\ny"
    assert present.safe("x\x07\ny", newlines=True) == "x\\x07\ny"
    assert present.safe("ü 日本 🙂 back\\slash") == "ü 日本 🙂 back\\slash"   # only the unsafe ones
    assert present.safe(HUGE) == "A" * present.MAX_NAME + "… (1,000,000 characters)"
    assert present.safe("B" * 10, 4) == "BBBB… (10 characters)"
    # escapes that make a string longer than its limit are cut whole, never half an escape
    assert present.safe(ESC * 10, 6) == "\\x1b… (10 characters)"
    assert present.safe(None) == ""
    # prose quoting a huge name: the word is cut with its own length, the sentence kept
    assert present.safe("ops: " + "B" * 300 + " and more", 4000) == \
        "ops: " + "B" * present.MAX_NAME + "… (300 characters) and more"


def test_markdown(run):
    from traceinsight.report import render
    md = render(run, "md")
    assert_clean(md)
    assert "`model/\\u202eevil\\x1b[31m`" in md          # a code span shows it literally
    rows = [line for line in md.splitlines() if "line1" in line]
    assert rows and all(line.startswith("| ") and "`line1\\nline2`" in line for line in rows), rows
    assert "`[bold]markup[/bold]`" in md
    assert len(md) <= 65_536


def test_html(run):
    from traceinsight.report import render
    page = render(run, "html")
    assert_clean(page)
    assert "\\u202e" in page and "\\x1b" in page
    assert "<td><code>line1\\nline2</code></td>" in page
    assert max(len(line) for line in page.splitlines()) < 20_000   # no 1 MB line


def test_json_keeps_the_names_escaped_by_json(run):
    """JSON is data: the names are kept whole (JSON's own escaping makes them inert)."""
    from traceinsight.report import render
    out = render(run, "json")
    assert ESC not in out and RLO not in out       # json.dumps escapes them (ensure_ascii)
    doc = json.loads(out)
    names = {o["name"] for m in doc["modes"] for o in m["other"]}
    assert set(EVIL_EVENTS) <= names


def test_diff_text_and_markdown(run):
    from traceinsight.report import render_diff
    from traceinsight.report.diff import diff_data
    a, b = run.modes.values()
    data = diff_data(run, run, [(a, b)])
    for fmt in ("text", "md", "html"):
        out = render_diff(data, fmt)
        for c in RAW:
            assert c not in out, (fmt, c)
        assert "a\\u202e\\x1b[2J" in out, fmt


def test_analyze_tables(run):
    from traceinsight.report import terminal
    from traceinsight.report.options import TerminalOptions
    buf = io.StringIO()
    terminal.show(run, TerminalOptions(top=20), Console(file=buf, width=100, color_system=None))
    out = buf.getvalue()
    assert_clean(out)
    assert "[bold]markup[/bold]" in re.sub(r"\s*│\s*", "", out.replace("\n", ""))  # not markup


def test_viewer(run):
    from textual.widgets import TabbedContent

    from traceinsight.tui import get_app
    from traceinsight.tui.frame_table import FrameTable
    from traceinsight.tui.mode import ModeScreen

    from test_tui import screen_text
    from tui_runs import compared, settle

    async def go():
        app = get_app(run)
        async with app.run_test(size=(160, 50)) as pilot:
            await settle(pilot)
            texts = [screen_text(app)]
            await pilot.press("enter")
            assert isinstance(app.screen, ModeScreen)
            for tab in ("tab-categories", "tab-ops"):
                app.screen.query_one(TabbedContent).active = tab
                await pilot.pause(0.2)
                texts.append(screen_text(app))
            for table in app.screen.query(FrameTable):
                for row in range(table.table.row_count):
                    texts.append(" ".join(str(c) for c in table.table.get_row_at(row)))
            await pilot.press("c")
            await compared(pilot)
            texts.append(screen_text(app))
            return "\n".join(texts)

    out = asyncio.run(go())
    for c in RAW:
        assert c not in out, c
    assert "a\\u202e\\x1b[2J" in out                   # the mode name
    assert "model/\\u202eevil\\x1b[31m" in out          # the op, in the ops table
    assert "line1\\nline2" in out                        # the event no rule places, on one line


def test_skipped_modes_are_named_in_the_headline():
    """A sample asks for 4 modes, one needs tf_keras and was skipped: '3 of 5 modes measured'
    (one failed too), naming the skipped one and why."""
    import dataclasses

    from traceinsight.report.data import report_data
    from traceinsight.testing import sample_run

    run = sample_run()
    run = dataclasses.replace(run, manifest={**run.manifest,
                                             "skipped_modes": {"tf1:predict_on_batch": "needs tf_keras"}})
    summary = report_data(run)["summary"]
    assert "3 of 5 modes measured (skipped: tf1:predict_on_batch (needs tf_keras))" in summary


def test_safe_leaves_a_printable_string_as_it_is_and_escapes_the_rest():
    """``safe``'s shortcut for a printable string agrees with the escaping it skips: every
    character ``_UNSAFE`` escapes is unprintable, so a printable string has none to escape."""
    import re
    import sys
    match = re.compile(present._UNSAFE).match
    unsafe = [chr(c) for c in range(sys.maxunicode + 1) if match(chr(c))]
    assert unsafe and not any(c.isprintable() for c in unsafe)
    for s in ("plain", "ü 日本 🙂 back\\slash", "[bold]x[/bold]", "", "a" * present.MAX_NAME):
        assert present.safe(s) == s and present.safe(s, None) == s
    for s in (f"a{RLO}b", "a\nb", "a" * (present.MAX_NAME + 1), "\u2028"):
        assert present.safe(s) != s
