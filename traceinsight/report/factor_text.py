"""The factor table in words and rows, from the report document's ``factors`` (what
``traceinsight.factors`` computed): one formatting for markdown, HTML and the viewer. It computes
nothing. ``name`` formats a mode name (code in markdown, escaped in HTML), ``text`` a sentence
from the trace."""

from __future__ import annotations

from typing import Any, Callable

from traceinsight import present

Fmt = Callable[[Any], str]

EFFECT_HEADER = ["Factor", "Change", "From → to", "Ratio [95 % CI]", "Δ ms/step [95 % CI]"]
INTRO = ("Each factor's effect is measured on a pair of modes that differ in it alone (ratio of the "
         "later mode's median step to the earlier's, with its interval). A gap between modes that "
         "differ in several factors is walked one factor at a time through modes of the run: the "
         "steps' ratios multiply to the gap's and their differences add up to it.")


def _delta(d: dict) -> str:
    out = f"{present.signed_ms(d.get('delta_ms'))}"
    if present.is_num(d.get("delta_lo")) and present.is_num(d.get("delta_hi")):
        out += f" [{present.signed_ms(d['delta_lo'])}, {present.signed_ms(d['delta_hi'])}]"
    return out


def _ratio(d: dict) -> str:
    return present.ratio_ci(d.get("ratio"), d.get("ratio_lo"), d.get("ratio_hi"), d.get("note"))


def has_table(factors: dict | None) -> bool:
    return bool(factors and (factors.get("effects") or factors.get("gaps")))


def effect_rows(factors: dict, name: Fmt, text: Fmt) -> list[list[str]]:
    """One row per single-factor pair of modes, by factor."""
    rows = []
    for s in factors.get("effects", []):
        # no verdict: the ratio's own note (beside it) says why where its interval excludes 1
        # (the interleaved rounds disagree, too few of them): not said twice
        verdict = "" if s.get("significant") else " (no measurable difference)"
        rows.append([text(s["factor_label"]), text(s["change"]),
                     f"{name(s['from_mode'])} → {name(s['to_mode'])}", text(_ratio(s) + verdict),
                     text(_delta(s))])
    return rows


def _step_clause(s: dict, name: Fmt, text: Fmt) -> str:
    return (f"{text(s['change'])} ({name(s['from_mode'])} → {name(s['to_mode'])}) "
            f"{text(_ratio(s))}, {text(_delta(s))} ms/step")


def gap_sentences(factors: dict, name: Fmt, text: Fmt) -> list[str]:
    """One paragraph per gap: the whole ratio, then its split (or why it cannot be split)."""
    labels = {f["factor"]: f["factor_label"] for f in factors.get("effects", [])}
    labels.update({f["factor"]: f["factor_label"] for f in factors.get("absent", [])})
    out = []
    for g in factors.get("gaps", []):
        head = (f"{name(g['from_mode'])} → {name(g['to_mode'])}: {text(_ratio(g))}, "
                f"{text(_delta(g))} ms/step")
        if g["steps"]:
            body = "; then ".join(_step_clause(s, name, text) for s in g["steps"])
            line = f"{head}. Split: {body}."
        else:
            sep = " and ".join(text(labels.get(f, f)) for f in g["factors"])
            line = (f"{head}. Not split: they differ in {sep}, and no mode of the run changes one "
                    "of them alone")
            line += (f"; add {', '.join(name(m) for m in g['missing'])} (capture --modes)."
                     if g["missing"] else ".")
        beside = g.get("beside") or []
        if beside:
            parts = []
            for s in beside:
                # a share only where the step is a part of the gap (same sign, no larger)
                part = (s["delta_ms"] / g["delta_ms"] if present.is_num(s.get("delta_ms"))
                        and present.is_num(g.get("delta_ms")) and g["delta_ms"] else None)
                share = (f", {present.percent(part)} of the gap"
                         if part is not None and 0 < part <= 1 else "")
                parts.append(f"{text(s['factor_label'])}: {text(s['change'])} "
                             f"({name(s['from_mode'])} → {name(s['to_mode'])}) {text(_ratio(s))}, "
                             f"{text(_delta(s))} ms/step{text(share)}")
            line += f" Beside the gap, at {name(g['to_mode'])}: " + "; ".join(parts) + "."
        if g.get("interacting"):
            pairs = ", ".join(" × ".join(text(labels.get(f, f)) for f in p) for p in g["interacting"])
            line += (f" The order matters: {pairs} interact (below), so another order of the walk "
                     "splits the gap otherwise.")
        out.append(line)
    return out


def interaction_sentences(factors: dict, name: Fmt, text: Fmt) -> list[str]:
    out = []
    for i in factors.get("interactions", []):
        a, b = i["single"]
        kind = ("they compound" if i["interaction"] > 1 else "they overlap") \
            if i["significant"] else "no measurable interaction"
        out.append(
            f"{text(a['factor_label'])} × {text(b['factor_label'])} from {name(i['corner'])}: "
            f"alone {present.ratio(a['ratio'])}× ({name(a['to_mode'])}) and "
            f"{present.ratio(b['ratio'])}× ({name(b['to_mode'])}), product "
            f"{present.ratio(i['product'])}×; together ({name(i['both_mode'])}) "
            f"{present.ratio_ci(i['measured'], i['measured_lo'], i['measured_hi'])} measured: "
            f"{present.ratio_ci(i['interaction'], i['interaction_lo'], i['interaction_hi'])} of "
            f"the product, {kind}.")
    return out


def absent_sentences(factors: dict, name: Fmt, text: Fmt) -> list[str]:
    out = []
    for a in factors.get("absent", []):
        line = f"{text(a['factor_label'])}: {text(a['why'])}"
        if a.get("add_modes"):
            line += "; add " + ", ".join(name(n) for n in a["add_modes"]) + " (capture --modes)"
        out.append(line + ".")
    return out
