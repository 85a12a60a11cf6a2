"""CSV: the report's summary, one row per mode, for a spreadsheet or a script that collects runs.

The columns are the mode table's figures (median ms/step with its 95 % interval, the ratio to the
fastest mode with its interval, where the mode stands, steps), then the user's step split into
categories: each category's mean ms/step (``<category>_ms``: the profiler's cost taken out, so
they add up to ``step_ms``, the untraced median) and its share of the step (``<category>_share``,
a fraction), as the report's "Where the time goes" table shows them. Every figure is the report
document's own (``report.data``), written as the JSON report writes it (the same rounding); an
empty cell is a figure the document has none of (null in the JSON). A mode that failed has its
status and error and no figures.

Names from traces are made inert as the table exports make them (``present.safe``, no length
limit: control, escape and bidi characters written as visible escapes), and a cell a spreadsheet
would read as a formula (``=``, ``+``, ``-``, ``@`` first) gets a leading apostrophe, the usual
guard; figures are plain numbers.
"""

from __future__ import annotations

import csv
import io
from typing import Any

from traceinsight import present
from traceinsight.model import CATEGORIES
from traceinsight.report.document import ModeEntry, ReportDocument
from traceinsight.report.options import REPORT_DEFAULTS, ReportOptions

# (column, key of the document's mode entry), in the order of the report's mode table
FIGURES = (("median_ms", "median_ms"), ("ci_lo_ms", "ci_lo_ms"), ("ci_hi_ms", "ci_hi_ms"),
           ("ratio", "ratio"), ("ratio_lo", "ratio_lo"), ("ratio_hi", "ratio_hi"),
           ("vs_fastest", "vs_fastest"), ("first_step_ms", "first_step_ms"),
           ("distortion", "distortion"), ("steps", "n"), ("timing_source", "timing_source"),
           ("step_ms", "category_total_ms"))
COLUMNS = (("run", "mode", "status", "error") + tuple(c for c, _ in FIGURES)
           + tuple(f"{c}_ms" for c in CATEGORIES) + tuple(f"{c}_share" for c in CATEGORIES))
_FORMULA = ("=", "+", "-", "@")


def cell(v: Any) -> str:
    """One cell: empty for a missing figure, a number as Python writes it (``repr``: read back
    by ``float`` to the same value), ``true``/``false``, text made inert."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    s = present.safe(v, None)
    return "'" + s if s.startswith(_FORMULA) else s


def row(run: str, m: ModeEntry) -> list[str]:
    ok = m["status"] == "ok"
    means = (m.get("category_means") or {}) if ok else {}
    shares = (m.get("category_shares") or {}) if ok else {}
    # a trace that cannot split host time has no categories (the report says "not recorded")
    split = ok and m.get("host_events_recorded") is not False
    figures = [m.get(key) if ok else None for _, key in FIGURES]
    return ([cell(run), cell(m["name"]), cell(m["status"]), cell(m["error"])]
            + [cell(v) for v in figures]
            + [cell(means.get(c) if split else None) for c in CATEGORIES]
            + [cell(shares.get(c) if split else None) for c in CATEGORIES])


def write(document: ReportDocument, options: ReportOptions = REPORT_DEFAULTS) -> str:
    doc = document.data
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(COLUMNS)
    for m in doc["modes"]:
        w.writerow(row(doc["run"]["name"], m))
    return out.getvalue()
