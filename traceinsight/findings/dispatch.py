"""Eager and dispatch findings: an eager step bound by Python and dispatch (compile it with
tf.function), a graph function slower than eager, many tiny ops per step (vectorize).
"""

from __future__ import annotations

import math
from typing import Iterable

import numpy as np

from traceinsight.finding import Change, Finding, SavingKind, advice
from traceinsight.findings import evidence as ev
from traceinsight.findings import frames as fr
from traceinsight.findings import pairing
from traceinsight.modekind import CALL, EAGER, GRAPH
from traceinsight.runview import RunView

# Thresholds. They decide when a rule speaks; each is a share or an absolute time, never a figure
# of a particular model.
DISPATCH_BOUND_SHARE = 0.30     # python + dispatch >= 30 % of an eager step
TINY_OPS_PER_STEP = 100         # "many ops": op calls per step
TINY_OP_MEDIAN_MS = 0.050       # "tiny": median time of one op call <= 50 µs


# --------------------------------------------------------------------------------------------------
# rules: each yields Findings (rank and severity are filled in by find())


def rule_eager_dispatch_bound(run: RunView) -> Iterable[Finding]:
    """1. Eager slower than its graph function: wrap the step in tf.function.

    "eager-dispatch-bound" when python + dispatch are >= 30 % of the eager step, "eager-slower"
    when the function mode is measurably faster for other reasons. With the function mode in the
    run (the fix applied), the saving is the measured difference of the two untraced medians;
    without it, an estimate: the python + dispatch share of the eager step, which a graph function
    removes at most (it keeps some of its own)."""
    for e in pairing.modes_compiled(run, EAGER):
        f = pairing.graph_twin(run, e)
        share = ev.share(e, "python", "dispatch")
        bound = ev.finite(share) and share >= DISPATCH_BOUND_SHARE
        c = pairing.compare_modes(run, e, f) if f is not None else None
        if c is not None and not ev.slower(c):
            continue  # the function mode is not measurably faster: rule 8 speaks instead
        if not bound and c is None:
            continue
        fix = ("step = tf.function(model)          # or decorate your train/predict step\n"
               "y = step(x)                        # x: a tensor of a fixed shape"
               if e.kind.call == CALL else
               "@tf.function                       # your training / inference step: its ops\n"
               "def train_step(x, y): ...          # run as one graph, no per-op Python dispatch"
               if e.kind.call is None else
               "model.compile(optimizer, loss, run_eagerly=False)  # the default: "
               "train_on_batch runs a tf.function")
        fix = fr.at_user_line(e, fix)
        split = (f"In {e.name}, {ev.est_text(e, 'python + dispatch', 'python', 'dispatch')}."
                 if ev.finite(share) else "")
        if c is not None and f is not None:
            saving: float | None = c.delta_ms
            basis = f"measured: median step of {e.name} minus {f.name}, {c.delta_text()}"
            kind: SavingKind | None = SavingKind.MEASURED
            modes: tuple[str, ...] = (e.name, f.name)
            evidence = (ev.vs(c) + ". " + split
                        + (f" {f.name}: {ev.est_text(f, 'python + dispatch', 'python', 'dispatch')}."
                           if ev.finite(ev.share(f, "python", "dispatch")) else ""))
        else:
            saving = ev.est(e, "python", "dispatch")
            basis = (f"estimate: {e.name}'s python + dispatch, {ev.ESTIMATE_NOTE}; no graph-function "
                     "mode in this run to measure it against (a function keeps some of its own)")
            kind = SavingKind.ESTIMATE
            modes = (e.name,)
            evidence = split
        if saving is not None and not np.isfinite(saving):
            saving, kind = None, None
        if bound:
            yield Finding(
                rule="eager-dispatch-bound",
                title=f"{e.name} is Python/dispatch-bound: compile the step with tf.function",
                evidence=evidence, saving_ms=saving, saving_basis=basis, saving_kind=kind,
                modes=modes, fix=fix)
        elif c is not None and f is not None:   # not bound: the function mode is faster
            yield Finding(
                rule="eager-slower",
                title=(f"{e.name} is {ev.fmt_ratio(c.ratio)}× slower than {f.name}: compile the step "
                       "with tf.function"),
                evidence=ev.vs_by_category(c) + " " + split, saving_ms=saving, saving_basis=basis,
                saving_kind=kind, modes=modes, fix=fix)


_FUSE_WITH_XLA = "step = tf.function(step_fn, jit_compile=True)"
_FUSE_SMALL_OPS = "step = tf.function(step_fn, jit_compile=True)  # XLA fuses small graph ops"


def rule_function_slower(run: RunView) -> Iterable[Finding]:
    """1b. A graph function measurably slower than the same step run eagerly (e.g. a vectorized
    step: one large op leaves no per-op Python overhead for tf.function to remove). Says where the
    difference is: the call machinery or the kernels (by op family)."""
    for f in pairing.modes_compiled(run, GRAPH):
        if f.kind.call != CALL:
            continue   # a Keras call (train_on_batch, fit ...) is not the step the user runs eagerly
        e = pairing.eager_twin(run, f)
        if e is None:
            continue
        c = pairing.compare_modes(run, f, e)
        if not ev.slower(c):
            continue
        traced_gap = c.traced_a_ms - c.traced_b_ms
        trace_cost = ev.cat(f, "tracing", "compile") - ev.cat(e, "tracing", "compile")
        if ev.finite(traced_gap, trace_cost) and traced_gap > 0 and trace_cost >= 0.5 * traced_gap:
            continue  # it keeps tracing (or compiling): the retracing rule says why and what to do
        n_e, _ = fr.op_call_stats(e)
        overhead_e = ev.est(e, "python", "dispatch")
        why = []
        if ev.finite(overhead_e) and n_e:
            why.append(f"the eager step issues {n_e:.0f} op call(s) per step with "
                       f"≈ {ev.fmt_ms(overhead_e)} ms of Python + dispatch in its "
                       f"{ev.fmt_ms(e.median_ms)} ms step: little for tf.function to remove")
        fam = None if c.traced_disagrees else c.top_family(True)
        fam = fam if ev.family_dominates(c, fam) else None
        if fam is not None:
            why.append(f"{fam.family} kernels take {ev.fmt_ms(fam.a_ms)} ms/step in "
                       f"{f.name} against {ev.fmt_ms(fam.b_ms)} in {e.name}: the same work "
                       "runs slower inside the graph (another kernel or fewer threads)")
        call = ev.est(f, "dispatch")
        if ev.finite(call) and call >= 0.005 and not c.traced_disagrees:
            why.append(f"the function call machinery (dispatch) costs ≈ {ev.fmt_ms(call)} ms of "
                       f"{f.name}'s {ev.fmt_ms(f.median_ms)} ms step ({ev.pct(ev.share(f, 'dispatch'))} "
                       "of its categories)")
        evidence = (ev.vs_by_category(c) + (" Why: " + "; ".join(why) + "." if why else ""))
        yield Finding(
            rule="function-slower",
            title=(f"{f.name} is {ev.fmt_ratio(c.ratio)}× slower than {e.name}"
                   + (f": its {fam.family} kernels run slower in the graph" if fam is not None
                      else "")),
            evidence=evidence, saving_ms=c.delta_ms,
            saving_basis=f"measured: median step of {f.name} minus {e.name}, {c.delta_text()}",
            saving_kind=SavingKind.MEASURED,
            modes=(f.name, e.name),
            fix=fr.at_user_line(e, "# a step of a few large ops gains nothing from tf.function: run "
                                "it eagerly,\n# or let XLA fuse it (compare the xla mode):\n"
                                + _FUSE_WITH_XLA),
            advice=advice(Change.XLA_ON, _FUSE_WITH_XLA))


def rule_tiny_ops(run: RunView) -> Iterable[Finding]:
    """5. Many tiny ops per step, where the user's own code issues them (not Keras' step functions,
    not a graph-mode While loop): vectorize the loop, at the user's file and line. Where the
    python pass recorded who issued the ops, only the user's own frames count, and the saving is
    the python, dispatch and conversion time of the ops they issue (an estimate: no mode of the
    run runs the vectorized code); without it, a Keras workload's ops are Keras' and the rule is
    silent, and the saving is the mode's dispatch time."""
    hits = []
    for m in run.ok_modes():
        if not m.host_events_recorded:
            continue  # the host's op calls are not all in the trace: no per-call claim
        if fr.runs_keras_step(m) or fr.graph_while_loop(m):
            continue
        # the ops of a tf.data pipeline's functions run on worker threads beside the step's graph,
        # named alike: where the step pulls from tf.data, only the ops the step's thread calls
        n, med = fr.op_call_stats(m, main_only=fr.waits_on_tf_data(run, m))
        if not (ev.finite(med) and med <= TINY_OP_MEDIAN_MS):
            continue
        issuers = fr.issuers(m)
        if issuers is None:
            if run.manifest.get("workload", {}).get("kind") == "keras":
                continue   # no python pass: the ops of a Keras model are Keras' to issue
            mine: list[dict] = []
        else:
            mine = [r for r in issuers if r["group"] == "user"]
            n = math.fsum(float(r["op_calls_per_step"]) for r in mine)
        if n >= TINY_OPS_PER_STEP:
            hits.append((n, med, m, mine))
    if not hits:
        return
    hits.sort(key=lambda h: (-h[0], h[2].name))
    n, med, m, mine = hits[0]
    evidence = (f"{m.name} runs {n:.0f} op calls per step"
                + (f" from your code ({fr.op_words(mine)})" if mine else "")
                + f" with a median of {med * 1e3:.1f} µs per call; "
                + ev.est_text(m, "per-op overhead (dispatch)", "dispatch") + ".")
    if len(hits) > 1:
        evidence += " Also: " + ", ".join(f"{h[2].name} {h[0]:.0f} calls, {h[1] * 1e3:.1f} µs"
                                          for h in hits[1:]) + "."
    if mine:
        saving = fr.issued_cost(m, mine)
        basis = ("estimate: the python, dispatch and conversion time of the ops your code issues "
                 f"(their shares of the python pass applied to the category split), {ev.ESTIMATE_NOTE};"
                 " vectorized, one op does the work of the loop (no mode of this run runs it)")
    else:
        saving = ev.est(m, "dispatch")
        basis = ("estimate: the dispatch time, which grows with the number of op calls, "
                 + ev.ESTIMATE_NOTE)
    eager = pairing.compiled(m) == EAGER
    fix = ("# fewer, larger ops: one batched op instead of a Python loop of small ones\n"
           "y = tf.reduce_sum(x * w[None, :], axis=1)   # not [tf.reduce_sum(x[i] * w) for i ...]\n"
           "z = tf.vectorized_map(fn, xs)               # not [fn(x) for x in xs]\n"
           + ("step = tf.function(step_fn)                 # no per-op Python dispatch in eager"
              if eager else _FUSE_SMALL_OPS))
    if mine:
        fix = f"# in your code: {fr.where(mine[0])}\n" + fix
    yield Finding(
        rule="tiny-ops", title=f"Many tiny ops per step in {m.name}: vectorize",
        evidence=evidence, saving_ms=saving if ev.finite(saving) and saving > 0 else None,
        saving_basis=basis if ev.finite(saving) and saving > 0 else "",
        saving_kind=SavingKind.ESTIMATE if ev.finite(saving) and saving > 0 else None,
        modes=tuple(h[2].name for h in hits), fix=fix,
        advice=() if eager else advice(Change.XLA_ON, _FUSE_SMALL_OPS))
