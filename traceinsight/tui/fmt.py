"""Number formatting and category colours shared by the TUI's widgets.

Colours are mid-tone (Tableau 10) so the stacked bars read on dark and light themes alike.
"""

from __future__ import annotations

import math

from traceinsight.model import CATEGORIES

CATEGORY_COLORS: dict[str, str] = {
    "op": "#4e79a7",
    "dispatch": "#f28e2b",
    "tracing": "#b07aa1",
    "compile": "#e15759",
    "input": "#59a14f",
    "python": "#edc948",
    "other": "#9c9c9c",
}
assert set(CATEGORY_COLORS) == set(CATEGORIES)

MISSING = "—"


def is_num(v) -> bool:
    try:
        return v is not None and math.isfinite(float(v))
    except (TypeError, ValueError):
        return False


def ms(v) -> str:
    """Milliseconds with a precision that fits their size: 0.012, 0.35, 4.61, 85.0, 1234."""
    if not is_num(v):
        return MISSING
    v = float(v)
    a = abs(v)
    if a >= 100:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if a >= 1:
        return f"{v:.2f}"
    if a >= 0.01 or a == 0:
        return f"{v:.2f}" if a >= 0.1 or a == 0 else f"{v:.3f}"
    return f"{v:.1e}"


def signed_ms(v) -> str:
    if not is_num(v):
        return MISSING
    s = ms(v)
    return s if s.startswith("-") else f"+{s}"


def ratio(r, lo=None, hi=None) -> str:
    if not is_num(r):
        return MISSING
    def f(x: float) -> str:
        return f"{x:.0f}" if abs(x) >= 100 else f"{x:.1f}" if abs(x) >= 10 else f"{x:.2f}"
    if is_num(lo) and is_num(hi) and (lo, hi) != (r, r):
        return f"{f(r)}× ({f(lo)}–{f(hi)})"
    return f"{f(r)}×"


def percent(v, signed: bool = False) -> str:
    if not is_num(v):
        return MISSING
    return f"{v * 100:+.0f}%" if signed else f"{v * 100:.0f}%"


def count(v) -> str:
    if not is_num(v):
        return MISSING
    v = float(v)
    return f"{v:.0f}" if v == int(v) else f"{v:.2f}"
