"""What the committed validators (``_run_validator.py``, ``_timings_validator.py``) raise for a
document they refuse: the exception of fastjsonschema's generated code, with its arguments, made
here so that loading a run folder does not import fastjsonschema (whose import cost more than
checking a run.json). ``runfolder.validate`` catches it as a ``ValueError``, as it catches
fastjsonschema's own (a schema compiled at load)."""

from __future__ import annotations

from typing import Any


class JsonSchemaValueException(ValueError):
    """A refused document: ``message`` says which value and why (``data.modes.x.status must be
    one of ...``), ``name`` the path, ``rule`` the keyword it breaks."""

    def __init__(self, message: str, value: Any = None, name: str | None = None,
                 definition: Any = None, rule: str | None = None) -> None:
        super().__init__(message)
        self.message, self.value, self.name = message, value, name
        self.definition, self.rule = definition, rule


class JsonSchemaValuesException(ValueError):
    """Several refusals at once (only raised by code compiled without fast_fail: never here)."""

    def __init__(self, errors: list[JsonSchemaValueException]) -> None:
        super().__init__("\n".join(str(e) for e in errors))
        self.errors = errors
