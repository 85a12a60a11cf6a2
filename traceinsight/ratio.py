"""How two modes' step times compare, as data (``RatioEstimate``): the one estimate every page
shows, computed by ``stats.mode_ratio``. It sits below the model beside ``Comparison``
(``traceinsight.comparison``), which carries its fields."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RatioEstimate:
    """The one estimate of how two modes' step times compare; every page shows this one.

    ratio: for two modes timed in the same interleaved rounds (``paired`` > 0), the geometric
    mean of their paired rounds' ratios; else median(a) / median(b) of all their untraced steps.
    lo, hi: its 95 % interval (NaN: none, ``note`` says why). orders: the interval excludes 1 and,
    with paired rounds, every one orders them the same way. significant: ``orders``, and for
    modes timed apart (no paired rounds) a change beyond ``RUN_TO_RUN_TOLERANCE`` as well."""

    ratio: float
    lo: float
    hi: float
    significant: bool
    basis: str          # "paired rounds" | "steps within rounds" | "steps"
    note: str = ""      # why there is no interval, or why it is not significant
    round_ratios: tuple[float, ...] = ()
    orders: bool = False
    paired: int = 0     # how many paired rounds the ratio comes from (0: timed apart)
