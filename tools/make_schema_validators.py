"""Write the run folder's schema validators as Python modules: ``fastjsonschema.compile_to_code``
of traceinsight/schemas/run.schema.json and timings.schema.json into
traceinsight/schemas/_run_validator.py and _timings_validator.py, each with the SHA-256 of the
schema it was made from; the exceptions the code raises are traceinsight/schemas/refused.py's.

    .venv/bin/python tools/make_schema_validators.py            (after changing a schema)
    .venv/bin/python tools/make_schema_validators.py --check    (exit 1 where one is stale)

Loading a run folder then imports the validator instead of compiling the schema in every
process; ``runfolder`` compiles the schema itself when a module's digest is not its schema's
(a stale module never checks a document), and tests/test_validation.py fails until this script
is run again.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = ROOT / "traceinsight" / "schemas"
NAMES = ("run.schema.json", "timings.schema.json")

HEADER = '''"""The compiled validator of traceinsight/schemas/{name}: written by
tools/make_schema_validators.py (fastjsonschema.compile_to_code), never by hand; run it again
after changing the schema."""
# ruff: noqa
# mypy: ignore-errors
# fmt: off
'''


FASTJSONSCHEMA_IMPORT = "from fastjsonschema import JsonSchemaValueException, JsonSchemaValuesException\n"
OWN_IMPORT = ("from traceinsight.schemas.refused import JsonSchemaValueException, "
              "JsonSchemaValuesException\n")
# fastjsonschema's code counts a decimal.Decimal as a number (``isinstance(x, (int, float,
# Decimal))``); a document json.loads read holds none, so nothing is one here, and the module
# imports no decimal (start-up time)
DECIMAL_IMPORT = "from decimal import Decimal\n"
NO_DECIMAL = "Decimal = ()   # (json.loads makes no Decimal: see tools/make_schema_validators.py)\n"


def module_path(name: str) -> Path:
    return SCHEMAS / f"_{name.split('.')[0]}_validator.py"


def digest(name: str) -> str:
    return hashlib.sha256((SCHEMAS / name).read_bytes()).hexdigest()


def generate(name: str) -> str:
    import fastjsonschema
    schema = json.loads((SCHEMAS / name).read_text(encoding="utf-8"))
    code = fastjsonschema.compile_to_code(schema)
    entry = "validate_" + "".join(c if c.isalnum() else "_" for c in schema["$id"])
    if f"def {entry}(" not in code:
        sys.exit(f"{name}: no function {entry} in fastjsonschema's code")
    if code.count(FASTJSONSCHEMA_IMPORT) != 1:
        sys.exit(f"{name}: fastjsonschema's code does not import its exceptions as expected")
    # its exceptions from traceinsight (loading a run then never imports fastjsonschema)
    code = code.replace(FASTJSONSCHEMA_IMPORT, OWN_IMPORT)
    if code.count(DECIMAL_IMPORT) != 1 or "Decimal(" in code or "Decimal." in code:
        sys.exit(f"{name}: fastjsonschema's code uses Decimal otherwise than expected")
    code = code.replace(DECIMAL_IMPORT, NO_DECIMAL)
    return (HEADER.format(name=name) + code.rstrip() + "\n\n\n"
            f"SCHEMA_SHA256 = {digest(name)!r}\nvalidate = {entry}\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true",
                    help="only say which module is stale (exit 1), write nothing")
    args = ap.parse_args()
    stale = []
    for name in NAMES:
        path = module_path(name)
        if args.check:
            if f"SCHEMA_SHA256 = {digest(name)!r}" not in path.read_text(encoding="utf-8") \
                    if path.exists() else True:
                stale.append(path.name)
            continue
        path.write_text(generate(name), encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")
    if stale:
        sys.exit(f"stale: {', '.join(stale)} (run tools/make_schema_validators.py)")


if __name__ == "__main__":
    main()
