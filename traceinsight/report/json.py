"""JSON: the report document as is (everything the TUI shows), versioned by ``schema_version``.

Schema: ``traceinsight/schemas/report.schema.json`` (``load_schema()``); tests validate against it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from traceinsight import present
from traceinsight.report.document import ReportDocument
from traceinsight.report.options import DEFAULTS, REPORT_DEFAULTS, RenderOptions, ReportOptions

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schemas" / "report.schema.json"


def dumps(doc: Mapping[str, Any]) -> str:
    """JSON text (UTF-8, readable); names are kept whole, and the characters that would act on a
    terminal or turn text around (C1 controls, bidi and invisible format characters; json escapes
    C0 itself) are written as ``\\uXXXX`` escapes, so the document is the same data, inert when
    printed."""
    return present.json_escape(json.dumps(doc, indent=1, ensure_ascii=False, allow_nan=False)) + "\n"


def write(document: ReportDocument, options: ReportOptions = REPORT_DEFAULTS) -> str:
    return dumps(document.data)


def render_diff(diff: dict, options: RenderOptions = DEFAULTS) -> str:
    return dumps(diff)


def load_schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
