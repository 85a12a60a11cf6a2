"""run.json / timings.json are checked by a compiled validator (fastjsonschema); jsonschema only
words the error of a refused document. The two must agree on what is valid: checked here on
documents mutated from real ones (the committed runs' run.json and timings.json, and the fuzz
tests' hand-made ones), every mutation a value swapped, a key dropped or a key added."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pytest
from jsonschema import Draft202012Validator
from test_runfolder_fuzz import GOOD_RUN, GOOD_TIMINGS, paths_of

from traceinsight import runfolder
from traceinsight.errors import TraceinsightError

RUNS = Path(__file__).parent / "data" / "runs"

# wrong types and ranges, and the edges of the schemas' own bounds
VALUES = [None, True, False, "x", "", "ok", "failed", "host", "python", "../x", "a/b", ".", "..",
          -5, -1, 0, 1, 2, 1.0, 2.0, 0.5, -1e-3, 1e300, 2 ** 70, 86400, 86401, [], {}, [1, "a"],
          {"a": None}, [[]], [0.1, 0.2], ["0.1"], [True], "x" * 300, {"x": {"y": 1}}]


def documents(schema: str) -> list[dict]:
    good = [GOOD_RUN] if schema == "run.schema.json" else [GOOD_TIMINGS]
    name = "run.json" if schema == "run.schema.json" else "timings.json"
    # one per committed run (a run's modes' timings.json are alike)
    good += [json.loads(sorted(run.rglob(name))[0].read_text())
             for run in sorted(RUNS.iterdir()) if run.is_dir()]
    # as runfolder.read_timings validates them: the long lists of seconds, checked with numpy
    # before, left out
    return [light(d) for d in good]


def light(doc):
    if isinstance(doc, dict):
        return {k: light(v) for k, v in doc.items()}
    if isinstance(doc, list):
        return doc[:3] if len(doc) > 3 and all(isinstance(v, (int, float)) for v in doc) \
            else [light(v) for v in doc]
    return doc


def mutations(doc: dict, rng: np.random.Generator, n: int):
    paths = [p for p in paths_of(doc) if p]
    for k in range(n):
        out = copy.deepcopy(doc)
        p = paths[rng.integers(len(paths))]
        parent = out
        for key in p[:-1]:
            parent = parent[key]
        how = k % 4
        if how <= 1:
            parent[p[-1]] = copy.deepcopy(VALUES[rng.integers(len(VALUES))])
        elif how == 2:
            del parent[p[-1]]
        elif isinstance(parent, dict):
            parent["extra" + str(k % 3)] = copy.deepcopy(VALUES[rng.integers(len(VALUES))])
        else:
            parent.append(copy.deepcopy(VALUES[rng.integers(len(VALUES))]))
        yield out


@pytest.mark.parametrize("schema", ["run.schema.json", "timings.schema.json"])
def test_the_compiled_validator_agrees_with_jsonschema(schema):
    reference = Draft202012Validator(runfolder._schema(schema))
    compiled = runfolder._compiled(schema)
    rng = np.random.default_rng(11)
    checked = refused = 0
    for doc in documents(schema):
        for variant in [doc, *mutations(doc, rng, 250)]:
            want = reference.is_valid(variant)
            try:
                compiled(variant)
                got = True
            except ValueError:       # what the committed validators and fastjsonschema raise
                got = False
            assert got == want, json.dumps(variant)[:500]
            checked += 1
            refused += not want
    # the mutations do hit the schema: a good share is refused, a good share passes
    assert checked > 900 and 0.1 < refused / checked < 0.9


def test_a_refused_document_is_worded_by_jsonschema(tmp_path):
    doc = copy.deepcopy(GOOD_RUN)
    doc["modes"]["eager"]["status"] = 5
    with pytest.raises(TraceinsightError, match=r"run.json: field modes.eager.status: enum "):
        runfolder.validate(doc, "run.schema.json", tmp_path / "run.json")


def test_refused_by_the_compiled_check_alone_is_still_one_line(tmp_path, monkeypatch):
    # were they ever to disagree (none of the mutations above does), the compiled check's own
    # words make the line
    from fastjsonschema import JsonSchemaValueException

    def refuse(data):
        raise JsonSchemaValueException("data.modes.eager.dir must match pattern\nx")

    monkeypatch.setitem(runfolder._COMPILED, "run.schema.json", refuse)
    with pytest.raises(TraceinsightError) as e:
        runfolder.validate(copy.deepcopy(GOOD_RUN), "run.schema.json", tmp_path / "run.json")
    assert "\n" not in str(e.value) and str(e.value).startswith(f"{tmp_path / 'run.json'}: data")


@pytest.mark.parametrize("schema", ["run.schema.json", "timings.schema.json"])
def test_the_committed_validators_are_made_from_the_schemas(schema):
    """A schema changed without running tools/make_schema_validators.py fails here (and loading
    compiles the schema itself meanwhile: a stale validator never checks a document)."""
    import hashlib
    import importlib
    module = importlib.import_module(f"traceinsight.schemas._{schema.split('.')[0]}_validator")
    text = (Path(runfolder.__file__).parent / "schemas" / schema).read_bytes()
    assert module.SCHEMA_SHA256 == hashlib.sha256(text).hexdigest(), \
        "run tools/make_schema_validators.py and commit the modules it writes"
    assert runfolder._compiled(schema) is module.validate


def test_a_stale_validator_is_not_used(monkeypatch):
    from traceinsight.schemas import _run_validator
    monkeypatch.setattr(_run_validator, "SCHEMA_SHA256", "0" * 64)
    monkeypatch.delitem(runfolder._COMPILED, "run.schema.json", raising=False)
    compiled = runfolder._compiled("run.schema.json")
    assert compiled is not _run_validator.validate
    compiled(copy.deepcopy(GOOD_RUN))


def test_checking_a_run_folder_imports_no_schema_library():
    """The committed validators raise traceinsight's own exceptions: a valid run folder is
    checked without importing fastjsonschema or jsonschema (start-up)."""
    import subprocess
    import sys
    run = Path(__file__).parent / "data" / "runs" / "conv1d"
    code = ("import sys; from pathlib import Path; from traceinsight import runfolder; "
            f"runfolder.read_manifest(Path({str(run)!r})); "
            f"runfolder.read_timings(Path({str(run)!r}) / 'eager' / 'timings.json'); "
            "print(sorted(m for m in sys.modules if 'jsonschema' in m))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
