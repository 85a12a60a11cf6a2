"""``capture --verify``: check each finding's claimed saving against the mode with its fix applied.

A finding whose saving is an estimate or an upper bound names a fix. Where that fix is one the
capture can apply by itself, as a mode of the same workload (``tf.function`` around the step: the
graph twin of an eager mode; tensors instead of numpy: the ``+tensor`` twin; ``jit_compile`` on:
the XLA twin; ``predict_on_batch`` instead of ``predict``), the capture adds that mode to the run
and the saving is measured: the run's own comparison of the two modes (``Run.compare``: median
difference with its interval). The factor table's gaps that no mode of the run splits get the
modes that split them the same way. It goes round again (a new mode can bring new findings)
until nothing is left to add or the time budget (``--verify-budget``) is spent.

A retraced step of a function workload is checked twice, each fix a mode of its own:
``tf.function(step, reduce_retracing=True)`` (``function-relaxed``) and ``tf.function(step,
input_signature=...)`` with the signature the finding quotes (``function-signature``: built from
the recorded inputs' kinds, ``analysis.retraces.signature_specs``, and handed to the mode's process
as data), whose process checks that the step traced once; a retrace, or inputs that do not fit,
fail that mode in one line.

What it cannot apply by itself is said, per finding: a fix that changes the user's code beyond a
mode (``reduce_retracing`` / ``input_signature`` outside a function workload's step, a tf.data
map's ``num_parallel_calls`` and ``prefetch``, vectorizing a loop) stays an estimate.

``plan`` decides on the run's typed data (rule ids, mode kinds), without TensorFlow; ``record``
writes what was checked into run.json (``verify``), where every report shows claimed against
measured.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

from traceinsight.finding import SavingKind
from traceinsight.modekind import (
    BASES,
    CHEAPER_CALLS,
    GRAPH,
    PREDICT,
    XLA,
    Base,
    ModeKind,
    all_kinds,
    name_of,
)

if TYPE_CHECKING:
    from traceinsight.analysis.retraces import ArgSpec
    from traceinsight.finding import Finding
    from traceinsight.model import ModeResult, Run

# a mode's recorded input signatures (timings.json ``input_signatures``), None where none
Recorded = Callable[[str], "dict | None"]

# rule -> how the fix-applied mode differs from the finding's mode, as axes (``Axes.moved``)
_FIX_AXES: dict[str, dict[str, str]] = {
    "eager-dispatch-bound": {"compile": GRAPH},    # the same call as a graph
    "tiny-ops": {"compile": XLA},                  # the same call, XLA fusing the small ops
    "predict-overhead": {"call": CHEAPER_CALLS[PREDICT][0][0]},
}
# a retraced step: the mode table's retracing fix of the same compile and call, in TF2 (a function
# workload's tf.function with reduce_retracing=True)
_RELAXED_RULES = frozenset({"retracing"})
# the relaxed retracing fix in the words of its code
_RELAXED_FIX = "reduce_retracing=True"
# rules whose saving is read from the mode's own trace even when it says "measured" (the retraces'
# time, not a step with the fix): checked against the fix applied all the same
_ALWAYS_CHECK = frozenset({"retracing"})
# rules whose fix is the same mode with tensor inputs (``+tensor``)
_TENSOR_RULES = frozenset({"numpy-inputs"})
# rules whose fix is a change to the user's code that no mode makes: said, left an estimate
_NOT_A_MODE = {
    "retracing": "reduce_retracing / an input_signature is a change to the step's tf.function "
                 "(a mode only for a function workload's step)",
    "input-bound": "num_parallel_calls and prefetch go on the user's own tf.data map",
    "concentrated-cost": "a cost in a few steps (periodic work) is no mode's to remove",
}


@dataclass(frozen=True)
class Check:
    """One finding to verify: the mode its evidence comes from, the mode with the fix applied
    (``fix_mode``, as ``capture --modes`` names it) and the saving claimed before. ``signature``:
    the input signature a fixed-signature mode runs the step with (the one the finding quotes)."""

    rule: str
    mode: str
    fix_mode: str
    claimed_ms: float | None
    claimed_kind: str | None    # SavingKind's value, None: no saving was claimed
    signature: tuple[ArgSpec, ...] | None = None
    # the fix in the words of the code it changes, where the mode's name alone does not say it
    # (a retracing fix: ``reduce_retracing=True``, ``input_signature=[...]``)
    fix: str | None = None

    def signature_data(self) -> list[dict[str, Any]] | None:
        """The signature as the mode's run.json entry and process take it (data, not source)."""
        return [a.to_dict() for a in self.signature] if self.signature is not None else None

    def to_dict(self) -> dict[str, Any]:
        row: dict[str, Any] = {"rule": self.rule, "mode": self.mode, "fix_mode": self.fix_mode,
                               "claimed_ms": self.claimed_ms, "claimed_kind": self.claimed_kind}
        if self.fix is not None:
            row["fix"] = self.fix
        if self.signature is not None:
            from traceinsight.analysis.retraces import signature_source
            row.update(input_signature=self.signature_data(),
                       input_signature_source=signature_source(self.signature))
        return row


def _fix_kind(f: Finding, kind: ModeKind, kinds: set[ModeKind]) -> ModeKind | None:
    """The kind of the mode with the finding's fix applied to ``kind``'s mode (``kind`` itself
    when it has the fix already), among the kinds the capture can make; None: no mode applies it."""
    if f.rule in _TENSOR_RULES:
        return kind.same_but(input="tensor") if kind.input == "numpy" else None
    if f.rule in _RELAXED_RULES:
        return _retracing_fix(kind, lambda b: b.relaxed_retracing)
    change, ax = _FIX_AXES.get(f.rule), kind.axes()
    if change is None or ax is None:
        return None
    want = ax.moved(**change)
    return kind if want == ax else next((k for k in kinds if k.axes() == want), None)


def _retracing_fix(kind: ModeKind, which: Callable[[Base], bool]) -> ModeKind | None:
    """The mode table's retracing fix (``which`` picks the row: relaxed, fixed signature) of the
    same compile and call as ``kind``'s mode; None where the table has none."""
    row = kind.row
    if row is None:
        return None
    fix = next((b for b in BASES.values() if which(b) and
                (b.compile, b.call, b.tf1_graph) == (row.compile, row.call, row.tf1_graph)), None)
    return kind.same_but(base=fix.name) if fix is not None else None


def _named(kind: ModeKind, workload: object) -> ModeKind:
    """A mode's kind as ``capture --modes`` names it. A function workload's step runs no Keras:
    the Keras 2 flavour the loader gives its modes where the interpreter's Keras is Keras 2
    (``modekind.with_keras``, TF 2.12 - 2.15) is no part of their names."""
    return kind.same_but(flavour="keras3") if workload == "function" and kind.flavour == "tf_keras" else kind


def _capturable(kinds: set[ModeKind], kind: ModeKind) -> bool:
    return kind in kinds


def recorded_from(run_path: Path | None, manifest: Mapping[str, Any]) -> Recorded:
    """A mode's recorded input signatures, read from its timings.json in the run folder (what the
    retrace table's signature was made from)."""
    def read(mode: str) -> dict | None:
        from traceinsight import runfolder
        from traceinsight.analysis.timings import read_timing
        from traceinsight.errors import TraceinsightError
        entry = (manifest.get("modes") or {}).get(mode)
        if run_path is None or not isinstance(entry, dict) or not isinstance(entry.get("dir"), str):
            return None
        try:
            folder = runfolder.inside(Path(run_path), entry["dir"], "mode folder")
            recorded = read_timing(folder)[3]
        except (TraceinsightError, OSError):
            return None
        sigs = recorded.get("input_signatures")
        return sigs if isinstance(sigs, dict) else None
    return read


def quoted_signature(m: ModeResult, recorded: dict | None) -> tuple[ArgSpec, ...] | None:
    """The input signature the retracing finding of ``m`` quotes, as data: the recorded inputs'
    (``retraces.signature_specs``) where a function of the mode retraced for new shapes or Python
    values (``retraces.SIGNATURE_FIXES``, the causes its retrace table quotes a signature for)."""
    from traceinsight.analysis.retraces import SIGNATURE_FIXES, signature_specs
    from traceinsight.retracecause import RetraceCause
    if not recorded:
        return None
    r = m.table("retraces")
    if r.empty or not any(int(row["traced_calls"]) > 1 and RetraceCause.of(row.get("cause"))
                          in SIGNATURE_FIXES for row in r.records()):
        return None
    return signature_specs(recorded)


def signature_source(manifest: Mapping[str, Any], kind_of: Callable[[str], ModeKind],
                     fix: ModeKind) -> str | None:
    """For ``capture --resume RUN --modes <a fixed-signature mode>``: the run's mode, captured ok,
    whose retracing fix with a fixed signature is ``fix`` (its graph function): its recorded
    inputs give the signature. None: the run has none."""
    for name, entry in (manifest.get("modes") or {}).items():
        if isinstance(entry, dict) and entry.get("status") == "ok" and name != name_of(fix):
            kind = kind_of(name)
            row = kind.row
            if (row is not None and not row.retracing_fix
                    and _retracing_fix(kind, lambda b: b.fixed_signature) == fix):
                return name
    return None


def signature_for(run_path: Path, manifest: Mapping[str, Any], fix_name: str
                  ) -> tuple[str, list[dict[str, Any]]]:
    """The input signature a fixed-signature mode added to a run by name (``--resume RUN --modes
    function-signature``) runs with: (the mode whose recorded inputs give it, the signature as
    data). Refused in one line where the run has none to give."""
    from traceinsight.analysis.retraces import signature_specs
    from traceinsight.errors import TraceinsightError
    from traceinsight.modekind import mode_kind
    from traceinsight.present import safe
    modes = manifest.get("modes") or {}
    keras = (manifest.get("environment") or {}).get("keras")

    def kind_of(name: str) -> ModeKind:
        return mode_kind(name, modes.get(name), keras)
    src = signature_source(manifest, kind_of, kind_of(fix_name))
    if src is None:
        raise TraceinsightError(
            f"mode {safe(fix_name, 80)!r} runs the step with the input_signature its retracing "
            "finding quotes: this run has no graph function mode captured ok to take it from")
    sig = signature_specs(recorded_from(run_path, manifest)(src) or {})
    if sig is None:
        raise TraceinsightError(
            f"mode {safe(fix_name, 80)!r}: the inputs {safe(src, 80)} recorded give no "
            "input_signature (they never changed, or an argument no TensorSpec of a plain dtype "
            "describes)")
    return src, [a.to_dict() for a in sig]


def plan(run: Run, tried: frozenset[str] = frozenset(), recorded: Recorded | None = None
         ) -> tuple[list[Check], list[dict]]:
    """The modes to add to check the run's unmeasured findings (and split the factor table's
    gaps), and the findings it cannot check, each with why. ``tried``: modes already added (or
    refused) in an earlier round, never asked again. ``recorded``: a mode's recorded input
    signatures (default: its timings.json in the run folder), which give the signature a
    retracing finding quotes."""
    wl = run.manifest.get("workload") if isinstance(run.manifest, dict) else None
    workload = wl.get("kind") if isinstance(wl, dict) else None
    kinds = set(all_kinds(workload if workload in ("keras", "function") else None))
    if recorded is None:
        recorded = recorded_from(run.path, run.manifest if isinstance(run.manifest, dict) else {})
    checks: list[Check] = []
    signature_checks: list[Check] = []
    left: list[dict] = []
    wanted: set[str] = set()
    has_y = any(ax is not None and ax.task == "train"
                for ax in (m.kind.axes() for m in run.ok_modes()))
    for f in run.findings:
        if not f.modes or f.modes[0] not in run.modes:
            continue
        if f.saving_kind is SavingKind.MEASURED and f.rule not in _ALWAYS_CHECK:
            continue
        m = run.modes[f.modes[0]]
        if f.rule in _RELAXED_RULES:   # beside reduce_retracing: the signature the finding quotes
            sig = _signature_check(f, m, _named(m.kind, workload), kinds, recorded, tried, run)
            if isinstance(sig, Check):
                signature_checks.append(sig)
            elif sig is not None:
                left.append(sig)
        mk = _named(m.kind, workload)
        k = _fix_kind(f, mk, kinds)
        if k is None or k == mk or not _capturable(kinds, k):
            if k == mk:
                left.append({"rule": f.rule, "mode": m.name, "why": _applied_already(f, m)})
            elif f.rule in _NOT_A_MODE:
                left.append({"rule": f.rule, "mode": m.name, "why": _NOT_A_MODE[f.rule]})
            continue
        name = name_of(k)
        ax = k.axes()
        if ax is not None and ax.task == "train" and not has_y:
            continue
        if name in run.modes and run.modes[name].ok:
            continue      # the rule already measures against it where it can
        if name in tried:
            left.append({"rule": f.rule, "mode": m.name,
                         "why": f"the fix-applied mode {name} was added and did not run"})
            continue
        checks.append(Check(f.rule, m.name, name, _num(f.saving_ms),
                            f.saving_kind.value if f.saving_kind is not None else None,
                            fix=_RELAXED_FIX if k.row is not None and k.row.relaxed_retracing
                            else None))
        wanted.add(name)
    for c in signature_checks:     # after the finding's other checks (reduce_retracing's)
        if c.fix_mode not in wanted:
            checks.append(c)
            wanted.add(c.fix_mode)
    table = run.factors
    for g in table.gaps if table is not None else ():
        for name in g.missing:
            if name not in run.modes and name not in tried and name not in wanted:
                checks.append(Check("factor-gap", g.from_mode, name, None, None))
                wanted.add(name)
    return checks, left


def _applied_already(f: Finding, m: ModeResult) -> str:
    """Why a finding in a mode that has its fix applied is left: its code must change. A step
    retraced under ``reduce_retracing=True`` for new Python values (its retrace table's cause):
    that option relaxes shapes only, and the signature or tensors stop them."""
    if f.rule in _RELAXED_RULES:
        from traceinsight.retracecause import RetraceCause
        r = m.table("retraces")
        python = (RetraceCause.PYTHON_VALUES, RetraceCause.SHAPES_AND_PYTHON_VALUES)
        if not r.empty and any(int(row["traced_calls"]) > 1 and RetraceCause.of(row.get("cause"))
                               in python for row in r.records()):
            return ("reduce_retracing=True is applied and the step still retraces for new Python "
                    "values, which it does not relax: pass them as tensors (tf.constant) or give "
                    "an input_signature")
    return "the mode has the fix applied already: what is left needs the workload's code changed"


def _signature_check(f: Finding, m: ModeResult, kind: ModeKind, kinds: set[ModeKind],
                     recorded: Recorded, tried: frozenset[str], run: Run) -> Check | dict | None:
    """The check of a retracing finding's quoted input signature (a fixed-signature mode), a
    ``left`` row saying why it cannot be checked, or None (no signature is the fix: nothing to
    say beside reduce_retracing's check)."""
    k = _retracing_fix(kind, lambda b: b.fixed_signature)
    if k is None or k == kind or not _capturable(kinds, k):
        return None
    sig = quoted_signature(m, recorded(m.name))
    if sig is None:
        return None
    name = name_of(k)
    if name in run.modes and run.modes[name].ok:
        return None
    if name in tried:
        return {"rule": f.rule, "mode": m.name,
                "why": f"the fix-applied mode {name} (its input_signature) was added and did not run"}
    from traceinsight.analysis.retraces import signature_source
    return Check(f.rule, m.name, name, _num(f.saving_ms),
                 f.saving_kind.value if f.saving_kind is not None else None, sig,
                 f"input_signature={signature_source(sig)}")


def modes_to_add(checks: list[Check]) -> list[str]:
    return list(dict.fromkeys(c.fix_mode for c in checks))


def measured(run: Run, checks: list[Check]) -> list[dict[str, Any]]:
    """Each check with the saving measured: the run's comparison of the finding's mode against the
    fix-applied one (median difference with its interval), and what the rule now says."""
    out = []
    for c in checks:
        row = c.to_dict()
        fm = run.modes.get(c.fix_mode)
        if fm is None or not fm.ok or not len(fm.step_samples_ms) or c.mode not in run.modes:
            if c.signature is not None:
                row.update(traces=None, signature_held=None)   # its error line says why
            row.update(status="not measured",
                       why=(fm.error if fm is not None and fm.error else "the mode did not run"))
            out.append(row)
            continue
        if c.signature is not None:
            # the fixed-signature mode's process counted the step's traces (its run.json details)
            entry = (run.manifest.get("modes") or {}).get(c.fix_mode) or {}
            traces = (entry.get("details") or {}).get("traces")
            row["traces"] = traces if isinstance(traces, int) else None
            row["signature_held"] = row["traces"] == 1
            if not row["signature_held"]:   # never the case for a mode recorded ok: said anyway
                row.update(status="not measured",
                           why=f"the input_signature did not hold: {row['traces']} traces recorded")
                out.append(row)
                continue
        cmp = run.compare(c.mode, c.fix_mode)
        row.update(status="measured", measured_ms=_num(cmp.delta_ms), measured_lo=_num(cmp.delta_lo),
                   measured_hi=_num(cmp.delta_hi), ratio=_num(cmp.ratio),
                   ratio_lo=_num(cmp.ratio_lo), ratio_hi=_num(cmp.ratio_hi),
                   significant=bool(cmp.significant))
        now = next((f for f in run.findings if f.rule == c.rule and f.modes[:1] == (c.mode,)), None)
        row["finding_now_ms"] = _num(now.saving_ms) if now is not None else None
        row["finding_now_kind"] = (now.saving_kind.value if now is not None and now.saving_kind
                                   is not None else None)
        out.append(row)
    return out


def _num(x: float | None) -> float | None:
    """A figure as run.json holds it: JSON has no NaN (no interval is null)."""
    return float(x) if x is not None and math.isfinite(x) else None


def record(manifest: dict, budget_s: float, spent_s: float, rounds: int, rows: list[dict],
           left: list[dict], out_of_budget: list[str]) -> None:
    """What --verify did, in run.json (``verify``): every report shows it. ``several_fixes``: the
    findings checked against more than one fix applied (a retraced step: reduce_retracing and the
    quoted input_signature), each with its rows' fix-applied modes: one row per fix, one claim."""
    by: dict[tuple[str, str], list[str]] = {}
    for r in rows:
        by.setdefault((r["rule"], r["mode"]), []).append(r["fix_mode"])
    several = [{"rule": rule, "mode": mode, "fix_modes": fixes}
               for (rule, mode), fixes in by.items() if len(fixes) > 1]
    manifest["verify"] = {"budget_s": budget_s, "spent_s": round(spent_s, 1), "rounds": rounds,
                          "checked": rows, "left": left, "out_of_budget": out_of_budget,
                          "several_fixes": several,
                          "note": "the fix-applied modes were captured after the first pass: their "
                                  "rounds are interleaved with each other, not with it"}
