"""Terminal tables of an analysed run, for ``traceinsight analyze``: ``render(run,
TerminalOptions(top, modes))`` gives the rich renderables (tables, rules, lines), ``show`` prints
them on a console.

Figures are formatted by ``traceinsight.present``; every string from a trace (op, function, file,
mode names, errors, notes) goes through ``present.safe`` and into a rich ``Text`` (never parsed as
markup), so escape codes, bidi controls and brackets in names reach the terminal as visible text.
Tables come from ``present.rich_table``, printed by ``present.print_table``: on a terminal the name
columns fold, never a median; piped, every table at its natural width (nothing folded or cut).

Piped or redirected output (no colour, no folding) is what rich would print, written here without
importing rich (``_plain``): rich's import and layout were most of a small ``analyze``'s start-up.
Whatever that writer cannot lay out exactly as rich does (a character rich measures otherwise, a
multi-host table, a terminal, forced colour) goes through rich as before;
tests/test_terminal_plain.py holds the two to the same bytes.

It reads the run's tables in their light form (``ModeResult.table``, ``Run.table("summary")``), so
``traceinsight analyze`` never imports pandas.
"""

from __future__ import annotations

import builtins
import os
import re
import sys
from typing import TYPE_CHECKING, Any, Sequence, TextIO

import numpy as np

from traceinsight import present
from traceinsight.model import CATEGORIES, CompileKind, Run
from traceinsight.report.options import TERMINAL_DEFAULTS, TerminalOptions

if TYPE_CHECKING:
    from rich.console import Console

# ---- what analyze prints, without rich -------------------------------------------------------
# A cell or a line is a str, or a tuple of (text, style or None) parts (a styled line); a table is
# _TableBlock, a mode's rule _RuleBlock; anything else is a rich renderable made elsewhere.

Parts = tuple[tuple[str, "str | None"], ...]


class _TableBlock:
    __slots__ = ("title", "columns", "rows")

    def __init__(self, title: str, columns: Sequence[tuple[str, bool]],
                 rows: list[list[Any]]) -> None:
        self.title, self.columns, self.rows = title, list(columns), rows


class _RuleBlock:
    __slots__ = ("title",)

    def __init__(self, title: str) -> None:
        self.title = title


class _LineBlock:
    __slots__ = ("parts",)

    def __init__(self, *parts: tuple[str, str | None]) -> None:
        self.parts: Parts = parts


def _plain_text(cell: Any) -> str:
    return cell if isinstance(cell, str) else "".join(t for t, _ in cell)


def _spec_rows(cols: Sequence[present.ColumnSpec], records: list[dict]) -> list[list[Any]]:
    """A per-mode table's cells by the column specs every renderer shares (``present``)."""
    return [[c.format(c.value(r)) if c.format is not None
             else present.safe(c.value(r), 2000 if c.text else present.MAX_NAME)
             for c in cols] for r in records]


def _blocks(run: Run, options: TerminalOptions) -> list[Any]:
    """What ``traceinsight analyze`` prints, in order: the modes' summary, the category medians,
    the hosts of multi-host sessions, then each mode's rule, step line, notes and tables (the
    first ``top`` rows)."""
    top, modes = options.top, options.modes
    out: list[Any] = []
    ms = present.ms
    safe = present.safe
    wanted = [m for m in run.modes.values() if modes is None or m.name in modes]
    summary = {r["mode"]: r for r in run.table("summary").records()}

    rows: list[list[Any]] = []
    for m in wanted:
        if not m.ok:
            rows.append([safe(m.name), "", "", "", "",
                         ((safe(m.status), "red"), (": ", None), (safe(m.error or ""), None))])
            continue
        s = summary[m.name]
        n = int(s["n"]) if present.is_num(s["n"]) else 0
        rows.append([safe(m.name), ms(s["median_ms"]), present.ms_range(s["p25_ms"], s["p75_ms"]),
                     present.ratio_ci(s["ratio"], s["ratio_lo"], s["ratio_hi"]),
                     ms(s["first_step_ms"]), f"ok, {n} timed steps"])
    out.append(_TableBlock(f"{safe(run.name)}: ms per step",
                           [("mode", False), ("median", True), ("IQR", True),
                            ("×fastest [95% CI]", True), ("first step", True),
                            ("status / steps", False)], rows))
    for m in wanted:   # why a ratio has no interval or does not count (timed apart, ...)
        note = summary[m.name]["ratio_note"] if m.ok else None
        if isinstance(note, str) and note:
            out.append(_LineBlock((f"{safe(m.name)} × fastest: {note}", "dim")))

    rows = []
    for m in wanted:
        if m.ok:
            # the split every page draws: means that add up to the step (the report's and the
            # viewer's first table), not per-category medians, which add up to nothing
            cats = m.category_means()
            rows.append([safe(m.name), *[ms(cats[k]) for k in CATEGORIES], ms(m.breakdown_ms)])
    out.append(_TableBlock("where a steady step's time goes (mean ms per step, adding up to the "
                           "step; each mode's 'breakdown:' line says how its split was made)",
                           [("mode", False)] + [(c, True) for c in CATEGORIES] + [("step", True)],
                           rows))

    names = {m.name for m in wanted}
    for group in run.host_groups():     # multi-host profile sessions: the hosts side by side
        if names & {h.mode for h in group.hosts}:
            from traceinsight.report.hosts_terminal import renderables
            out += renderables(group, top)

    for m in wanted:
        if not m.ok:
            continue
        out.append(_RuleBlock(safe(m.name)))
        first = ""
        split = m.first_step
        if split is not None:
            derived = m.compile_estimate is not None and m.compile_estimate.kind is CompileKind.DERIVED
            parts = ", ".join(f"{k}{' (derived)' if derived and k == 'compile' else ''} {ms(v)}"
                              for k, v in split.items() if v > 0.0005)
            first = f", first step apart: {ms(np.nansum(list(split.values())))} ms ({parts})"
        out.append(_LineBlock((f"steps: {safe(m.step_rule, 2000)}; {m.n_steady} steady "
                               f"step(s){first}", None)))
        c = m.correction
        if c is not None and m.host_events_recorded:
            out.append(_LineBlock((f"breakdown: traced mean step {ms(c.traced_ms)} ms"
                                   + (f" → untraced median {ms(c.untraced_ms)} ms"
                                      if np.isfinite(c.untraced_ms) else "")
                                   + f"; {c.method}", None)))
        for note in m.notes:
            out.append(_LineBlock(("note:", "yellow"), (" ", None), (safe(note, None), None)))
        for title, name, cols in (("top ops (traced ms per steady step)", "ops", present.OP_COLUMNS),
                                  (present.STAGE_TITLE, "stages", present.STAGE_COLUMNS),
                                  ("tf.function calls and retraces", "retraces",
                                   present.RETRACE_COLUMNS),
                                  ("Python hotspots (ms per steady step)", "hotspots",
                                   present.HOTSPOT_COLUMNS),
                                  ("events without a rule (other)", "other", present.OTHER_COLUMNS)):
            table = m.table(name)
            if not table.empty:
                out.append(_TableBlock(title, [(c.label, c.numeric) for c in cols],
                                       _spec_rows(cols, table.records(top))))
    return out


# ---- as rich renderables (a terminal, a console given) ---------------------------------------

def _rich_text(cell: Any) -> Any:
    from rich.text import Text
    if isinstance(cell, str):
        return Text(cell)
    return Text.assemble(*[(t, s) if s else t for t, s in cell])


def _to_rich(block: Any) -> Any:
    from rich.text import Text
    if isinstance(block, _TableBlock):
        return present.rich_table(block.title, block.columns,
                                  [[_rich_text(c) for c in r] for r in block.rows])
    if isinstance(block, _RuleBlock):
        from rich.rule import Rule
        return Rule(Text(block.title, style="bold"))
    if isinstance(block, _LineBlock):
        if len(block.parts) == 1:
            text, style = block.parts[0]
            return Text(text, style=style or "")
        return _rich_text(block.parts)
    return block


def render(run: Run, options: TerminalOptions = TERMINAL_DEFAULTS) -> list[Any]:
    """What ``traceinsight analyze`` prints, as rich renderables in order: the modes' summary,
    the category medians, the hosts of multi-host sessions, then each mode's rule, step line,
    notes and tables (the first ``top`` rows)."""
    return [_to_rich(b) for b in _blocks(run, options)]


def show(run: Run, options: TerminalOptions = TERMINAL_DEFAULTS,
         console: Console | None = None) -> None:
    """Print ``render(run, options)`` on ``console`` (default: stdout): tables by
    ``present.print_table`` (folded on a terminal, whole when piped), the rest as they are.
    Without a console, output that is not a terminal is written as rich would print it, without
    rich (``_plain``)."""
    blocks = _blocks(run, options)
    if console is None:
        width = plain_width(sys.stdout)
        text = None if width is None else _plain(blocks, width)
        if text is not None:
            sys.stdout.write(text)
            sys.stdout.flush()
            return
        from rich.console import Console
        # no emoji codes: every string from a trace is Text already, and rich's emoji table alone
        # costs a noticeable share of analyze's start-up
        console = Console(emoji=False)
    from rich.table import Table
    for b in blocks:
        r = _to_rich(b)
        if isinstance(r, Table):
            present.print_table(console, r)
        else:
            console.print(r)


# ---- rich's layout of piped output, without rich ---------------------------------------------

# characters rich measures as one cell without its unicode tables (rich.cells' own fast set),
# and the few more analyze prints (tests/test_terminal_plain.py checks each against rich)
_ONE_CELL = frozenset(
    [chr(c) for lo, hi in ((0x20, 0x7E), (0xA0, 0xAC), (0xAE, 0x2FF), (0x370, 0x482),
                           (0x2500, 0x25FC), (0x2800, 0x28FF)) for c in range(lo, hi + 1)]
    + list("–—‘’“”…→←↑↓≈≠≤≥±·•′″∞√∑"))
_WORD = re.compile(r"\s*\S+\s*")
_TRAILING_SPACE = re.compile(r"\s+$")
# what rich's markup would read as a tag in a header (a plain string, parsed as markup)
_MARKUP_TAG = re.compile(r"\[[a-z#/@]")


def plain_width(out: TextIO | None) -> int | None:
    """The width rich's ``Console()`` would lay out ``out`` at, where it would print no escape
    code (not a terminal, colour not forced, UTF-8); None where rich must do the printing."""
    if out is None or sys.platform == "win32" or hasattr(builtins, "get_ipython") \
            or getattr(sys.stdin, "__module__", "").startswith("idlelib"):
        return None
    env = os.environ
    tty = env.get("TTY_COMPATIBLE", "")
    if tty == "1" or (tty != "0" and env.get("FORCE_COLOR") not in (None, "")):
        return None
    if tty != "0" and env.get("FORCE_COLOR") is None:
        try:
            if out.isatty():
                return None
        except (AttributeError, ValueError):
            pass
    if not (getattr(out, "encoding", None) or "utf-8").lower().startswith("utf"):
        return None
    columns = env.get("COLUMNS")
    width: int | None = None
    if columns is not None and columns.isdigit():
        width = int(columns)
    else:
        for fd in (0, 1, 2):
            try:
                width = os.get_terminal_size(fd)[0]
                break
            except (AttributeError, ValueError, OSError):
                continue
        width = width or 80
    return width if width >= 20 else None


def _one_cell(s: str) -> bool:
    return s.isascii() and s.isprintable() or _ONE_CELL.issuperset(s)


def _divide(text: str, width: int) -> list[int]:
    """rich's ``_wrap.divide_line`` (fold on), every character one cell."""
    breaks: list[int] = []
    offset = 0
    for m in _WORD.finditer(text):
        start, word = m.start(), m.group(0)
        length = len(word.rstrip())
        if width - offset >= length:
            offset += len(word)
        elif length > width:
            chunks = [word[i:i + width] for i in range(0, len(word), width)]
            for i, chunk in enumerate(chunks):
                if start:
                    breaks.append(start)
                if i == len(chunks) - 1:
                    offset = len(chunk)
                else:
                    start += len(chunk)
        elif offset and start:
            breaks.append(start)
            offset = len(word)
    return breaks


def _wrap(text: str, width: int, pad: bool) -> list[str]:
    """rich's ``Text.wrap`` of a one-cell-per-character line: word wrap at ``width`` (long words
    folded), trailing space kept up to the width, lines padded to it when ``pad`` (justify
    left)."""
    cuts = [0, *_divide(text, width), len(text)]
    lines = []
    for a, b in zip(cuts, cuts[1:]):
        line = text[a:b]
        if len(line) > width:
            m = _TRAILING_SPACE.search(line)
            if m:
                line = line[:len(line) - min(len(m.group(0)), len(line) - width)]
        line = line[:width]
        lines.append(line.ljust(width) if pad else line)
    return lines


def _plain_table(block: _TableBlock) -> list[str] | None:
    """rich's layout of ``present.rich_table`` at its natural width (``present.print_table``
    piped): box SIMPLE_HEAD with its edges, one cell of padding between columns and none at the
    edges, numbers right-aligned; the title word-wrapped to the table's width."""
    headers = [h for h, _ in block.columns]
    rows = [[_plain_text(c) for c in r] for r in block.rows]
    if not headers or any(_MARKUP_TAG.search(h) or not _one_cell(h) for h in headers) \
            or not _one_cell(block.title) or any(not _one_cell(c) for r in rows for c in r):
        return None
    last = len(headers) - 1
    widths = []      # each column's content width
    for i, header in enumerate(headers):
        pad = (i > 0) + (i < last)
        widths.append(max(1, max([len(header)] + [len(r[i]) for r in rows]) + pad) - pad)
    table_width = sum(widths) + 2 * last + 2 + last     # padding between, edges, dividers

    def line(cells: list[str]) -> str:
        out = []
        for (_, numeric), w, c in zip(block.columns, widths, cells):
            out.append(c.rstrip().rjust(w) if numeric else c.ljust(w))
        return " " + "   ".join(out) + " "

    lines = _wrap(block.title, table_width, pad=True) if block.title else []
    blank = " " * table_width
    lines += [blank, line(headers), " " + "─" * (table_width - 2) + " "]
    lines += [line(r) for r in rows]
    lines.append(blank)
    return lines


def _plain(blocks: list[Any], width: int) -> str | None:
    """The blocks as rich prints them piped at ``width`` columns (no colour), or None where one of
    them is not what this writer lays out exactly (rich prints them then)."""
    lines: list[str] = []
    for b in blocks:
        if isinstance(b, _TableBlock):
            table = _plain_table(b)
            if table is None:
                return None
            lines += table
        elif isinstance(b, _RuleBlock):
            title = b.title
            if not title or len(title) > width - 4 or not _one_cell(title):
                return None
            side = (width - len(title)) // 2
            lines.append(("─" * (side - 1) + " " + title + " " + "─" * (side + 1))[:width]
                         .ljust(width))
        elif isinstance(b, _LineBlock):
            text = _plain_text(b.parts)
            if not _one_cell(text):
                return None
            lines += _wrap(text, width, pad=False)
        else:
            return None
    return "".join(x + "\n" for x in lines)
