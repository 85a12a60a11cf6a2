"""The diff document: what changed between two runs (matched by mode name) or two modes of one run.

A is "before", B is "after": every delta is B − A (positive: B is slower). The ratio and its
interval are the comparison's (``stats.mode_ratio``), the one figure every page shows for the pair;
the table and the sentence quote it alike. Two modes of one run: significant when the comparison
orders them. The same mode in two runs: ``stats.between_runs`` also asks the change to exceed
run-to-run variation (either capture's own round-to-round spread when both have interleaved
rounds, else an assumed tolerance, and the pair says which). Per-category significance: a bootstrap interval of the
difference of the per-step category medians of the host-traced steady steps (``stats.delta_ci``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from traceinsight import present
from traceinsight.columns import Columns
from traceinsight.compare import Comparison, compare_modes, op_type_diff
from traceinsight.model import CATEGORIES, ModeResult, Run
from traceinsight.report.data import SCHEMA_VERSION, clean, generator_name, records
from traceinsight.stats import between_runs, delta_ci

OP_LIMIT = 200    # ops per change kind kept in the document


def _category_rows(a: ModeResult, b: ModeResult, tolerance: float | None = None) -> list[dict]:
    """Per category: both means (ms/step of the traced steady steps: they add up to the pair's
    ``traced_delta_ms``), B − A with its interval; ``tolerance`` (two captures): a change counts
    only when the larger side exceeds the smaller by that share as well (as for the step)."""
    ca, cb = a.category_means(), b.category_means()
    sa, sb = (m.table("steps").take(m.steady_mask()) for m in (a, b))
    rows = []
    for c in CATEGORIES:
        row: dict[str, Any] = {"category": c, "a_ms": ca.get(c), "b_ms": cb.get(c),
               "delta_ms": float(cb.get(c, np.nan)) - float(ca.get(c, np.nan)),
               "delta_lo": None, "delta_hi": None, "significant": None}
        if c in sa and c in sb and len(sa) and len(sb):
            _, lo, hi = delta_ci(np.asarray(sa[c], dtype=float), np.asarray(sb[c], dtype=float),
                                 stat="mean")
            if np.isfinite(lo):
                sig = bool(lo > 0 or hi < 0)
                if tolerance is not None:
                    small = min(abs(float(ca.get(c, 0) or 0)), abs(float(cb.get(c, 0) or 0)))
                    sig = sig and abs(float(row["delta_ms"])) > tolerance * small
                row.update(delta_lo=lo, delta_hi=hi, significant=sig)
        rows.append(row)
    rows.sort(key=lambda r: -abs(float(r["delta_ms"])) if np.isfinite(r["delta_ms"]) else 0.0)
    return clean(rows)


# from A's side of the comparison of A with B: an op only in A was removed in B; A slower = B faster
_CHANGE = {"only in b": "added", "only in a": "removed", "faster": "slower", "slower": "faster"}


def _op_rows(c: Comparison, by_type: bool = False) -> dict:
    """The comparison of A with B -> ops added / removed / slower / faster in B; delta_ms = B − A.
    ``by_type`` (two different modes): ops matched by normalized type, not by name."""
    out: dict = {k: [] for k in ("slower", "faster", "added", "removed")}
    ops = op_type_diff(c.table("ops")) if by_type else c.table("ops")
    out["matched_by"] = "type" if by_type else "name"
    if ops.empty:
        out["same_count"] = 0
        return out
    change = ops["change"]

    def side(col: str, absent: str) -> np.ndarray:
        # an op only on one side has no time on the other: null, not 0
        v = np.asarray(ops[col], dtype=object).copy()
        v[change == absent] = None
        return v

    rows = Columns({"op": ops["op"], "type": ops["type"], "thread": ops["thread"],
                    "family": ops["family"], "a_ms": side("a_ms", "only in b"),
                    "b_ms": side("b_ms", "only in a"), "delta_ms": -ops["delta_ms"]})
    for name, kind in _CHANGE.items():
        out[kind] = records(rows.take(np.flatnonzero(change == name)[:OP_LIMIT]))
    out["same_count"] = int((change == "same").sum())
    return out


def _family_rows(c: Comparison) -> list[dict]:
    """Op time per family (ops matched across modes and renames); delta_ms = B − A."""
    f = c.table("families")
    return [] if f.empty else records(Columns({n: -f[n] if n == "delta_ms" else f[n]
                                               for n in f.columns}))


def _retrace_rows(a: ModeResult, b: ModeResult) -> list[dict]:
    cols = ["function", "traced_calls", "tracing_ms", "compile_ms"]

    def side(m: ModeResult) -> pd.DataFrame:
        # a groupby and an outer merge: pandas, built here from the mode's columns
        r = m.table("retraces")
        if r.empty:
            return pd.DataFrame(columns=cols)
        return r.to_pandas().groupby("function", as_index=False)[cols[1:]].sum()

    m = side(a).merge(side(b), on="function", how="outer", suffixes=("_a", "_b"))
    rows = []
    for r in m.itertuples(index=False):
        ta, tb = r.traced_calls_a, r.traced_calls_b
        rows.append({"function": r.function, "a_traced": ta, "b_traced": tb,
                     "a_tracing_ms": r.tracing_ms_a, "b_tracing_ms": r.tracing_ms_b,
                     "a_compile_ms": r.compile_ms_a, "b_compile_ms": r.compile_ms_b})
    return clean(rows)


def pair_entry(a: ModeResult, b: ModeResult, ab: Comparison | None = None,
               across_runs: bool = False) -> dict:
    """One pair of the diff. ``ab``: the comparison of A with B when the caller has it (two modes
    of one run: the run's own); ``across_runs``: A and B come from two captures, so significance
    must also beat run-to-run variation."""
    if ab is None:
        ab = compare_modes(a, b)
    c = ab.flipped()   # B against A: its delta is B − A
    entry: dict[str, Any] = {"a": a.name, "b": b.name, "a_ms": c.b_ms, "b_ms": c.a_ms, "delta_ms": c.delta_ms,
             "ratio": c.ratio, "ratio_lo": c.ratio_lo, "ratio_hi": c.ratio_hi,
             "significant": c.significant, "basis": c.basis, "ratio_note": c.note,
             # the traced steps' means the category rows add up to (B, A, B − A)
             "traced_a_ms": c.traced_mean_b_ms, "traced_b_ms": c.traced_mean_a_ms,
             "traced_delta_ms": c.traced_delta_ms}
    label = f"{b.name}: B − A" if a.name == b.name else f"{b.name} − {a.name}"
    sentence = _sentence(a.name, b.name, c, label)
    if across_runs:
        v = between_runs(c.estimate, a.step_samples_ms, b.step_samples_ms,
                         a.timing.rounds if a.timing is not None else None,
                         b.timing.rounds if b.timing is not None else None)
        entry.update(ratio=v["ratio"], ratio_lo=v["ratio_lo"], ratio_hi=v["ratio_hi"],
                     significant=v["significant"], basis=v["basis"], tolerance=v["tolerance"],
                     verdict=v["verdict"])
        if not v["significant"] and c.significant and np.isfinite(v["ratio"]):
            sentence = (f"{label}: within run-to-run variation ({present.ms(c.b_ms)} → {present.ms(c.a_ms)} ms/step, "
                        f"ratio {c.ratio_text()}; {_noise_basis(v)})")
        elif not v["significant"]:
            sentence += f" ({_noise_basis(v)})"
        else:
            sentence += f" (beyond run-to-run variation: {_noise_basis(v)})"
    entry.update(sentence=sentence,
                 categories=_category_rows(a, b, entry.get("tolerance") if across_runs else None),
                 ops=_op_rows(ab, by_type=a.name != b.name),
                 families=_family_rows(ab), retraces=_retrace_rows(a, b))
    return clean(entry)


def _noise_basis(v: dict) -> str:
    if v["basis"] == "rounds":
        return (f"measured from the captures' interleaved rounds, a change must exceed "
                f"{v['tolerance'] * 100:.0f} %")
    return (f"no interleaved rounds, so run-to-run variation is not measured; a change under "
            f"{v['tolerance'] * 100:.0f} % is treated as noise")


def _sentence(na: str, nb: str, c: Comparison, label: str) -> str:
    if not np.isfinite(c.delta_ms):
        return f"{na} → {nb}: no step times to compare"
    if not c.significant:
        return (f"{na} → {nb}: no measurable difference ({present.ms(c.b_ms)} vs {present.ms(c.a_ms)} ms/step, "
                f"ratio {c.ratio_text()})")
    return c.sentence(label=label)


def _side(run: Run) -> dict:
    return clean({"name": run.name, "path": str(run.path) if run.path is not None else None,
                  "command": run.command, "environment": run.environment})


def _env_changes(a: dict, b: dict) -> list[dict]:
    def flat(env: dict) -> dict:
        out = {k: v for k, v in env.items() if k != "env_vars"}
        out.update({f"env {k}": v for k, v in (env.get("env_vars") or {}).items()})
        return out
    fa, fb = flat(a), flat(b)
    return clean([{"key": k, "a": fa.get(k), "b": fb.get(k)} for k in dict.fromkeys([*fa, *fb])
                  if fa.get(k) != fb.get(k)])


def match_modes(run_a: Run, run_b: Run) -> tuple[list[tuple[ModeResult, ModeResult]], list[str], list[str]]:
    """Pairs of ok modes with the same name; names only in A, only in B (or failed on one side)."""
    pairs = [(m, run_b.modes[n]) for n, m in run_a.modes.items()
             if n in run_b.modes and m.ok and run_b.modes[n].ok]
    paired = {a.name for a, _ in pairs}
    return (pairs, [n for n in run_a.modes if n not in paired],
            [n for n in run_b.modes if n not in paired])


def diff_data(run_a: Run, run_b: Run, pairs: list[tuple[ModeResult, ModeResult]] | None = None) -> dict:
    """The diff document of two runs (modes matched by name) or of explicit mode pairs."""
    if pairs is None:
        pairs, only_a, only_b = match_modes(run_a, run_b)
    else:
        only_a, only_b = [], []
    same_run = run_a is run_b
    entries = [pair_entry(a, b, run_a.compare(a.name, b.name) if same_run else None,
                          across_runs=not same_run) for a, b in pairs]
    sig = [p for p in entries if p["significant"]]
    if entries:
        summary = (f"{len(entries)} mode pair(s) compared, {len(sig)} measurably different"
                   + ("" if same_run else " beyond run-to-run variation")
                   + (": " + "; ".join(p["sentence"] for p in sig[:3]) if sig else ""))
        if not same_run:
            bases = {p.get("basis") for p in entries}
            summary += (". Run-to-run variation measured from interleaved rounds" if bases == {"rounds"}
                        else ". Run-to-run variation not measured (captures without interleaved "
                        "rounds): a change under "
                        f"{min(p.get('tolerance') or 0 for p in entries) * 100:.0f} % (more where a "
                        "capture drifted) is treated as noise; capture with interleaved rounds to "
                        "measure it")
    else:
        summary = "no mode ran in both A and B"
    return {
        "schema_version": SCHEMA_VERSION, "kind": "diff", "generator": generator_name(),
        "a": _side(run_a), "b": _side(run_b),
        "environment_changes": [] if same_run else _env_changes(run_a.environment, run_b.environment),
        "summary": summary + ".", "pairs": entries, "only_in_a": only_a, "only_in_b": only_b,
    }
