"""The house's rules, checked on the source: the import graph, the library's effects on its caller,
and comments that stay true.

The import graph counts every import of a traceinsight module, lazy ones inside functions and
those under ``if TYPE_CHECKING:`` too (``tools/import_graph.py`` prints it). A few imports still close cycles; they are listed below, and
the test fails when the graph without them has a cycle (a new one), or when a listed import is gone
(then take it off the list, so the list only shrinks).
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

spec = importlib.util.spec_from_file_location("import_graph", ROOT / "tools" / "import_graph.py")
assert spec and spec.loader
import_graph = importlib.util.module_from_spec(spec)
spec.loader.exec_module(import_graph)

# the imports that still close cycles (none: the list only shrinks, and is empty)
KNOWN_BACK_EDGES: set[tuple[str, str]] = set()


def _short(mods) -> set[str]:
    return {m.removeprefix("traceinsight.") for m in mods}


def test_no_new_import_cycle():
    g = import_graph.graph()
    short = {m.removeprefix("traceinsight."): _short(d) for m, d in g.items()}
    for a, b in KNOWN_BACK_EDGES:
        assert b in short.get(a, ()), f"{a} no longer imports {b}: take it off KNOWN_BACK_EDGES"
    rest = {m: {d for d in deps if (m, d) not in KNOWN_BACK_EDGES} for m, deps in short.items()}
    assert import_graph.cycles(rest) == [], "a new import cycle"


def test_the_model_imports_nothing_above_it():
    """``Run`` and ``ModeResult`` are data: what is computed from them (summary, comparisons,
    findings, host groups) and how they are shown come from above, through their analyzer."""
    deps = _short(import_graph.graph()["traceinsight.model"])
    above = {d for d in deps if d.split(".")[0] in ("analysis", "compare", "findings", "report",
                                                    "tui", "stats", "derive", "factors")}
    assert not above, above


def test_the_analysis_imports_no_renderer():
    """The pipeline runs one way: what computes (the analysis, the model and the figures of the
    whole run) never imports what formats (report, tui, commands), lazily or not."""
    computing = ("analysis", "derive", "stats", "compare", "findings", "factors", "model", "finding",
                 "columns", "modekind", "resample", "stepsource", "retracecause", "runfolder",
                 "rundiff", "comparison", "factortable", "hostgroup", "ratio", "categories")
    above = ("report", "tui", "commands", "cli", "testing")
    found = {m: sorted(d for d in deps if d.split(".")[0] in above)
             for m, deps in ((m.removeprefix("traceinsight."), _short(d))
                             for m, d in import_graph.graph().items())
             if m.split(".")[0] in computing}
    assert not {m: d for m, d in found.items() if d}, found


def test_the_diff_document_computes_nothing():
    """The diff of two runs is computed in ``rundiff`` (comparisons, run-to-run significance,
    per-category intervals, the retrace merge); ``report/diff.py`` only writes its document: it
    imports stats, compare and pandas for types at most, and calls none of their functions."""
    import ast
    tree = ast.parse((ROOT / "traceinsight" / "report" / "diff.py").read_text())
    typing_only = {id(n) for node in ast.walk(tree)
                   if isinstance(node, ast.If) and isinstance(node.test, ast.Name)
                   and node.test.id == "TYPE_CHECKING" for n in ast.walk(node)}
    runtime_imports = [f"{node.module}" if isinstance(node, ast.ImportFrom)
                       else ", ".join(a.name for a in node.names)
                       for node in ast.walk(tree)
                       if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in typing_only]
    assert not [m for m in runtime_imports
                if m.split(".")[-1] in ("stats", "compare", "resample") or m.startswith("pandas")], \
        runtime_imports
    computing = {"compare_modes", "between_runs", "delta_ci", "mode_ratio", "difference_ci",
                 "op_type_diff", "op_diff", "family_diff", "category_diff", "match_modes", "compare",
                 "groupby", "merge"}
    # a name it refers to, or a method it calls (``run.compare(...)``, ``df.merge(...)``)
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | \
           {n.func.attr for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}
    assert not used & computing, used & computing


def test_import_graph_finds_a_cycle_and_counts_type_checking(tmp_path):
    """The graph tool's own check, on a hand-made package: a lazy import closes a cycle, and so
    does an import under ``if TYPE_CHECKING`` (a type named from above is a dependency)."""
    g = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert [sorted(c) for c in import_graph.cycles(g)] == [["a", "b", "c"]]
    src = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from traceinsight import model\n"
           "def f():\n    from traceinsight.compare import x\n")
    import ast
    assert import_graph._imports(ast.parse(src), "traceinsight.stats", False) == {
        "traceinsight", "traceinsight.model", "traceinsight.compare", "traceinsight.compare.x"}


def test_no_module_imports_another_modules_private_names():
    """A name with a leading underscore is its module's own: another module that needs it gets a
    public name (the C extension ``_native`` and third-party modules are not ours to rename)."""
    import ast
    found = []
    for f in sorted((ROOT / "traceinsight").rglob("*.py")):
        for node in ast.walk(ast.parse(f.read_text(), str(f))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("traceinsight"):
                found += [f"{f.relative_to(ROOT)}: {node.module}.{a.name}" for a in node.names
                          if a.name.startswith("_") and not a.name.startswith("__")
                          and a.name != "_native"]
    assert not found, found


def test_importing_traceinsight_imports_no_tensorflow_or_pandas():
    code = ("import sys, traceinsight, traceinsight.cli; "
            "print(sorted(m for m in ('tensorflow', 'pandas', 'keras', 'jax') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=ROOT)
    assert out.stdout.strip() == "[]"


def test_package_index_is_not_written_to_home_unless_asked(tmp_path, monkeypatch):
    """Grouping python-tracer frames needs an index of the installed TF / Keras files; it is kept
    on disk only where TRACEINSIGHT_CACHE names a folder."""
    from traceinsight.analysis import hotspots
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("TRACEINSIGHT_CACHE", raising=False)
    hotspots._package_files.cache_clear()
    try:
        hotspots._package_files()
        assert not (tmp_path / "home").exists()
        monkeypatch.setenv("TRACEINSIGHT_CACHE", str(tmp_path / "cache"))
        hotspots._package_files.cache_clear()
        index = hotspots._package_files()
        written = list((tmp_path / "cache").glob("pyfiles-*.json"))
        assert len(written) == 1
        # a damaged index is ignored and rebuilt
        written[0].write_text("[" * 100000)
        hotspots._package_files.cache_clear()
        assert hotspots._package_files() == index
    finally:
        hotspots._package_files.cache_clear()


def test_package_index_from_install_records_is_the_walks(tmp_path):
    """The index is read from pip's RECORD files beside the packages (one file each) instead of
    walking TensorFlow's tree: on this environment both give the same index, and a package folder
    no RECORD lists (a source checkout) is walked."""
    import os

    from traceinsight.analysis import hotspots
    hotspots._package_files.cache_clear()
    try:
        index = hotspots._package_files()
    finally:
        hotspots._package_files.cache_clear()
    walked: dict[str, str] = {}
    import importlib.util
    for pkg, group in hotspots._PACKAGES:
        spec = importlib.util.find_spec(pkg)
        for root in (spec.submodule_search_locations or []) if spec else []:
            for _, _, names in os.walk(root):
                for f in names:
                    if f.endswith(".py") and walked.get(f) != "keras":
                        walked[f] = group
    assert index == walked and "math_ops.py" in index
    # a package folder beside a dist-info without RECORD, and one with a RECORD
    (tmp_path / "keras" / "sub").mkdir(parents=True)
    (tmp_path / "keras" / "sub" / "only_on_disk.py").write_text("")
    (tmp_path / "keras-9.0.dist-info").mkdir()
    roots = [str(tmp_path / "keras")]
    assert hotspots._recorded_py_files(roots, hotspots._install_records(roots)) == {}
    (tmp_path / "keras-9.0.dist-info" / "RECORD").write_text(
        "keras/sub/listed.py,sha256=x,1\nkeras-9.0.dist-info/RECORD,,\n\"keras/a,b.py\",,\n")
    assert hotspots._recorded_py_files(roots, hotspots._install_records(roots)) == {
        roots[0]: ["listed.py", "a,b.py"]}
    # the csv module's own line ending (CRLF), as a RECORD written by it has
    (tmp_path / "keras-9.0.dist-info" / "RECORD").write_bytes(
        b"keras/sub/listed.py,sha256=x,1\r\nkeras-9.0.dist-info/RECORD,,\r\n\"keras/a,b.py\",,\r\n")
    assert hotspots._recorded_py_files(roots, hotspots._install_records(roots)) == {
        roots[0]: ["listed.py", "a,b.py"]}


SOURCES = [p for d in ("traceinsight", "tests", "tools", "samples") for p in (ROOT / d).rglob("*.py")]


@pytest.mark.parametrize("pattern, why", [
    (re.compile(r"TRACE_FACTS|/work/|\.\./shared"), "points outside the repository"),
    (re.compile(r"\b[Ii]ssue \d+(\.\d+)?\b"), "an issue number the repository cannot resolve"),
])
def test_comments_point_at_nothing_outside_the_repository(pattern, why):
    hits = [f"{p.relative_to(ROOT)}:{i}" for p in SOURCES
            for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
            if pattern.search(line) and p.name != "test_house.py"]
    assert not hits, f"{why}: {hits}"


def test_a_run_made_without_its_analysis_says_so():
    """A Run built by hand holds its modes' own figures; what needs the whole run comes from its
    analyzer, and asking without one names the way to get it instead of a bare AttributeError."""
    from traceinsight.derive import ANALYZER, complete
    from traceinsight.model import Run
    from traceinsight.testing import make_mode
    bare = Run(None, "r", {"eager": make_mode("eager", {"op": 2.0}),
                           "function": make_mode("function", {"op": 1.0})})
    assert bare.fastest == "function" and bare.modes["eager"].median_ms > 0
    for ask in (lambda: bare.findings, lambda: bare.summary(), lambda: bare.compare("eager", "function")):
        with pytest.raises(TypeError, match="derive.complete"):
            ask()
    run = complete(bare)
    assert run.analyzer is ANALYZER and all(m.analyzer is ANALYZER for m in run.modes.values())
    assert run.compare("function", "eager").ratio == pytest.approx(1 / run.compare("eager", "function").ratio)


def test_the_whole_run_is_computed_when_it_is_made_and_only_read_after(monkeypatch):
    """The run's figures (summary, comparisons, findings, host groups) are one frozen result,
    computed by the analysis as the run is made: every renderer afterwards only reads it (no
    summary, finding or comparison is computed again), and nobody can change it."""
    import dataclasses
    import io
    from collections import Counter

    from rich.console import Console

    from traceinsight import compare, findings, stats
    from traceinsight.model import RunFigures
    from traceinsight.report import render, terminal
    from traceinsight.testing import sample_run

    calls: Counter = Counter()

    def counted(module, name):
        real = getattr(module, name)

        def wrapper(*a, **k):
            calls[name] += 1
            return real(*a, **k)
        monkeypatch.setattr(module, name, wrapper)

    counted(stats, "summarize")
    counted(findings, "find")
    counted(compare, "compare_modes")
    counted(stats, "concentrated_costs")
    counted(findings, "traced_disagreements")
    run = sample_run()
    made = dict(calls)
    assert made["summarize"] == 1 and made["find"] == 1 and made["compare_modes"] >= 1
    assert made["traced_disagreements"] == 1 and made["concentrated_costs"] == len(run.modes)
    assert isinstance(run.figures, RunFigures)
    for form in ("md", "html", "json"):
        render(run, form)
    terminal.show(run, console=Console(file=io.StringIO(), width=120))
    for m in run.ok_modes():                    # each mode against the fastest, both ways round
        if m.name == run.fastest:
            continue
        assert run.compare(m.name, run.fastest) is run.compare(m.name, run.fastest)
        run.compare(run.fastest, m.name)
    _ = run.findings, run.host_groups(), run.program_groups
    assert dict(calls) == made, "a renderer computed a figure the run already holds"
    with pytest.raises(dataclasses.FrozenInstanceError):
        run.figures.findings = ()              # type: ignore[misc]
    with pytest.raises(TypeError):
        run.figures.comparisons[("x", "y")] = None   # type: ignore[index]


def test_the_result_is_data_that_compares_by_value():
    """Modes, comparisons and runs compare by their data (tables by value, NaN equal to NaN),
    so two loads of the same run are equal and a changed figure is not."""
    import dataclasses

    import numpy as np

    import traceinsight
    from traceinsight.testing import sample_run
    run = sample_run()
    m = run.modes["eager"]
    assert m == m.replace() and m != m.replace(notes=("a note",))
    assert m.timing == dataclasses.replace(m.timing, steps_s=m.timing.steps_s.copy())
    assert m.timing != dataclasses.replace(m.timing, steps_s=m.timing.steps_s * 2)
    steps = m.steps
    steps.loc[steps.index[0], "op"] = np.nan
    assert m.replace(steps=steps) != m and m.replace(steps=steps) == m.replace(steps=steps)
    c = run.compare("eager", "function")
    assert c == c.flipped().flipped() and c != c.flipped()
    path = ROOT / "tests" / "data" / "runs" / "retracing"
    assert traceinsight.load(path) == traceinsight.load(path, use_cache=False)


def test_a_mode_and_a_comparison_print_as_data_without_pandas():
    """``repr`` of a mode or a comparison shows its tables as stored (``Columns(n rows: ...)``):
    printing one in a REPL builds no DataFrame and imports no pandas."""
    code = ("import sys, traceinsight; run = traceinsight.load(sys.argv[1]); "
            "m = run.modes['eager']; c = run.compare('eager', run.fastest); "
            "text = repr(m) + repr(c); "
            "print('pandas' in sys.modules, 'Columns(' in text, 'DataFrame' in text, "
            "text.startswith('ModeResult(name='))")
    out = subprocess.run([sys.executable, "-c", code, str(ROOT / "tests" / "data" / "runs" / "conv1d")],
                         capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.split() == ["False", "True", "False", "True"], out.stdout + out.stderr


def test_a_run_and_a_mode_print_in_a_few_lines_with_the_pages_figures():
    """``print(run)`` in a REPL is a few lines (each mode's median and its ratio to the fastest,
    as the summary every page shows them, and the top finding), not every array of every mode."""
    import traceinsight
    from traceinsight import present

    run = traceinsight.load(ROOT / "tests" / "data" / "runs" / "conv1d")
    text = repr(run)
    lines = text.splitlines()
    assert len(lines) == 2 + len(run.modes) and len(text) < 1000
    summary = {r["mode"]: r for r in run.table("summary").records()}
    for name, line in zip(run.modes, lines[1:]):
        r = summary[name]
        assert line.split()[0] == name and f"{present.ms(r['median_ms'])} ms/step" in line
        if not r["fastest"]:
            assert present.ratio_ci(r["ratio"], r["ratio_lo"], r["ratio_hi"]) in line
    assert lines[-1] == f"  top finding: {run.findings[0].title}"
    mode = repr(run.modes["eager"])
    assert len(mode) < 400 and "\n" not in mode and "ops=Columns(" in mode


# the per-event drawings made on request, not from the run's figures: the Chrome trace draws the
# pass it analyses again from the mode's files (``export``), the timeline screen analyses one pass when it opens
ANALYSIS_ON_REQUEST = {("report/chrome_trace.py", "traceinsight.analysis.timeline", "pass_files"),
                       ("report/chrome_trace.py", "traceinsight.analysis.timeline", "pass_analysis"),
                       ("report/chrome_trace.py", "traceinsight.analysis", "rules"),
                       ("tui/timeline.py", "traceinsight.analysis", "timeline")}


def test_renderers_import_only_types_and_constants_from_the_analysis():
    """Renderers compute nothing: what ``report/`` and ``tui/`` take from ``traceinsight.analysis``
    (at run time or for types) is a class or a constant, never a function or a module to call;
    what a page shows beside a table (step marks, the hosts' category rows, time per op call, the
    hotspots' order) comes computed with the run (``RunFigures``)."""
    import ast
    import importlib
    import inspect
    found = []
    for folder in ("report", "tui"):
        for path in sorted((ROOT / "traceinsight" / folder).glob("*.py")):
            rel = f"{folder}/{path.name}"
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Import):
                    found += [(rel, a.name, "") for a in node.names
                              if a.name.startswith("traceinsight.analysis")]
                if not (isinstance(node, ast.ImportFrom) and node.module
                        and node.module.startswith("traceinsight.analysis")):
                    continue
                module = importlib.import_module(node.module)
                for a in node.names:
                    obj = getattr(module, a.name)
                    if (rel, node.module, a.name) in ANALYSIS_ON_REQUEST:
                        continue
                    if inspect.ismodule(obj) or (callable(obj) and not inspect.isclass(obj)):
                        found.append((rel, node.module, a.name))
    assert found == [], found


def test_the_figures_are_one_pass_handed_what_it_reads(monkeypatch):
    """The rules read a ``RunView`` (the modes and the figures computed before them), never the
    run being made, which holds no figures until the pass is done; they are handed the
    comparisons of the pairs ``findings.pairing.pairs_compared`` names, and no other."""
    import itertools

    from traceinsight import findings
    from traceinsight.findings.pairing import pairs_compared
    from traceinsight.runview import RunView
    from traceinsight.testing import sample_run

    seen: list = []
    real = findings.find

    def spy(view):
        assert isinstance(view, RunView)
        declared = {frozenset(p) for p in pairs_compared(view)}
        undeclared = [p for p in itertools.combinations(view.modes, 2) if frozenset(p) not in declared]
        assert undeclared
        with pytest.raises(KeyError, match="pairs_compared"):
            view.compare(*undeclared[0])
        seen.append(view)
        return real(view)

    monkeypatch.setattr(findings, "find", spy)
    run = sample_run()
    assert len(seen) == 1 and run.figures is not None and run.figures.findings_error is None
    assert run.findings


def test_renderers_take_no_statistic_of_their_own():
    """A median, mean or percentile a page shows (a chart's scale, its outliers, a summary line)
    comes with the run (``RunFigures``: the step series, the step marks) or the report document:
    no module of ``report/`` or ``tui/`` takes one itself, over binned steps or anything else."""
    import ast
    stats = {"median", "nanmedian", "mean", "nanmean", "percentile", "nanpercentile", "quantile",
             "std", "var", "fmean"}
    found = []
    for folder in ("report", "tui"):
        for path in sorted((ROOT / "traceinsight" / folder).glob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Call):
                    f = node.func
                    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
                    if name in stats:
                        found.append(f"{folder}/{path.name}:{node.lineno} {name}()")
    assert found == [], found
