"""The rule ids a finding can carry: one list (``findings.RULE_IDS``, read from the registry), which
every ``rule=`` of the rules' modules uses and the JSON report's schema repeats for its consumers; the JSON report of
every committed run, and of hand-made runs showing the findings no committed run shows, valid
against that schema; and each finding's saving kind (``Finding.saving_kind``) on those runs."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import jsonschema
import pytest

import traceinsight
from traceinsight import findings
from traceinsight.derive import complete
from traceinsight.finding import SavingKind
from traceinsight.model import Run
from traceinsight.report import render
from traceinsight.report.json import load_schema
from traceinsight.testing import _breakdown, make_mode, sample_run

DATA = Path(__file__).parent / "data"
RUN_DIRS = sorted(p for d in ("runs", "attribution") for p in (DATA / d).iterdir()
                  if (p / "run.json").is_file())


def _literal_rule_ids(node: ast.expr) -> set[str]:
    """The ids a ``rule=`` expression can give: a string literal, or a choice between literals
    (``"a" if x else "b"``). Anything else (an f-string, a name, a call) cannot be checked against
    the list, and fails the test that reads it."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, ast.IfExp):
        return _literal_rule_ids(node.body) | _literal_rule_ids(node.orelse)
    raise AssertionError(f"line {node.lineno}: rule={ast.unparse(node)} is not a literal id of "
                         "findings.RULE_IDS")


def _rule_literals(tree: ast.AST | None = None) -> set[str]:
    """Every ``rule=`` of the package's modules (of ``tree`` only, when given)."""
    trees = [tree] if tree is not None else [
        ast.parse(p.read_text(encoding="utf-8")) for p in sorted(Path(findings.__file__).parent.glob("*.py"))]
    return set().union(*(_literals_of(t) for t in trees))


def _literals_of(tree: ast.AST) -> set[str]:
    out: set[str] = set()
    for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
        name = call.func.id if isinstance(call.func, ast.Name) else getattr(call.func, "attr", "")
        if name == "Finding":
            assert not call.args, f"line {call.lineno}: Finding(...) takes its fields by name"
        for kw in call.keywords:
            if kw.arg == "rule":
                out |= _literal_rule_ids(kw.value)
    return out


def test_the_schema_lists_the_codes_rule_ids():
    enum = load_schema()["$defs"]["finding"]["properties"]["rule"]["enum"]
    assert len(set(enum)) == len(enum) and len(set(findings.RULE_IDS)) == len(findings.RULE_IDS)
    assert sorted(enum) == sorted(findings.RULE_IDS)


def test_each_registry_row_names_the_ids_its_rule_writes():
    """A registry row's ids are the ``rule=`` literals of its function (helpers a rule calls write
    none), so a new finding is its function and its row."""
    import inspect
    import textwrap
    for row in findings.REGISTRY:
        tree = ast.parse(textwrap.dedent(inspect.getsource(row.function)))
        assert _rule_literals(tree) == set(row.ids), row.function.__name__


def test_every_rule_id_the_rules_write_is_listed():
    """Read from the source, so that a rule added with an id of its own (or an id built at run
    time) fails here before a report with it fails its schema; and no listed id is one no rule
    writes."""
    assert _rule_literals() == set(findings.RULE_IDS)


def test_the_rule_literal_reader_catches_what_it_cannot_check():
    def ids(src: str) -> set[str]:
        return _literal_rule_ids(ast.parse(src, mode="eval").body)

    assert ids('"a" if x else "b"') == {"a", "b"}
    for bad in ('f"xla-{x}"', "name", '"a" if x else f"{y}"'):
        with pytest.raises(AssertionError):
            ids(bad)


# ---------------------------------------------------------------------------------- hand-made runs


def _run(*modes) -> Run:
    return complete(Run(path=None, name="t", modes={m.name: m for m in modes}))


def tf1_vs_tf2() -> Run:
    return _run(make_mode("tf1:predict_on_batch", {"op": 0.8, "python": 0.25}, untraced_ms=1.05),
                make_mode("predict_on_batch", {"op": 0.8, "python": 0.7, "dispatch": 0.5},
                          untraced_ms=2.0))


def concentrated_cost() -> Run:
    """Python work in every 10th step (a checkpoint-like spike)."""
    m = make_mode("fit", {"op": 2.0, "python": 0.2}, n_steps=40, jitter=0.01)
    steps = m.steps.copy()
    spike = steps["step_num"] % 10 == 5
    steps.loc[spike, "python"] += 3.0
    steps.loc[spike, "wall_ms"] += 3.0
    return _run(m.replace(steps=steps, breakdown=_breakdown(steps)))


def jax_backend(faster: bool) -> Run:
    jax_ms, tf_ms = (3.5, 7.1) if faster else (7.1, 3.5)
    return _run(
        make_mode("train_on_batch", {"op": tf_ms - 1.1, "dispatch": 0.7, "python": 0.4},
                  untraced_ms=tf_ms, ops=[("Adam/update", "ResourceApplyAdam", "worker", 8, 1.0)]),
        make_mode("jax:train_on_batch", {"op": jax_ms - 0.9, "dispatch": 0.4, "python": 0.5},
                  untraced_ms=jax_ms, first_extra={"compile": 2900.0, "tracing": 170.0},
                  ops=[("multiply_divide_fusion", "fusion", "worker", 1, 0.3)]))


# name -> (the run, a rule it must show: the finding whose report is the point)
HAND_MADE = {
    "sample": (sample_run, "eager-dispatch-bound"),
    "tf1-vs-tf2": (tf1_vs_tf2, "tf1-vs-tf2"),
    "concentrated-cost": (concentrated_cost, "concentrated-cost"),
    "jax-backend-faster": (lambda: jax_backend(True), "jax-backend-faster"),
    "jax-backend-slower": (lambda: jax_backend(False), "jax-backend-slower"),
}


@pytest.fixture(scope="module", params=[p.name for p in RUN_DIRS] + list(HAND_MADE))
def run(request) -> Run:
    if request.param in HAND_MADE:
        make, rule = HAND_MADE[request.param]
        run = make()
        assert rule in [f.rule for f in run.findings]
        return run
    return traceinsight.load(next(p for p in RUN_DIRS if p.name == request.param))


def test_the_json_report_validates_against_its_schema(run):
    assert run.figures is not None and run.figures.findings_error is None
    doc = json.loads(render(run, "json"))
    jsonschema.validate(doc, load_schema())
    assert [f["rule"] for f in doc["findings"]] == [f.rule for f in run.findings]


# how the sentences of the findings (as the goldens hold them) begin, by the kind of their saving
BASIS_OPENINGS = {"measured": SavingKind.MEASURED, "estimate": SavingKind.ESTIMATE,
                  "upper bound": SavingKind.UPPER_BOUND}


def test_every_saving_has_the_kind_its_sentence_says(run):
    """A regression check against the sentences: a finding with a saving has a kind, and it is the
    one its ``saving_basis`` opens with; a finding without one has none. Severity reads the kind:
    only a measured saving is high."""
    for f in run.findings:
        if f.saving_ms is None:
            assert f.saving_kind is None, (f.rule, f.saving_basis)
            continue
        opening = next(w for w in BASIS_OPENINGS if f.saving_basis.startswith(w))
        assert f.saving_kind is BASIS_OPENINGS[opening], (f.rule, f.saving_basis)
        assert f.severity != "high" or f.saving_kind is SavingKind.MEASURED
        assert "saving_kind" not in f.to_dict()   # the report document's fields are as before
