"""A Run in a notebook (``_repr_html_``) and in a plain REPL (``show()``); a mode is shown as a
run of its own (``ModeResult.alone``). ``NOTEBOOK`` is the run's ``display``
(``traceinsight.model.Display``), given by ``traceinsight.load``.

The notebook opens on what a reader looks for first, in the cell itself: the summary, the modes
table and the category bars (``report.html.overview``). The whole HTML report follows: the page,
escaped as one attribute value (``srcdoc``) of a sandboxed iframe, so its stylesheet cannot
restyle the notebook around it and nothing in it runs (the report has no script; the sandbox makes
sure). No file is written and nothing is fetched.
"""

from __future__ import annotations

import sys
from typing import Any

HEIGHT_PX = 640       # the frame scrolls; a full report is far longer than a notebook cell


def frame(page: str, title: str) -> str:
    # imported here: every loaded run holds this module's display, and the html module's import
    # (its entity table) is a noticeable share of a report's start-up
    import html as html_text
    return (f'<iframe title="{html_text.escape(title, quote=True)}" sandbox="" '
            f'style="width:100%;height:{HEIGHT_PX}px;border:1px solid #d0d7de" '
            f'srcdoc="{html_text.escape(page, quote=True)}"></iframe>')


def run_html(run: Any) -> str:
    from traceinsight import present
    from traceinsight.report import html
    from traceinsight.report.data import build
    document = build(run)
    return html.overview(document) + "\n" + frame(html.render_document(document),
                                                   f"traceinsight report: {present.safe(run.name)}")


def _console(file: Any) -> Any:
    from rich.console import Console
    return Console(file=file if file is not None else sys.stdout)


def show_run(run: Any, file: Any = None) -> None:
    from traceinsight.report import terminal
    terminal.show(run, console=_console(file))


class Notebook:
    """``traceinsight.model.Display``: a run (or a mode, as a run of its own) in a notebook and a
    REPL. Given to runs by whoever makes one for a person to look at (``traceinsight.load``)."""

    def html(self, run: Any) -> str:
        return run_html(run)

    def show(self, run: Any, file: Any) -> None:
        show_run(run, file)


NOTEBOOK = Notebook()
