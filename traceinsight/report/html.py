"""One self-contained HTML file: inline CSS and SVG, no script, nothing fetched. It writes the
report's and the diff's blocks (``sections.py``) as HTML elements, one per line.

Every string that comes from a trace or a run (op, function and mode names, errors, environment,
commands) goes through ``esc``: ``present.safe`` (control and bidi characters as visible escapes,
long names cut) then ``html.escape(..., quote=True)``; the only markup is ours.
"""

from __future__ import annotations

import html
from typing import Any, Sequence

from traceinsight import present
from traceinsight.report import prose
from traceinsight.report.document import ModeEntry, ReportDocument
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
    column_table,
    diff_page,
    report_page,
)

TOP_ROWS = 25

MAX_TEXT = 4000       # characters of one paragraph (evidence quotes op names)

CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2em auto;max-width:1100px;
 padding:0 1em;color:#1f2328}
h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #d0d7de;padding-bottom:.2em;margin-top:1.6em}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #d0d7de;padding:2px 8px;
 vertical-align:top}th{background:#f6f8fa;text-align:left}td.n{text-align:right;
 font-variant-numeric:tabular-nums}code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;
 font-size:.92em}pre{background:#f6f8fa;padding:.6em;overflow:auto}.summary{font-weight:600}
.finding{border-left:4px solid #d0d7de;padding:.1em 1em;margin:1em 0}.high{border-color:#cf222e}
.medium{border-color:#bf8700}.low{border-color:#1a7f37}.info{border-color:#8c959f}.muted{color:#57606a}
details{margin:.6em 0}summary{cursor:pointer;font-weight:600}.sig{font-weight:600}
"""


def esc(s: Any, limit: int | None = MAX_TEXT, newlines: bool = False) -> str:
    return html.escape(present.safe(s, limit, newlines=newlines), quote=True)




def table(header: Sequence[str], rows: Sequence[Sequence[str]], numeric: str = "",
          cap: int | None = None, what: str = "rows", total: int | None = None) -> str:
    """Cells are already-escaped HTML; ``numeric`` marks right-aligned columns with 'r'
    (``total``: how many rows the table has, where ``rows`` holds only the first ones)."""
    shown = rows if cap is None else rows[:cap]
    total = len(rows) if total is None else total
    out = ["<table><thead><tr>" + "".join(f"<th>{h}</th>" for h in header) + "</tr></thead><tbody>"]
    for r in shown:
        out.append("<tr>" + "".join(
            f"<td class=\"n\">{c}</td>" if i < len(numeric) and numeric[i] == "r" else f"<td>{c}</td>"
            for i, c in enumerate(r)) + "</tr>")
    out.append("</tbody></table>")
    if len(shown) < total:
        out.append(f"<p class=\"muted\">{total - len(shown)} more {esc(what)} not shown "
                   f"(the JSON report has all).</p>")
    return "\n".join(out)



def code(s: Any) -> str:
    return f"<code>{esc(s, present.MAX_NAME)}</code>"


def pre(s: Any) -> str:
    return f"<pre><code>{esc(s, None, newlines=True)}</code></pre>"


# ------------------------------------------------------------------------------------------ blocks

def inline(parts: Text) -> str:
    out = []
    for p in parts:
        if isinstance(p, Code):
            out.append(code(p.value))
        elif isinstance(p, Words):
            out.append(esc(p.value))
        elif isinstance(p, Strong):
            out.append(f"<b>{inline(p.parts)}</b>")
        elif isinstance(p, Flag):
            out.append(f"<span class=\"sig\">{esc(p.value)}</span>")
        elif isinstance(p, Prose):
            out.append(p.write(code, esc))
        else:
            out.append(esc(p))
    return "".join(out)


def _note(parts: Text) -> str:
    """A muted note: names as plain text, the whole sentence escaped."""
    return "".join(esc(p.write(present.safe if p.names == "code" else str, str))
                   if isinstance(p, Prose) else inline((p,)) for p in parts)


def _plain(parts: Text) -> str:
    return "".join(p.value if isinstance(p, (Words, Code)) else str(p) for p in parts)


def elements(b: Any) -> list[str]:
    """A block as HTML elements (the page puts one per line)."""
    if isinstance(b, Para):
        if b.role == "note":
            return [f"<p class=\"muted\">{_note(b.text)}</p>"]
        return [f"<p class=\"summary\">{inline(b.text)}</p>" if b.role == "summary"
                else f"<p>{inline(b.text)}</p>"]
    if isinstance(b, Items):
        items = (b.items.write(code, esc) if isinstance(b.items, ProseList)
                 else [inline(i) for i in b.items])
        return ["<ul>" + "".join(f"<li>{x}</li>" for x in items) + "</ul>"]
    if isinstance(b, Table):
        cap = TOP_ROWS if b.what else None
        if isinstance(b.rows, ProseList):
            return [table([inline((h,)) for h in b.header], b.rows.write(code, esc), b.align, cap,
                          b.what or "rows")]
        # only the rows shown are written (a long table's rows are made when read)
        shown = b.rows if cap is None else b.rows[:cap]
        return [table([inline((h,)) for h in b.header], [[inline((c,)) for c in r] for r in shown],
                      b.align, cap, b.what or "rows", len(b.rows))]
    if isinstance(b, CodeBlock):
        return [pre(b.text)]
    if isinstance(b, Picture):
        return picture(b)
    if isinstance(b, Group):
        head = (code(b.mode) if b.mode is not None else inline(b.name)) + inline(b.title)
        return [f"<h3>{head}</h3>"] + [e for x in b.blocks for e in elements(x)]
    if isinstance(b, Details):
        return [f"<details><summary>{inline(b.summary)}</summary>"
                + "\n".join(e for x in b.blocks for e in elements(x)) + "</details>"]
    if isinstance(b, Card):
        return [f'<div class="finding {esc(b.style)}"><h3>{inline(b.title)}</h3>'
                + "".join(e for x in b.blocks for e in elements(x)) + "</div>"]
    if isinstance(b, Section):
        head = f"<h{b.level}>{inline(b.title)}</h{b.level}>"
        body, drawn = [], False
        for x in b.blocks:
            els = elements(x)
            body += els
            drawn = drawn or (isinstance(x, Picture) and any(els))
        if b.svg and not drawn:     # a section of pictures, none drawn
            return []
        return [head, "\n".join(body)] if b.collapsed else [head, *body]
    raise TypeError(f"no HTML for {type(b).__name__}")


def picture(p: Picture) -> list[str]:
    """Inline SVG (``report/svg.py``): the category bars, each mode's steps over the run, a profile
    session's hosts; the Mermaid chart and the SVG files beside a markdown report are not drawn."""
    from traceinsight.report import svg
    if p.kind == "bars":
        return [svg.category_bars(p.data)]
    if p.kind == "host_skew":
        return [svg.host_skew(p.data)]
    if p.kind == "steps":
        modes, marks = p.data
        return [c for c in (svg.step_chart(m, marks[m["name"]]) if m["name"] in marks else ""
                            for m in modes) if c]
    return []


def modes_table(modes: Sequence[ModeEntry]) -> str:
    return elements(column_table(prose.MODE_COLUMNS, modes))[0]


def overview(document: ReportDocument) -> str:
    """The top of the report, for a notebook cell above the whole report's frame: the summary,
    the modes table and the category bars."""
    doc = document.data
    return "\n".join([f"<p><b>{esc(doc['summary'])}</b></p>", modes_table(doc["modes"]),
                      *picture(Picture("bars", doc["modes"]))])


def _page(title: str, body: list[str]) -> str:
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{esc(title, present.MAX_NAME)}</title><style>{CSS}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")


def render_page(page: Page) -> str:
    body = [f"<h1>{inline(page.title)}</h1>"]
    body += [e for p in page.lead for e in elements(p)]
    body += [e for s in page.sections for e in elements(s)]
    return _page(_plain(page.title), body)


def render_document(document: ReportDocument) -> str:
    return render_page(report_page(document))


def write(document: ReportDocument, options: ReportOptions = REPORT_DEFAULTS) -> str:
    return render_document(document)



def render_diff(diff: dict, options: RenderOptions = DEFAULTS) -> str:
    return render_page(diff_page(diff))
