"""The diff document: what changed between two runs (matched by mode name) or two modes of one run.

A is "before", B is "after": every delta is B − A (positive: B is slower). Whole-step significance
comes from ``compare_modes`` (95 % bootstrap interval of the ratio of medians); per-category
significance from a bootstrap interval of the difference of the per-step category medians of the
host-traced steady steps.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from traceinsight.compare import compare_modes
from traceinsight.findings import fmt_ratio
from traceinsight.model import CATEGORIES, ModeResult, Run
from traceinsight.report.data import SCHEMA_VERSION, _generator, clean, records

BOOTSTRAP_SAMPLES = 2000
_SEED = 20261121  # fixed: the same diff always shows the same intervals
OP_LIMIT = 200    # ops per change kind kept in the document


def delta_ci(a: np.ndarray, b: np.ndarray, level: float = 0.95) -> tuple[float, float, float]:
    """median(b) − median(a) with a bootstrap percentile interval."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if not len(a) or not len(b):
        return float("nan"), float("nan"), float("nan")
    d = float(np.median(b) - np.median(a))
    if len(a) < 2 or len(b) < 2:
        return d, float("nan"), float("nan")
    rng = np.random.default_rng(_SEED)
    ma = np.median(rng.choice(a, size=(BOOTSTRAP_SAMPLES, len(a))), axis=1)
    mb = np.median(rng.choice(b, size=(BOOTSTRAP_SAMPLES, len(b))), axis=1)
    lo, hi = np.quantile(mb - ma, [(1 - level) / 2, (1 + level) / 2])
    return d, float(lo), float(hi)


def _category_rows(a: ModeResult, b: ModeResult) -> list[dict]:
    ca, cb = a.category_ms(), b.category_ms()
    sa, sb = a.steady_steps, b.steady_steps
    rows = []
    for c in CATEGORIES:
        row = {"category": c, "a_ms": ca.get(c), "b_ms": cb.get(c),
               "delta_ms": float(cb.get(c, np.nan)) - float(ca.get(c, np.nan)),
               "delta_lo": None, "delta_hi": None, "significant": None}
        if c in sa and c in sb and len(sa) and len(sb):
            _, lo, hi = delta_ci(sa[c].to_numpy(), sb[c].to_numpy())
            if np.isfinite(lo):
                row.update(delta_lo=lo, delta_hi=hi, significant=bool(lo > 0 or hi < 0))
        rows.append(row)
    rows.sort(key=lambda r: -abs(r["delta_ms"]) if np.isfinite(r["delta_ms"]) else 0.0)
    return clean(rows)


_CHANGE = {"only in a": "added", "only in b": "removed", "slower": "slower", "faster": "faster"}


def _op_rows(ops: pd.DataFrame) -> dict:
    """compare_modes(B, A).ops -> added / removed / slower / faster, in A/B terms."""
    out: dict = {k: [] for k in ("slower", "faster", "added", "removed")}
    if ops.empty:
        out["same_count"] = 0
        return out
    # compare_modes(B, A): its "a" is B. Swap back so a_ms is A's time.
    df = ops.rename(columns={"a_ms": "b_ms", "b_ms": "a_ms"}).copy()
    df["delta_ms"] = df["b_ms"] - df["a_ms"]
    # an op only on one side has no time on the other: null, not 0
    df[["a_ms", "b_ms"]] = df[["a_ms", "b_ms"]].astype(object)
    df.loc[df["change"] == "only in a", "a_ms"] = None
    df.loc[df["change"] == "only in b", "b_ms"] = None
    for change, kind in _CHANGE.items():
        out[kind] = records(df[df["change"] == change].drop(columns="change").head(OP_LIMIT))
    out["same_count"] = int((df["change"] == "same").sum())
    return out


def _retrace_rows(a: ModeResult, b: ModeResult) -> list[dict]:
    cols = ["function", "traced_calls", "tracing_ms", "compile_ms"]

    def side(m: ModeResult) -> pd.DataFrame:
        if m.retraces.empty:
            return pd.DataFrame(columns=cols)
        return m.retraces.groupby("function", as_index=False)[cols[1:]].sum()

    m = side(a).merge(side(b), on="function", how="outer", suffixes=("_a", "_b"))
    rows = []
    for r in m.itertuples(index=False):
        ta, tb = r.traced_calls_a, r.traced_calls_b
        rows.append({"function": r.function, "a_traced": ta, "b_traced": tb,
                     "a_tracing_ms": r.tracing_ms_a, "b_tracing_ms": r.tracing_ms_b,
                     "a_compile_ms": r.compile_ms_a, "b_compile_ms": r.compile_ms_b})
    return clean(rows)


def pair_entry(a: ModeResult, b: ModeResult) -> dict:
    c = compare_modes(b, a)   # its delta is B − A
    return clean({
        "a": a.name, "b": b.name, "a_ms": c.b_ms, "b_ms": c.a_ms, "delta_ms": c.delta_ms,
        "ratio": c.ratio, "ratio_lo": c.ratio_lo, "ratio_hi": c.ratio_hi,
        "significant": c.significant, "sentence": _sentence(a.name, b.name, c),
        "categories": _category_rows(a, b), "ops": _op_rows(c.ops),
        "retraces": _retrace_rows(a, b)})


def _sentence(na: str, nb: str, c) -> str:
    if not np.isfinite(c.delta_ms):
        return f"{na} → {nb}: no step times to compare"
    if not c.significant:
        return (f"{na} → {nb}: no measurable difference ({c.b_ms:.3g} vs {c.a_ms:.3g} ms/step, "
                f"ratio {fmt_ratio(c.ratio)} [{fmt_ratio(c.ratio_lo)}, {fmt_ratio(c.ratio_hi)}])")
    label = f"{nb}: B − A" if na == nb else f"{nb} − {na}"
    return c.sentence().replace(f"{c.a} − {c.b}", label, 1)


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
    entries = [pair_entry(a, b) for a, b in pairs]
    sig = [p for p in entries if p["significant"]]
    if entries:
        summary = (f"{len(entries)} mode pair(s) compared, {len(sig)} measurably different"
                   + (": " + "; ".join(p["sentence"] for p in sig[:3]) if sig else ""))
    else:
        summary = "no mode ran in both A and B"
    same_run = run_a is run_b
    return {
        "schema_version": SCHEMA_VERSION, "kind": "diff", "generator": _generator(),
        "a": _side(run_a), "b": _side(run_b),
        "environment_changes": [] if same_run else _env_changes(run_a.environment, run_b.environment),
        "summary": summary + ".", "pairs": entries, "only_in_a": only_a, "only_in_b": only_b,
    }
