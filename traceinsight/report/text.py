"""Plain text for the terminal: the diff (``traceinsight diff A B`` without ``-o``).

Every string from a trace or a run goes through ``present.safe``: no escape code, control or bidi
character reaches the terminal raw."""

from __future__ import annotations

from typing import Any, Sequence

from traceinsight.present import MAX_NAME, RETRACE_DIFF_COLUMNS, percent, ratio_ci, safe, signed_ms
from traceinsight.present import ms as fmt_ms
from traceinsight.report.options import DEFAULTS, RenderOptions

TOP_OPS = 8


def _table(header: Sequence[str], rows: list[Sequence[str]], right: str = "") -> list[str]:
    rows = [[str(c) for c in r] for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(header)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.rjust(w) if i < len(right) and right[i] == "r" else c.ljust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()
    return [line(header), line(["-" * w for w in widths])] + [line(r) for r in rows]


_signed = signed_ms


def _clip(s: Any, n: int = 60) -> str:
    """A trace string made safe; cut to ``n`` characters in the terminal's narrow tables."""
    s = safe(s, MAX_NAME)
    return s if len(s) <= n else s[: n - 1] + "…"


def _side(diff: dict, key: str, label: str | None = None) -> str:
    """``A: run-name (other processes took 62 % of the CPUs)``: the machine's load while the
    side's compared modes were timed, when recorded; ``label`` in place of ``A:``."""
    load = diff[key].get("other_cpu_busy")
    return f"{label or key.upper() + ':'} {safe(diff[key]['name'])}" + (
        f" (other processes took {percent(load)} of the CPUs)" if load is not None else "")


def render_diff(diff: dict, options: RenderOptions = DEFAULTS) -> str:
    # two modes of one run (``diff RUN --modes a,b``): the run once, its modes in the table
    sides = [_side(diff, "a", "A and B: modes of one run,")] if diff.get("same_run") else \
        [_side(diff, "a"), _side(diff, "b")]
    out = [*sides, "", safe(diff["summary"], None), ""]
    for c in diff["environment_changes"]:
        out.append(f"environment {safe(c['key'])}: {safe(c['a'])} → {safe(c['b'])}")
    if diff["environment_changes"]:
        out.append("")
    out += _table(["A", "B", "A ms/step", "B ms/step", "delta", "ratio B/A [95 % CI]", "significant"],
                  [[safe(p["a"]), safe(p["b"]), fmt_ms(p["a_ms"]), fmt_ms(p["b_ms"]),
                    _signed(p["delta_ms"]), ratio_ci(p.get("ratio"), p.get("ratio_lo"), p.get("ratio_hi"), p.get("ratio_note")),
                    "yes" if p["significant"] else "no"] for p in diff["pairs"]], "llrrrl")
    for side, label in (("only_in_a", "A"), ("only_in_b", "B")):
        if diff[side]:
            out.append(f"only in {label} (or failed on one side): "
                       f"{', '.join(safe(n) for n in diff[side])}")
    for p in diff["pairs"]:
        out += ["", f"== {safe(p['a'])} → {safe(p['b'])}", safe(p["sentence"], None), ""]
        cat_rows: list[Sequence[str]] = [
            [c["category"], fmt_ms(c["a_ms"]), fmt_ms(c["b_ms"]), _signed(c["delta_ms"]),
             f"{fmt_ms(c['delta_lo'])} … {fmt_ms(c['delta_hi'])}" if c.get("delta_lo") is not None else "–",
             {True: "yes", False: "no", None: "–"}[c.get("significant")]]
            for c in p["categories"]]
        if p.get("step_delta_ms") is not None:
            # the total the category rows add up to: the untraced step (the profiler's cost
            # taken out), or a foreign trace's mean traced step
            cat_rows.append(["untraced step" if p.get("categories_corrected") else "traced step",
                             fmt_ms(p.get("step_a_ms")), fmt_ms(p.get("step_b_ms")),
                             _signed(p.get("step_delta_ms")), "", ""])
        out += _table(["category", "A ms/step", "B ms/step", "delta", "95 % CI", "significant"],
                      cat_rows, "lrrrl")
        fams = p.get("families") or []
        if fams:
            out += ["", "op families (ops matched by family across modes and renames):"]
            out += ["  " + line for line in _table(
                ["family", "A ms/step", "B ms/step", "delta"],
                [[_clip(f["family"]), fmt_ms(f["a_ms"]), fmt_ms(f["b_ms"]), _signed(f["delta_ms"])]
                 for f in fams[:TOP_OPS]], "lrrr")]
            if len(fams) > TOP_OPS:
                out.append(f"  … {len(fams) - TOP_OPS} more")
        by = " (matched by op type)" if p["ops"].get("matched_by") == "type" else ""
        for kind in ("slower", "faster", "added", "removed"):
            ops = p["ops"][kind]
            if ops:
                out += ["", f"ops {kind}{by} ({len(ops)}):"]
                out += ["  " + line for line in _table(
                    ["op", "A ms/step", "B ms/step", "delta"],
                    [[_clip(o["op"]), fmt_ms(o["a_ms"]), fmt_ms(o["b_ms"]), _signed(o["delta_ms"])]
                     for o in ops[:TOP_OPS]], "lrrr")]
                if len(ops) > TOP_OPS:
                    out.append(f"  … {len(ops) - TOP_OPS} more")
        if p["retraces"]:
            out += ["", "retraces:"]
            cols = RETRACE_DIFF_COLUMNS
            out += ["  " + line for line in _table(
                [c.label for c in cols],
                [[c.format(c.value(r)) if c.format is not None else _clip(c.value(r)) for c in cols]
                 for r in p["retraces"]],
                "".join("r" if c.numeric else "l" for c in cols))]
    return "\n".join(out) + "\n"
