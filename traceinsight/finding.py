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
    MEASURED = "measured"        # against the mode of the same run with the fix applied
    ESTIMATE = "estimate"        # from the traced categories; no mode with the fix checked it
    UPPER_BOUND = "upper bound"  # all of a cost the fix can remove at most; no mode checked it


@dataclass(frozen=True)
class Finding:
    rule: str                       # stable id, e.g. "eager-dispatch-bound"
    title: str                      # one line, in the user's words
    evidence: str                   # the figures and mode names the rule read
    fix: str                        # a short code snippet naming the TF / Keras API
    saving_ms: float | None = None  # estimated ms/step saved by the fix, None when not estimable
    saving_basis: str = ""          # how saving_ms was estimated, in words
    saving_kind: SavingKind | None = None   # how, as data (None: no saving)
    modes: tuple[str, ...] = ()     # the modes the evidence comes from
    severity: str = "info"          # "high" | "medium" | "low" | "info"
    rank: int = 0                   # 1 = the largest saving; set by find()
    overlaps: tuple[str, ...] = ()  # rules of larger findings on the same step whose saving this
    #                                 one shares (their fixes remove some of the same time)

    def to_dict(self) -> dict:
        """The finding as the report document holds it. ``saving_kind`` is left out: the document
        and its schema (a finding's fields are closed) predate it, and ``saving_basis`` says the
        same in words."""
        d = asdict(self)
        del d["saving_kind"]
        d["modes"] = list(self.modes)
        d["overlaps"] = list(self.overlaps)
        return d
