"""A finding as data: what a rule of ``traceinsight.findings`` says to change, with its evidence
and saving. It sits at the bottom of the package beside ``model`` so that ``Run.findings`` is
typed and every renderer reads the same fields (the rules that make findings are above)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
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


@dataclass(frozen=True)
class Finding:
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

    def to_dict(self) -> dict:
        """The finding as the report document holds it. ``saving_kind`` is left out: the document
        and its schema (a finding's fields are closed) predate it, and ``saving_basis`` says the
        same in words."""
        d = asdict(self)
        del d["saving_kind"]
        d["modes"] = list(self.modes)
        d["overlaps"] = list(self.overlaps)
        return d
