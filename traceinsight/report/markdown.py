"""GitHub-flavoured markdown that pastes into a bug issue: the report's blocks (``sections.py``:
the modes, where the time goes, the findings, collapsible details, the environment and the
reproducing command) written as markdown, and the diff's.

GitHub refuses issue bodies over 65,536 characters: long tables are cut, whole rows at a time, with a
note saying how many rows were left out (the JSON report keeps them all).
"""

from __future__ import annotations

import re
from typing import Any, Sequence

from traceinsight import present
from traceinsight.report.document import ReportDocument
from traceinsight.report.options import DEFAULTS, REPORT_DEFAULTS, RenderOptions, ReportOptions
from traceinsight.report.sections import (
    Card,
    Code,
    CodeBlock,
    Details,
    Flag,
    Group,
    Items,
    Page,
    Para,
    Picture,
    Prose,
    ProseList,
    Section,
    Strong,
    Table,
    Text,
    Words,
    diff_page,
    report_page,
)

GITHUB_LIMIT = 65_536
MAX_CELL = present.MAX_NAME          # characters of one table cell (op names can be huge)
MAX_TEXT = 4000                      # characters of one paragraph (evidence quotes op names)
ROW_CAPS = (20, 10, 5, 3, 1, 0)      # rows per detail table, tried in order until the report fits

_MD_SPECIAL = re.compile(r"([\\`*_\[\]|#~!])")
_TICKS = re.compile(r"`+")


# ---------------------------------------------------------------------------------------- escaping

def text(s: Any, limit: int | None = MAX_TEXT) -> str:
    """Plain text from a trace or run, safe in markdown prose and table cells (control and bidi
    characters shown as escapes, a newline as ``\\n``, cut at ``limit`` characters)."""
    s = present.safe(s, limit)
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MD_SPECIAL.sub(r"\\\1", s)


def code(s: Any, max_len: int = MAX_CELL, table: bool = True) -> str:
    """An inline code span holding any string (backticks, pipes and newlines included)."""
    s = present.safe(s, max_len)
    if not s:
        return ""       # an empty cell: a code span of spaces shows as an empty box
    if table:
        s = s.replace("|", "\\|")
    ticks = max((len(t) for t in _TICKS.findall(s)), default=0) + 1 if "`" in s else 1
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return "`" * ticks + pad + s + pad + "`" * ticks


def fence(body: str, lang: str = "") -> str:
    body = present.safe(body, None, newlines=True)
    ticks = max(3, max((len(t) for t in re.findall(r"`{3,}", body)), default=0) + 1)
    return f"{'`' * ticks}{lang}\n{body.rstrip()}\n{'`' * ticks}"



def table(header: Sequence[str], rows: Sequence[Sequence[str]], align: str = "",
          cap: int | None = None, what: str = "rows", total: int | None = None) -> list[str]:
    """A GFM table; with ``cap``, only the first rows and a note on how many were left out
    (``total``: how many rows the table has, where ``rows`` holds only the first ones)."""
    align = align or "l" * len(header)
    sep = ["---:" if a == "r" else "---" for a in align]
    shown = rows if cap is None else rows[:cap]
    total = len(rows) if total is None else total
    out = ["| " + " | ".join(header) + " |", "| " + " | ".join(sep) + " |"]
    out += ["| " + " | ".join(r) + " |" for r in shown]
    if len(shown) < total:
        out += ["", f"_{total - len(shown)} more {what} not shown (the JSON report has all)._"]
    return out


# ------------------------------------------------------------------------------------------ blocks

def inline(parts: Text, table: bool = False) -> str:
    """Inline parts in markdown (``table``: in a table cell, where a code span escapes pipes)."""
    out = []
    for p in parts:
        if isinstance(p, Code):
            out.append(code(p.value, table=table))
        elif isinstance(p, Words):
            out.append(p.value)
        elif isinstance(p, Strong):
            out.append("**" + inline(p.parts, table) + "**")
        elif isinstance(p, Flag):
            out.append(p.value)
        elif isinstance(p, Prose):
            out.append(p.write(_name if p.names == "code" else text, text))
        else:
            out.append(text(p))
    return "".join(out)


def _cell(c: Any) -> str:
    """``inline((c,), table=True)``: a table cell, its two commonest kinds first."""
    t = type(c)
    if t is Words:
        return c.value
    if t is Code:
        return code(c.value, table=True)
    return inline((c,), table=True)


def _name(n: Any) -> str:
    """A mode's name in prose: a code span."""
    return code(n, table=False)


class _Writer:
    """The blocks of ``sections`` as markdown lines; ``cap`` rows per table that may be cut,
    ``figures`` (alt text, relative path) of SVG files beside the report."""

    def __init__(self, cap: int | None, figures: Sequence[tuple[str, str]] = ()):
        self.cap, self.figures = cap, figures

    def join(self, blocks: Sequence[Any]) -> list[str]:
        """Blocks one blank line apart (none added where a block brings its own)."""
        out: list[str] = []
        for b in blocks:
            lines = self.lines(b)
            if lines and out and out[-1] and lines[0]:
                out.append("")
            out += lines
        return out

    def lines(self, b: Any) -> list[str]:
        if isinstance(b, Para):
            return [f"**{inline(b.text)}**" if b.role == "summary" else inline(b.text)]
        if isinstance(b, Items):
            items = (b.items.write(_name, text) if isinstance(b.items, ProseList)
                     else [inline(i) for i in b.items])
            return [f"{b.marker} {i}" for i in items]
        if isinstance(b, Table):
            cap = self.cap if b.what else None
            if isinstance(b.rows, ProseList):
                return table([inline((h,)) for h in b.header], b.rows.write(code, text), b.align,
                             cap, b.what or "rows")
            # only the rows shown are written (a long table's rows are made when read)
            shown = b.rows if cap is None else b.rows[:cap]
            return table([inline((h,)) for h in b.header],
                         [[_cell(c) for c in r] for r in shown], b.align, cap, b.what or "rows",
                         len(b.rows))
        if isinstance(b, CodeBlock):
            return [fence(b.text, b.lang)]
        if isinstance(b, Picture):
            return self.picture(b)
        if isinstance(b, Group):
            if b.mode is not None:   # a mode's tables
                return [f"**{_name(b.mode)}**{inline(b.title)}", ""] + self.join(b.blocks) + [""]
            return [f"**{inline(b.name)}**{inline(b.title)}", ""] + self.join(b.blocks)
        if isinstance(b, Details):
            return (["<details>", f"<summary>{inline(b.summary)}</summary>", ""] + self.join(b.blocks)
                    + ["", "</details>"])
        if isinstance(b, Card):
            return [f"### {inline(b.title)}", ""] + self.join(b.blocks) + [""]
        if isinstance(b, Section):
            if b.svg:
                return []
            if b.collapsed:     # no heading: the details blocks follow the findings
                return [line for d in b.blocks for line in self.lines(d) + [""]]
            return ["", f"{'#' * b.level} {inline(b.title)}", ""] + self.join(b.blocks)
        raise TypeError(f"no markdown for {type(b).__name__}")

    def picture(self, p: Picture) -> list[str]:
        """The category bars as a Mermaid chart (GitHub draws it where the report is pasted),
        and image links to the SVG files beside the report when it was written to a file."""
        if p.kind == "mermaid":
            from traceinsight.report.svg import mermaid_bars
            return mermaid_bars(p.data)
        if p.kind == "files" and self.figures:
            from urllib.parse import quote
            return ["Pictures (SVG files beside this report):", ""] + [
                f"![{text(alt, MAX_CELL)}]({quote(rel)})" for alt, rel in self.figures]
        return []

    def page(self, page: Page, sections: Sequence[Section]) -> list[str]:
        lines = [f"# {inline(page.title)}"]
        for p in page.lead:
            lines += ["", *self.lines(p)]
        for s in sections:
            lines += self.lines(s)
        return lines + [""]


def _cut_to_limit(lines: list[str], limit: int) -> str:
    """Last resort: drop whole lines from the end (never mid-row) and say so."""
    note = "\n\n_Report cut to fit GitHub's 65,536-character limit; the JSON report has it all._\n"
    out, size = [], len(note)
    for line in lines:
        if size + len(line) + 1 > limit:
            break
        out.append(line)
        size += len(line) + 1
    while out and out[-1].startswith("|"):   # do not leave a table without its end or a half table
        out.pop()
    return "\n".join(out) + note


def render_document(document: ReportDocument, limit: int = GITHUB_LIMIT,
                    figures: Sequence[tuple[str, str]] = ()) -> str:
    """``figures``: (alt text, relative path) of SVG pictures written beside the report. Tables
    that may be cut lose rows (``ROW_CAPS``) until the report fits ``limit``; then the details go,
    then whole lines."""
    page = report_page(document)
    for cap in ROW_CAPS:
        out = "\n".join(_Writer(cap, figures).page(page, page.sections))
        if len(out) <= limit:
            return out
    return _cut_to_limit(_Writer(0, figures).page(page, [s for s in page.sections if not s.droppable]),
                         limit)


def write(document: ReportDocument, options: ReportOptions = REPORT_DEFAULTS) -> str:
    return render_document(document)


# ---------------------------------------------------------------------------------------------- diff

def render_diff(diff: dict, options: RenderOptions = DEFAULTS,
                limit: int = GITHUB_LIMIT) -> str:
    page = diff_page(diff)
    for cap in ROW_CAPS:
        out = "\n".join(_Writer(cap).page(page, page.sections))
        if len(out) <= limit:
            return out
    return _cut_to_limit(_Writer(0).page(page, [s for s in page.sections if not s.droppable]), limit)
