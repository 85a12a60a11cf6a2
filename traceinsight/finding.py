"""A finding as data: what a rule of ``traceinsight.findings`` says to change, with its evidence
and saving. It sits at the bottom of the package beside ``model`` so that ``Run.findings`` is
typed and every renderer reads the same fields (the rules that make findings are above)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from enum import Enum

SEVERITIES = ("high", "medium", "low", "info")


class SavingKind(str, Enum):
    """How a finding's saving was found, as data: decisions (a severity) read this, never the start
    of ``Finding.saving_basis``, the sentence that says it to people."""
    # exactly the difference of the untraced medians of the mode and the mode of the same run
    # with the fix applied (``Comparison.delta_ms``, the figure the summary shows for the pair)
    MEASURED = "measured"
    # no mode with the fix applied: the category split's share of the untraced step
    # (``findings.in_step``), or a figure of the untraced steps; the basis says which
    ESTIMATE = "estimate"
    UPPER_BOUND = "upper bound"  # all of a cost the fix can remove at most; no mode checked it


class Change(str, Enum):
    """A change a fix recommends, as data: what keeps one run's advice consistent (no fix
    recommends XLA where a finding measured it slower) without searching the fixes' text."""
    XLA_ON = "xla on"     # compile the step with XLA (jit_compile=True)
    XLA_OFF = "xla off"   # compile it without XLA (jit_compile=False)


def advice(change: Change, *lines: str) -> tuple[tuple[Change, str], ...]:
    """``Finding.advice`` for lines of a fix that each recommend ``change``."""
    return tuple((change, line) for line in lines)


@dataclass(frozen=True)
class Finding:
    """What to change, from one rule: the figures it read, the fix and what the fix saves."""

    rule: str                       # stable id, e.g. "eager-dispatch-bound"
    title: str                      # one line, in the user's words
    evidence: str                   # the figures and mode names the rule read
    fix: str                        # a short code snippet naming the TF / Keras API
    saving_ms: float | None = None  # ms/step saved by the fix (at most the whole untraced step),
    #                                 None when not known (or a one-time cost, not per step)
    saving_basis: str = ""          # how saving_ms was found, in words (starts with the kind)
    saving_kind: SavingKind | None = None   # how, as data (None: no saving)
    modes: tuple[str, ...] = ()     # the modes the evidence comes from
    severity: str = "info"          # "high" | "medium" | "low" | "info"
    rank: int = 0                   # 1 = the largest saving; set by find()
    overlaps: tuple[str, ...] = ()  # rules of larger findings on the same step whose saving this
    #                                 one shares (their fixes remove some of the same time: the
    #                                 savings do not add up)
    advice: tuple[tuple[Change, str], ...] = ()   # the lines of ``fix`` that recommend a change,
    #                                 each with its change, as the rule wrote them

    def recommends(self, change: Change) -> bool:
        return any(c is change for c, _ in self.advice)

    def without(self, change: Change, note: str) -> Finding:
        """The finding with the lines of its fix that recommend ``change`` left out, and ``note``
        (a comment line) saying why; unchanged when no line recommends it."""
        drop = {line for c, line in self.advice if c is change}
        if not drop:
            return self
        kept = [ln for ln in self.fix.splitlines() if ln not in drop] + [note]
        return replace(self, fix="\n".join(kept),
                       advice=tuple((c, ln) for c, ln in self.advice if c is not change))

    def to_dict(self) -> dict:
        """The finding as the report document holds it. ``saving_kind`` is left out: the document
        and its schema (a finding's fields are closed) predate it, and ``saving_basis`` says the
        same in words; so is ``advice``, whose lines are in ``fix``."""
        d = asdict(self)
        del d["saving_kind"], d["advice"]
        d["modes"] = list(self.modes)
        d["overlaps"] = list(self.overlaps)
        return d
