"""Keras call findings: predict() against the cheaper calls of one batch, fit() against
train_on_batch().
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

from traceinsight.analysis.retraces import GRAPH_BUILDS
from traceinsight.finding import Finding, SavingKind
from traceinsight.findings import evidence as ev
from traceinsight.findings import pairing
from traceinsight.modekind import FIT, PREDICT
from traceinsight.model import ModeResult, Run


def _per_call_graph_builds(m: ModeResult) -> str:
    """What a predict() call traces every time, from the retrace table's row of graphs built outside
    tf.function calls and the python pass's frames (Keras 3.15 / TF 2.21: the array data adapter
    builds a new tf.data pipeline per call, whose map / flat_map functions are traced)."""
    r = m.table("retraces")
    if r.empty or "function" not in r:
        return ""
    rows = np.flatnonzero(r["function"] == GRAPH_BUILDS)
    if not len(rows):
        return ""
    row = r.take(rows[:1]).records()[0]
    out = (f" Every call also traces: {row['changes']}; "
           + ev.est_text(m, "tracing", "tracing") + ", while its predict function is traced once.")
    h = m.table("hotspots")
    if not h.empty:
        frames = list(zip(map(str, h["file"]), map(str, h["function"])))
        seen = []
        for file, fn in (("array_data_adapter.py", "get_tf_dataset"),
                         ("structured_function.py", "trace_tf_function")):
            hit = [i for i, f in enumerate(frames) if f == (file, fn)]
            if hit:
                e = h.take(np.array(hit[:1])).records()[0]
                seen.append(f"{file} {fn} ×{e['calls_per_step']:.3g} per call, "
                            f"{ev.fmt_ms(e['inclusive_ms'])} ms")
        if seen:
            out += (" Python frames: " + "; ".join(seen) + " — Keras builds a tf.data pipeline "
                    "from the arrays on every predict() call and tf.data traces its functions.")
    return out


def rule_predict(run: Run) -> Iterable[Finding]:
    """6. predict() on small batches costs more than model(x) / predict_on_batch; says what it
    traces on every call."""
    for p in pairing.modes_calling(run, PREDICT):
        alts = pairing.cheaper_calls(run, p)
        cs = [c for c in (pairing.compare_modes(run, p, a) for a in alts) if ev.slower(c)]
        builds = _per_call_graph_builds(p)
        fix = ("y = model.predict_on_batch(x)     # one batch: no per-call data adapter\n"
               "y = model(x, training=False)      # or call the model (tf.function it for speed)")
        if not cs:
            if builds:
                saving = ev.est(p, "tracing")
                yield Finding(
                    rule="predict-overhead",
                    title=f"{p.name}() traces new graphs on every call",
                    evidence=builds.strip(), saving_ms=saving,
                    saving_basis=f"upper bound: the mode's tracing time, {ev.ESTIMATE_NOTE}",
                    saving_kind=SavingKind.UPPER_BOUND,
                    modes=(p.name,), fix=fix)
            continue
        best = min(cs, key=lambda c: c.b_ms)
        yield Finding(
            rule="predict-overhead",
            title=f"{p.name}() costs {ev.fmt_ratio(best.ratio)}× as much per batch as {best.b}",
            evidence=f"{ev.vs(best)}. " + "; ".join(c.sentence() for c in cs if c is not best)
            + builds,
            saving_ms=best.delta_ms,
            saving_basis=f"measured: median step of {p.name} minus {best.b}, {best.delta_text()}",
            saving_kind=SavingKind.MEASURED,
            modes=(p.name, best.b) + tuple(c.b for c in cs if c is not best), fix=fix)


def rule_fit_overhead(run: Run) -> Iterable[Finding]:
    """7a. fit() and train_on_batch() per step: whichever is measurably slower carries overhead."""
    for f in pairing.modes_calling(run, FIT):
        t = pairing.reference_call(run, f)
        if t is None:
            continue
        c = pairing.compare_modes(run, f, t)
        if not c.significant:
            continue
        if c.delta_ms > 0:
            yield Finding(
                rule="fit-overhead", title=f"{f.name} costs more per step than {t.name}",
                evidence=ev.vs_by_category(c),
                saving_ms=c.delta_ms,
                saving_basis=f"measured: median step of {f.name} minus {t.name}, {c.delta_text()}",
                saving_kind=SavingKind.MEASURED,
                modes=(f.name, t.name),
                fix=("model.compile(optimizer, loss, steps_per_execution=32)  # fewer Python round trips\n"
                     "model.fit(ds, epochs=1, verbose=0)   # no per-step progress bar\n"
                     "# or, for a handful of steps: model.train_on_batch(x, y)"))
        else:
            rc = pairing.compare_modes(run, t, f)
            yield Finding(
                rule="train-on-batch-overhead",
                title=f"{t.name} costs more per step than a batch inside {f.name}",
                evidence=ev.vs_by_category(rc),
                saving_ms=rc.delta_ms,
                saving_basis=f"measured: median step of {t.name} minus {f.name}, {rc.delta_text()}",
                saving_kind=SavingKind.MEASURED,
                modes=(t.name, f.name),
                fix=("model.fit(x, y, batch_size=32, epochs=1, verbose=0)  # one call, many batches\n"
                     "# or keep the loop but compile fewer round trips:\n"
                     "model.compile(optimizer, loss, steps_per_execution=32)"))
