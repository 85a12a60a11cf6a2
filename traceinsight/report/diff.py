"""The diff document: what changed between two runs (matched by mode name) or two modes of one run,
written from the diff the analysis computed (``rundiff.RunDiff``: every figure and every verdict
of it, see ``traceinsight.rundiff``). This module only formats: the records, the sentences, the
summary line and the cut of long op lists; it decides nothing.

A is "before", B is "after": every delta is B − A (positive: B is slower). The ratio and its
interval are the comparison's, the one figure every page shows for the pair; the table and the
sentence quote it alike.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from traceinsight import present
from traceinsight.columns import Columns
from traceinsight.machineload import DISTURBED_OTHER_CPU, LOAD_EXPLAINS, percent
from traceinsight.report.data import SCHEMA_VERSION, clean, generator_name, records
from traceinsight.rundiff import CategoryDelta, PairDiff, RetraceDelta, RunDiff, diff_runs

if TYPE_CHECKING:
    # types only: what is computed from them is computed in ``rundiff`` (tests/test_house.py)
    from traceinsight.compare import Comparison
    from traceinsight.model import ModeResult, Run
    from traceinsight.rundiff import BetweenRuns

OP_LIMIT = 200    # ops per change kind kept in the document
_OP_FIELDS = ("op", "type", "thread", "family", "a_ms", "b_ms", "delta_ms")


def _category_rows(rows: tuple[CategoryDelta, ...]) -> list[dict]:
    return clean([{"category": r.category, "a_ms": r.a_ms, "b_ms": r.b_ms, "delta_ms": r.delta_ms,
                   "delta_lo": r.delta_lo, "delta_hi": r.delta_hi, "significant": r.significant}
                  for r in rows])


def _op_rows(p: PairDiff) -> dict:
    """Ops added / removed / slower / faster in B (at most OP_LIMIT of each), and how many stayed
    the same."""
    out: dict = {k: [] for k in ("slower", "faster", "added", "removed")}
    out["matched_by"] = p.ops_matched_by
    if p.ops.empty:
        out["same_count"] = 0
        return out
    change = p.ops["change"]
    rows = Columns({n: p.ops[n] for n in _OP_FIELDS})
    for kind in ("added", "removed", "slower", "faster"):
        out[kind] = records(rows.take(np.flatnonzero(change == kind)[:OP_LIMIT]))
    out["same_count"] = int((change == "same").sum())
    return out


def _retrace_rows(rows: tuple[RetraceDelta, ...]) -> list[dict]:
    return clean([{"function": r.function, "a_traced": r.a_traced, "b_traced": r.b_traced,
                   "a_tracing_ms": r.a_tracing_ms, "b_tracing_ms": r.b_tracing_ms,
                   "a_compile_ms": r.a_compile_ms, "b_compile_ms": r.b_compile_ms} for r in rows])


def pair_entry(p: PairDiff) -> dict:
    """One pair of the diff document."""
    c = p.comparison   # B against A: its delta is B − A
    entry: dict[str, Any] = {"a": p.a, "b": p.b, "a_ms": c.b_ms, "b_ms": c.a_ms, "delta_ms": c.delta_ms,
             "ratio": c.ratio, "ratio_lo": c.ratio_lo, "ratio_hi": c.ratio_hi,
             "significant": p.significant, "basis": c.basis, "ratio_note": c.note,
             # what the category rows add up to (B, A, B − A): each side's untraced median where
             # its categories are the user's step (``corrected``), else its mean traced step;
             # and the traced steps' means the traced split came from
             "step_a_ms": c.breakdown_b_ms, "step_b_ms": c.breakdown_a_ms,
             "step_delta_ms": c.breakdown_delta_ms, "categories_corrected": c.corrected,
             "traced_a_ms": c.traced_mean_b_ms, "traced_b_ms": c.traced_mean_a_ms,
             "traced_delta_ms": c.traced_delta_ms}
    label = f"{p.b}: B − A" if p.a == p.b else f"{p.b} − {p.a}"
    sentence = _sentence(p.a, p.b, c, label)
    v = p.between_runs
    if v is not None:
        entry.update(ratio=v.ratio, ratio_lo=v.ratio_lo, ratio_hi=v.ratio_hi,
                     significant=v.significant, basis=v.basis, tolerance=v.tolerance,
                     verdict=v.verdict, a_load=v.a_load, b_load=v.b_load,
                     load_explains=v.load_explains)
        if v.load_explains and p.within_noise:
            sentence = (f"{label}: the machine differed, not necessarily the code "
                        f"({present.ms(c.b_ms)} → {present.ms(c.a_ms)} ms/step, ratio "
                        f"{c.ratio_text()}; {_load_clause(v)})")
        elif p.within_noise:
            sentence = (f"{label}: within run-to-run variation ({present.ms(c.b_ms)} → {present.ms(c.a_ms)} ms/step, "
                        f"ratio {c.ratio_text()}; {_noise_basis(v)})")
        elif not v.significant:
            sentence += f" ({_noise_basis(v)})"
        else:
            sentence += f" (beyond run-to-run variation: {_noise_basis(v)})"
        if v.load_explains and not p.within_noise:
            sentence += f"; {_load_clause(v)}"
    entry.update(sentence=sentence, categories=_category_rows(p.categories), ops=_op_rows(p),
                 families=records(p.families), retraces=_retrace_rows(p.retraces))
    return clean(entry)


def _load_clause(v: BetweenRuns) -> str:
    """Why the load explains the change: both captures' figures and the rule's threshold."""
    return (f"other processes took {percent(v.a_load)} of the CPUs while A was timed and "
            f"{percent(v.b_load)} while B was; a capture during which others took "
            f"{percent(DISTURBED_OTHER_CPU)} or more, or {LOAD_EXPLAINS * 100:.0f} points more "
            "than during the other, is slower for that alone: capture both on the same, quiet "
            "machine to compare the code")


def _noise_basis(v: BetweenRuns) -> str:
    if v.basis == "rounds":
        return (f"measured from the captures' interleaved rounds, a change must exceed "
                f"{v.tolerance * 100:.0f} %")
    return (f"no interleaved rounds, so run-to-run variation is not measured; a change under "
            f"{v.tolerance * 100:.0f} % is treated as noise")


def _sentence(na: str, nb: str, c: Comparison, label: str) -> str:
    if not np.isfinite(c.delta_ms):
        return f"{na} → {nb}: no step times to compare"
    if not c.significant:
        return (f"{na} → {nb}: no measurable difference ({present.ms(c.b_ms)} vs {present.ms(c.a_ms)} ms/step, "
                f"ratio {c.ratio_text()})")
    return c.sentence(label=label)


def _side(run: Run, load: float | None) -> dict:
    # other_cpu_busy: the share of the CPUs other processes took while its compared modes ran
    return clean({"name": run.name, "path": str(run.path) if run.path is not None else None,
                  "command": run.command, "environment": run.environment,
                  "other_cpu_busy": load})


def _summary(d: RunDiff, entries: list[dict]) -> str:
    if not entries:
        hint = ""
        if d.only_in_a and d.only_in_b:   # the runs name their modes apart: say how to pair them
            hint = (f"; to compare mode {d.only_in_a[0]} of A with mode {d.only_in_b[0]} of B: "
                    f"traceinsight diff A B --modes {d.only_in_a[0]},{d.only_in_b[0]}")
        return "no mode ran in both A and B" + hint
    sig = [e for p, e in zip(d.pairs, entries) if p.significant]
    summary = (f"{len(entries)} mode pair(s) compared, {len(sig)} measurably different"
               + ("" if d.same_run else " beyond run-to-run variation")
               + (": " + "; ".join(e["sentence"] for e in sig[:3]) if sig else ""))
    if not d.same_run and d.load_differs:
        summary += (f". The machine differed: other processes took {percent(d.a_load)} of the "
                    f"CPUs while A was timed and {percent(d.b_load)} while B was: that alone can "
                    "make the busier capture slower, so such a change is not called significant")
    if not d.same_run:
        # the tolerance as the document stores it (6 significant digits)
        summary += (". Run-to-run variation measured from interleaved rounds" if d.rounds_measured
                    else ". Run-to-run variation not measured (a capture kept fewer than two "
                    "interleaved rounds of a mode: none were asked for, or the busy machine's "
                    "were set aside): a change under "
                    f"{(clean(d.tolerance) or 0) * 100:.0f} % (more where a "
                    "capture drifted) is treated as noise; capture with interleaved rounds to "
                    "measure it")
    return summary


def document(d: RunDiff) -> dict:
    """The diff document of a computed diff (what ``render_diff`` renders)."""
    entries = [pair_entry(p) for p in d.pairs]
    return {
        "schema_version": SCHEMA_VERSION, "kind": "diff", "generator": generator_name(),
        "a": _side(d.a, d.a_load), "b": _side(d.b, d.b_load),
        "environment_changes": clean([{"key": c.key, "a": c.a, "b": c.b}
                                      for c in d.environment_changes]),
        "summary": _summary(d, entries) + ".", "pairs": entries,
        "only_in_a": list(d.only_in_a), "only_in_b": list(d.only_in_b),
        "same_run": d.same_run,
    }


def diff_data(run_a: Run, run_b: Run, pairs: list[tuple[ModeResult, ModeResult]] | None = None) -> dict:
    """The diff document of two runs (modes matched by name) or of explicit mode pairs: the diff
    computed by ``rundiff.diff_runs``, written as a document."""
    return document(diff_runs(run_a, run_b, pairs))
