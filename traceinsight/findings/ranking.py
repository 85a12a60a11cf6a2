"""How a run's findings are ranked: the largest saving first, informational last; savings that
come out of the same step say they overlap (and none is larger than the step); no fix contradicts
another's.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from traceinsight import present
from traceinsight.finding import SEVERITIES, Change, Finding, SavingKind
from traceinsight.model import Run


def _severity(f: Finding, run: Run) -> str:
    """The saving's share of the step: high from 25 %, medium from 5 %; a saving that no mode
    with the fix applied measured (an estimate, an upper bound) is at most medium."""
    if f.saving_ms is None or not np.isfinite(f.saving_ms):
        return "info"
    base = [run.modes[n].median_ms for n in f.modes[:1] if n in run.modes]
    ref = base[0] if base and np.isfinite(base[0]) and base[0] > 0 else None
    if ref is None:
        return "low"
    share = f.saving_ms / ref
    level = "high" if share >= 0.25 else "medium" if share >= 0.05 else "low"
    if level == "high" and f.saving_kind is not SavingKind.MEASURED:
        level = "medium"
    return level


def _overlapping(findings: list[Finding], run: Run) -> list[Finding]:
    """Findings whose savings come out of the same step (same first mode) overlap: a fix that
    removes dispatch also removes some of the tiny ops' and the conversions' cost. Each saving after
    the largest names the larger ones it overlaps (their savings do not add up); none is larger
    than the whole untraced step (the mode's median), and one that would be is capped there and
    says so. A saving is never cut to what the larger ones leave: each is what its own fix saves
    (vectorizing a loop saves most of a step that tf.function also shortens)."""
    out = []
    used: dict[str, list[str]] = {}
    for f in findings:
        own = f.saving_ms
        if own is None or not np.isfinite(own) or not f.modes:
            out.append(f)
            continue
        mode = f.modes[0]
        step = run.modes[mode].median_ms if mode in run.modes else float("nan")
        rules = used.get(mode, [])
        basis, saving = f.saving_basis, own
        if np.isfinite(step) and own > step:
            saving = step
            basis += f"; capped at the whole {present.ms(step)} ms step"
        if rules:
            basis += ("; overlaps " + ", ".join(rules) + f" on the same {mode} step: the savings "
                      "share time and do not add up")
        f = replace(f, saving_ms=saving, saving_basis=basis, overlaps=tuple(rules))
        used[mode] = rules + [f.rule]
        out.append(f)
    return out


def _consistent_advice(findings: list[Finding]) -> list[Finding]:
    """No finding's fix contradicts another's: where XLA was measured slower (a finding whose fix
    recommends ``Change.XLA_OFF``), the other fixes lose the lines that recommend XLA
    (``Change.XLA_ON``, as their rules tagged them) and say why."""
    if not any(f.recommends(Change.XLA_OFF) for f in findings):
        return findings
    return [f if f.recommends(Change.XLA_OFF) else
            f.without(Change.XLA_ON, "# (XLA left out: it was measured slower on this run)")
            for f in findings]


def _rank_key(f: Finding):
    return (f.saving_ms is None, -(f.saving_ms or 0.0), SEVERITIES.index(f.severity), f.rule,
            f.modes, f.title)


def rank(findings: list[Finding], run: Run) -> list[Finding]:
    """The rules' findings of a run, ranked (``rank`` 1 first) with their severity and overlaps."""
    out = list(findings)
    # overlaps are judged largest saving first, then severity from the capped savings
    out.sort(key=lambda f: (f.saving_ms is None, -(f.saving_ms or 0.0), f.rule, f.modes, f.title))
    out = [replace(f, severity=_severity(f, run)) for f in _overlapping(_consistent_advice(out), run)]
    out.sort(key=_rank_key)
    return [replace(f, rank=i + 1) for i, f in enumerate(out)]
