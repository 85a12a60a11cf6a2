"""The categories every step's main-thread wall time is split into, exclusively, in the order every
page shows them (``model.CATEGORY_HELP`` says what each holds). At the bottom of the package: the
model and the data types below it (``hostgroup``) read them."""

from __future__ import annotations

CATEGORIES: tuple[str, ...] = ("op", "dispatch", "tracing", "compile", "input", "python", "other")
