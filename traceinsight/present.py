"""How figures and trace strings are shown: one module for the viewer, markdown, HTML and text.

Every renderer (``traceinsight.tui``, ``traceinsight.report.markdown`` / ``html`` / ``text``,
``traceinsight.report.terminal``) formats numbers with these functions and passes every string that
comes from a trace or a run folder (op, function, file, thread, mode and run names, errors, notes)
through :func:`safe` before its own escaping, so that

* a number prints the same everywhere (0.005 ms is ``0.005`` in the report and in the viewer);
* a category has one colour everywhere;
* a name holding control characters, terminal escape codes or bidi controls (U+202E turns the rest
  of a line around) shows them as visible escapes (``\\x1b``, ``\\u202e``), a newline as ``\\n``
  (so the name stays on its table row), and a huge name is cut with its length.

Pure Python, no third-party imports: importing it costs nothing.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

# Category order and colours. Mid-tone colours (Tableau 10) read on dark and light backgrounds.
CATEGORY_COLORS: dict[str, str] = {
    "op": "#4e79a7",
    "dispatch": "#f28e2b",
    "tracing": "#b07aa1",
    "compile": "#e15759",
    "input": "#59a14f",
    "python": "#edc948",
    "other": "#9c9c9c",
}
# each category's letter, drawn in its bars beside the colour: a monochrome terminal (NO_COLOR,
# a screen reader, a pasted screen) still tells the categories apart
CATEGORY_GLYPHS: dict[str, str] = {
    "op": "o",
    "dispatch": "d",
    "tracing": "t",
    "compile": "c",
    "input": "i",
    "python": "p",
    "other": "x",
}

class DrawnBasis(Enum):
    """How the category figures of some modes were drawn (``drawn_basis``)."""
    UNTRACED = "untraced"    # each mode's split of its untraced median, the profiler's cost out
    TRACED = "traced"        # every one as recorded (no untraced timing), the profiler's cost in
    MIXED = "mixed"          # some of each


def drawn_basis(traced: Sequence[bool]) -> DrawnBasis:
    """How the category figures of some modes were drawn, given for each whether it is drawn as
    traced (``CorrectionKind.TRACED``: no untraced timing, a trace captured without
    traceinsight)."""
    if not any(traced):
        return DrawnBasis.UNTRACED
    return DrawnBasis.TRACED if all(traced) else DrawnBasis.MIXED


MISSING = "–"          # a figure that does not exist (failed mode, no steps)
MAX_NAME = 200         # characters of a trace string shown in a table cell or a line

# ------------------------------------------------------------------------------------ trace strings

# C0 controls, DEL, C1 controls; bidi embeddings / overrides / isolates and marks; zero-width and
# invisible format characters; line and paragraph separators. Everything else (any script, emoji,
# the backslash) is shown as it is. (Patterns, compiled by ``re`` at their first use, once: most
# commands escape nothing, ``safe``'s printable strings never reach them, and compiling these
# classes costs more than half a millisecond of every start.)
_UNSAFE = "[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ufff9-\ufffb]"
# json escapes C0 itself; its layout (newlines, indentation) is C0 and must stay
_UNSAFE_JSON = "[\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ufff9-\ufffb]"
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape_char(m: re.Match) -> str:
    c = m.group(0)
    if c in _NAMED:
        return _NAMED[c]
    o = ord(c)
    return f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}"


_LONG_WORD = rf"\S{{{MAX_NAME + 1},}}"


def _cut_word(m: re.Match) -> str:
    return f"{m.group(0)[:MAX_NAME]}… ({len(m.group(0)):,} characters)"


def safe(s: Any, limit: int | None = MAX_NAME, *, newlines: bool = False) -> str:
    """A string from a trace or a run, fit to show: control characters, escape codes and
    invisible / bidi format characters as visible escapes, cut to ``limit`` characters with an
    ellipsis and the full length (``None``: never cut). ``newlines=True`` keeps line breaks (for
    multi-line text such as a fix's code); otherwise they show as ``\\n``. With a ``limit`` above
    ``MAX_NAME`` (prose that quotes names), each word longer than ``MAX_NAME`` is cut the same
    way."""
    s = "" if s is None else str(s)
    n = len(s)
    # nothing to escape or cut (the common case, every cell of a report): as it is. A printable
    # string holds none of _UNSAFE's characters (all are controls, format characters, separators
    # or unassigned, none printable), and no line break
    if (limit is None or n <= limit and n <= MAX_NAME) and s.isprintable():
        return s
    if limit is not None and limit > MAX_NAME and n > MAX_NAME:
        # prose quoting a name (a finding's evidence, a note): each huge word cut on its own
        s = re.sub(_LONG_WORD, _cut_word, s)
    cut = limit is not None and len(s) > limit
    if cut:
        s = s[:limit]
    if newlines:
        s = "\n".join(re.sub(_UNSAFE, _escape_char, line)
                      for line in s.replace("\r\n", "\n").split("\n"))
    else:
        s = re.sub(_UNSAFE, _escape_char, s)
    if limit is not None and len(s) > limit:        # escapes made it longer
        s = s[:limit]
        s = re.sub(r"\\(x[0-9a-f]?|u[0-9a-f]{0,3})?$", "", s)   # no half escape at the end
        cut = True
    if cut:
        s = s.rstrip() + f"… ({n:,} characters)"
    return s


def json_escape(text: str) -> str:
    """JSON text with every unsafe character (see ``safe``) as a ``\\uXXXX`` escape: the same
    data, inert when printed. Only valid on JSON text (where these characters occur only inside
    strings)."""
    return re.sub(_UNSAFE_JSON, lambda m: f"\\u{ord(m.group(0)):04x}", text)


# ------------------------------------------------------------------------------------------ numbers

def is_num(v: Any) -> bool:
    """A finite number (not None, NaN, inf, a string or a bool)."""
    if v is None or isinstance(v, (bool, str)):
        return False
    try:
        return math.isfinite(float(v))
    except (TypeError, ValueError):
        return False


def ms(v: Any) -> str:
    """Milliseconds with a precision that fits their size, never in exponent notation:
    ``1234``, ``85.0``, ``4.61``, ``0.35``, ``0.012``, ``0.005``, ``0``, ``<0.001``."""
    if not is_num(v):
        return MISSING
    x = float(v)
    a = abs(x)
    if a == 0:
        return "0"
    if a >= 100:
        return f"{x:.0f}"
    if a >= 10:
        return f"{x:.1f}"
    if a >= 0.1:
        return f"{x:.2f}"
    if a >= 0.0005:
        return f"{x:.3f}"
    return "<0.001" if x > 0 else ">-0.001"


def signed_ms(v: Any) -> str:
    """A difference in ms with its sign: ``+1.20``, ``-0.035``, ``0``."""
    if not is_num(v):
        return MISSING
    s = ms(v)
    # a positive difference gets its sign, also below 1 ms (``+0.50``); zero and ``<0.001`` stay
    return f"+{s}" if float(v) > 0 and s[0].isdigit() and s != "0" else s


def ratio(v: Any) -> str:
    """A ratio: ``1.35``, ``48.5``, ``136``."""
    if not is_num(v):
        return MISSING
    x = float(v)
    a = abs(x)
    return f"{x:.2f}" if a < 10 else f"{x:.1f}" if a < 100 else f"{x:.0f}"


def ratio_ci(r: Any, lo: Any = None, hi: Any = None, why: Any = None) -> str:
    """A ratio with its 95 % interval: ``1.35× [1.30, 1.41]`` (``1.35×`` without one), followed by
    ``why`` in parentheses when given: ``1.35× (too few steps for an interval)``, ``1.30× [1.29,
    1.31] (not timed in interleaved rounds: ...)``."""
    if not is_num(r):
        return MISSING
    why_text = f" ({why})" if isinstance(why, str) and why else ""
    if is_num(lo) and is_num(hi):
        return f"{ratio(r)}× [{ratio(lo)}, {ratio(hi)}]{why_text}"
    return f"{ratio(r)}×{why_text}"


def ms_range(lo: Any, hi: Any) -> str:
    """An interval in ms: ``4.50–4.62``."""
    if not (is_num(lo) and is_num(hi)):
        return MISSING
    return f"{ms(lo)}–{ms(hi)}"


def percent(v: Any, signed: bool = False) -> str:
    """A fraction as a percentage: ``12 %`` (``+12 %`` signed)."""
    if not is_num(v):
        return MISSING
    x = float(v) * 100
    return f"{x:+.0f} %" if signed else f"{x:.0f} %"


def count(v: Any) -> str:
    """A count (per step): ``3``; ``2.5``, ``0.042``, ``12.5`` when steps differ."""
    if not is_num(v):
        return MISSING
    x = float(v)
    if x == int(x):
        return f"{x:.0f}"
    a = abs(x)
    if a >= 10:
        return f"{x:.1f}"
    return f"{x:.2g}" if a >= 0.001 else ("<0.001" if x > 0 else ">-0.001")


def mib(v: Any) -> str:
    """Bytes as MiB, with ``ms``'s precision for their size: ``512``, ``2.55``, ``0.012``."""
    return ms(float(v) / 2**20) if is_num(v) else MISSING


def integer(v: Any) -> str:
    """A whole count: ``17``."""
    return str(int(float(v))) if is_num(v) else MISSING


# ------------------------------------------------------------------------------------ column specs

@dataclass(frozen=True)
class ColumnSpec:
    """One column of a per-mode table, the same in every renderer: its label, and how a cell is
    shown: a figure (``format``, right-aligned), a name from the trace (a code span in markdown and
    HTML) or plain text (``text=True``: a thread, a group, a sentence)."""

    key: str
    label: str
    format: Callable[[Any], str] | None = None
    text: bool = False
    get: Callable[[Mapping[str, Any]], Any] | None = None     # the value, when not row[key]
    right: bool | None = None     # right-aligned (None: a figure is, a name or text is not)

    @property
    def numeric(self) -> bool:
        return self.right if self.right is not None else self.format is not None

    def value(self, row: Mapping[str, Any]) -> Any:
        return self.get(row) if self.get is not None else row.get(self.key)


def parallelism(n: Any, autotune: Any) -> str:
    """A tf.data stage's recorded parallelism: ``4``, ``auto 2`` (autotune's choice then), or
    ``–`` where its events recorded none (a stage without parallelism, or a run folder analysed
    before the column existed)."""
    try:
        k = int(n)
    except (TypeError, ValueError):
        return "–"
    if k <= 0:
        return "–"
    return f"auto {k}" if autotune is True or autotune == 1 else str(k)


def names(items: Sequence[str]) -> str:
    """Names in a sentence: ``a``, ``a and b``, ``a, b and c``."""
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def rich_table(title: str, columns: Sequence[tuple[str, bool]], rows: list[list[Any]],
               name_min: int = 0) -> Any:
    """A rich Table for the terminal: ``columns`` are (header, numeric). A numeric column is never
    narrower than its widest figure, so output piped to a file or another program (rich lays it out
    for 80 columns) folds the name columns and never cuts a figure to ``8.…``. Cells that are
    strings from a trace should be passed as ``rich.text.Text(safe(s))`` (never parsed as markup).
    ``name_min``: the name columns fold no narrower than this (when the figures leave room).
    rich is imported here, not with this module."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    # no vertical rules: two cells of padding per column instead of three, room for the names
    t = Table(title=Text(title), title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    for i, (header, numeric) in enumerate(columns):
        if numeric:
            width = max([len(header)] + [len(str(r[i])) for r in rows])
            t.add_column(header, justify="right", no_wrap=True, min_width=width)
        else:
            width = min(name_min, max([len(header)] + [len(str(r[i])) for r in rows]))
            t.add_column(header, justify="left", overflow="fold", min_width=width or None)
    # plain strings as Text: shown the same, without rich parsing them for markup and emoji codes
    # (the cost of half of a table's rendering)
    for r in rows:
        t.add_row(*[Text(c) if isinstance(c, str) else c for c in r])
    return t


def where(file: Any, line: Any) -> str:
    """``file.py:12`` of a Python hotspot."""
    return f"{file}:{line}"


OP_COLUMNS = (ColumnSpec("op", "op"), ColumnSpec("type", "type"),
              ColumnSpec("thread", "thread", text=True),
              ColumnSpec("calls_per_step", "calls/step", count),
              # the traced steps' own figure: the categories are corrected to the untraced step,
              # the ops table is not (the profiler's cost per op is in it)
              ColumnSpec("self_ms_per_step", "traced self ms/step", ms),
              # of its thread group's op time (main thread, workers): each group adds up to 100 %
              ColumnSpec("share", "share of thread", percent))
RETRACE_COLUMNS = (ColumnSpec("function", "function"), ColumnSpec("calls", "calls", integer),
                   ColumnSpec("traced_calls", "traced calls", integer),
                   ColumnSpec("tracing_ms", "tracing ms", ms),
                   ColumnSpec("compile_ms", "compile ms", ms),
                   ColumnSpec("changes", "what changed", text=True,
                              get=lambda r: r.get("changes") or MISSING))
# the retrace diff of two modes (``rundiff``): each function's traces and their cost on each side
RETRACE_DIFF_COLUMNS = (ColumnSpec("function", "function"),
                        ColumnSpec("a_traced", "A traced", integer),
                        ColumnSpec("b_traced", "B traced", integer),
                        ColumnSpec("a_tracing_ms", "A tracing ms", ms),
                        ColumnSpec("b_tracing_ms", "B tracing ms", ms),
                        ColumnSpec("a_compile_ms", "A compile ms", ms),
                        ColumnSpec("b_compile_ms", "B compile ms", ms))
HOTSPOT_COLUMNS = (ColumnSpec("function", "function"),
                   ColumnSpec("where", "where", get=lambda r: where(r.get("file"), r.get("line"))),
                   ColumnSpec("group", "group", text=True),
                   ColumnSpec("self_ms", "self ms/step", ms),
                   ColumnSpec("inclusive_ms", "incl. python ms/step", ms),
                   ColumnSpec("calls_per_step", "calls/step", count))
OTHER_COLUMNS = (ColumnSpec("name", "event"), ColumnSpec("ms_per_step", "ms/step", ms),
                 ColumnSpec("count", "count", integer))
# tf.data stages: per steady step (events starting in the steady steps), then over the whole trace
# (the figures XProf's input_pipeline_analyzer shows); self time leaves out the stages nested in it
STAGE_COLUMNS = (ColumnSpec("stage", "tf.data stage"),
                 ColumnSpec("calls_per_step", "calls/step", count),
                 ColumnSpec("ms_per_step", "traced self ms/step", ms),
                 ColumnSpec("count", "calls (trace)", integer),
                 ColumnSpec("total_ms", "total ms (trace)", ms),
                 ColumnSpec("self_ms", "self ms (trace)", ms),
                 ColumnSpec("share", "share of self", percent),
                 ColumnSpec("parallel_calls", "parallel calls", text=True, right=True,
                            get=lambda r: parallelism(r.get("parallel_calls"), r.get("autotuned"))))
STAGE_TITLE = "tf.data stages (self: less nested stages; a Prefetch's is the step waiting)"

# A mode's memory (report document's ``memory``: ``ModeResult.memory_figures``)
MEMORY_TITLE = ("Memory per mode: the process's peak resident memory while it was timed untraced, "
                "and the allocator's events (TensorFlow's, or XLA's under JAX) in the steady "
                "traced steps")
MEMORY_COLUMNS = (
    ColumnSpec("peak_rss_bytes", "peak RSS MiB (untraced)", mib),
    ColumnSpec("rss_basis", "RSS peak of", text=True,
               get=lambda r: {"phase": "the timing phase", "process": "the whole process"}.get(
                   r.get("rss_basis") or "", MISSING)),
    ColumnSpec("allocations_per_step", "allocations/step", count),
    ColumnSpec("requested_bytes_per_step", "MiB requested/step", mib),
    ColumnSpec("peak_in_use_bytes", "allocator peak MiB in a step", mib),
)


# Where in the model (report document's mode ``layers``: ``ModeResult.layers``)
LAYERS_TITLE = ("Where in the model: time per Keras layer, ms per steady traced step (graph and "
                "XLA: the ops' self time on every thread, placed by the layer scope of their names or "
                "of an XLA op's HLO metadata; eager: the main thread's time under each layer class's "
                "call in the python-tracer pass, each category scaled to the host pass)")
# the cross-mode layer view (report document's ``layer_matrix``: ``RunFigures.layer_matrix``)
LAYER_RATIO_NOTE = ("Ratio (mode ÷ the mode it is compared with: the fastest of its program doing "
                    "the same work): the layer's median time per traced step in one over its "
                    "median in the other, with a 95 % bootstrap interval of the steps, as the "
                    "modes' step ratios; “within noise” where the interval includes 1 or the "
                    "change is under the run-to-run tolerance (the traces come from different "
                    "processes); “too few steps” where a side has fewer than 6 (an eager mode's "
                    "layers come from its python-tracer pass: capture --python-max-steps). The "
                    "ms/step columns are means, which a few slow steps raise; the JSON report's "
                    "layer_matrix has the medians.")


def layer_ratio(r: Mapping[str, Any]) -> str:
    """One layer's ratio cell: ``0.27× [0.26, 0.48]``, ``1.14× [1.06, 1.38], within noise``,
    ``45.3× (too few steps for an interval)``, or why there is none."""
    if not is_num(r.get("ratio")):
        return str(r.get("note") or MISSING)
    if not (is_num(r.get("ratio_lo")) and is_num(r.get("ratio_hi"))):
        return ratio_ci(r["ratio"], None, None, r.get("note") or "no interval")
    shown = ratio_ci(r["ratio"], r.get("ratio_lo"), r.get("ratio_hi"))
    return shown if r.get("significant") else shown + ", within noise"


def layer_matrix(rows: Sequence[Mapping[str, Any]]) -> tuple[
        list[str], list[tuple[str, str]], list[tuple[str, list[Any], list[str | None]]]]:
    """The cross-mode layer view's rows (``RunFigures.layer_matrix`` records) side by side: (the
    modes' names, the (mode, compared with) pairs that have ratios, rows of (layer, ms/step in each
    mode: None where a mode has no such layer, the ratio cell of each pair: None where none)), in
    the view's order."""
    names = list(dict.fromkeys(str(r["mode"]) for r in rows))
    pairs = list(dict.fromkeys((str(r["mode"]), str(r["versus"])) for r in rows if r.get("versus")))
    by_layer: dict[str, tuple[list[Any], list[str | None]]] = {}
    for r in rows:
        ms_row, ratio_row = by_layer.setdefault(str(r["layer"]), ([None] * len(names),
                                                                  [None] * len(pairs)))
        ms_row[names.index(str(r["mode"]))] = r.get("ms_per_step")
        if r.get("versus"):
            ratio_row[pairs.index((str(r["mode"]), str(r["versus"])))] = layer_ratio(r)
    return names, pairs, [(lay, vals, ratios) for lay, (vals, ratios) in by_layer.items()]


def memory_recorded(memory: Mapping[str, Any] | None) -> bool:
    """A report document's mode ``memory`` holds a figure."""
    return memory is not None and any(is_num(memory.get(c.key)) for c in MEMORY_COLUMNS
                                      if c.format)


def host_columns(aligned: bool, mode: bool = True) -> tuple[ColumnSpec, ...]:
    """The hosts table of a multi-host profile session (records: ``HostFigures.to_dict()``): the
    per-step columns only where the hosts' steps line up (slowest: in how many steps the host
    was the slowest; waited: its median wait for each step's slowest host); ``mode=False`` leaves
    out the mode column (the terminal, which shows it under the host)."""
    cols = [ColumnSpec("host", "host")] + ([ColumnSpec("mode", "mode")] if mode else []) + [
            ColumnSpec("steps", "steps", integer),
            ColumnSpec("median_ms", "median", ms),
            ColumnSpec("iqr", "IQR", lambda v: ms_range(*v),
                       get=lambda r: (r.get("p25_ms"), r.get("p75_ms"))),
            ColumnSpec("ratio", "×fastest [95% CI]", lambda v: ratio_ci(*v),
                       get=lambda r: (r.get("ratio"), r.get("ratio_lo"), r.get("ratio_hi")))]
    if aligned:
        cols += [ColumnSpec("straggler_steps", "slowest", integer),
                 ColumnSpec("wait_median_ms", "waited", ms)]
    return tuple(cols)


def _ms_or_delta(v: tuple[Any, bool]) -> str:
    return signed_ms(v[0]) if v[1] else ms(v[0])


def host_category_columns(category_names: Sequence[str]) -> tuple[ColumnSpec, ...]:
    """Each host's category split (records: ``hosts.category_records``; a record with ``delta``
    set holds differences, shown signed)."""
    def get(c: str) -> Callable[[Mapping[str, Any]], Any]:
        return lambda r: ((r.get("categories") or {}).get(c), bool(r.get("delta")))
    return (ColumnSpec("host", "host"),
            *(ColumnSpec(c, c, _ms_or_delta, get=get(c)) for c in category_names))


def _others_waited(r: Mapping[str, Any]) -> str:
    """``w0 0.60, w1 0.57``: how long each other host waited for the step's slowest."""
    slowest = r.get("slowest")
    return ", ".join(f"{h} {ms(w)}" for h, w in (r.get("wait_ms") or {}).items()
                     if h != slowest and not (slowest is None and w == 0)) or MISSING


# one row per step number present on every host (records: ``StepRow.to_dict()``)
HOST_STEP_COLUMNS = (
    ColumnSpec("step_num", "step", integer),
    ColumnSpec("slowest", "slowest host", text=True, get=lambda r: r.get("slowest") or "(tie)"),
    ColumnSpec("slowest_ms", "its ms", ms,
               get=lambda r: max((r.get("wall_ms") or {}).values(), default=None)),
    ColumnSpec("waited", "the others waited (ms)", text=True, get=_others_waited))


def print_table(console: Any, table: Any) -> None:
    """Print a ``rich_table``. On a terminal, at the console's width (name columns fold). Piped or
    redirected (rich assumes 80 columns there), at the table's natural width: a file or ``grep``
    gets every name and header whole, never folded mid-word or cut, whatever the line length."""
    if console.is_terminal:
        console.print(table)
        return
    from rich.measure import Measurement
    natural = Measurement.get(console, console.options.update(max_width=100_000), table).maximum
    width = console.width
    console.width = max(width, natural)     # print's own width= is capped at the console's
    try:
        console.print(table, crop=False)
    finally:
        console.width = width
