"""analysis/names.py is the one table of trace names: no other module of the package writes one as
a literal, every entry is read by some module, and each entry's ``seen`` (the committed traces that
hold it) is exactly what the committed traces hold."""

from __future__ import annotations

import ast
from collections import defaultdict
from functools import cache
from pathlib import Path

import pytest

from traceinsight.analysis import names
from traceinsight.analysis.names import Kind, Source
from traceinsight.xplane import XSpace

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "traceinsight"
NAMES_PY = PACKAGE / "analysis" / "names.py"
DATA = ROOT / "tests" / "data"

# Trace names that are also the package's own words, where a literal means the package's word, not
# the trace's: not checked anywhere.
OUR_WORDS = {
    "python": "a category, and a pass (the python-traced pass)",
    "name": "a key and a column everywhere",
    "traced": "the retrace table's column and timings.json's key for the traced passes",
    "train": "a mode's task (modekind) and the step marker capture writes",
    "test": "a plain word",
    "fusion": "an HLO op type (and an XLA pass of that name)",
    "profile_options": "timings.json's key for the levels a capture asked for",
    "$": "a regular expression's end anchor",
    "cuda": "the environment's CUDA version key",
}
# Single literals that are the package's own words in one file.
ONE_OFFS = {
    ("traceinsight/testing.py", "convert_to_tensor"): "a Python function's name in a made-up hotspot",
    ("traceinsight/tui/mode.py", "Steps"): "a tab's label",
    ("traceinsight/capture/hook/agent.py", "train traceinsight"):
        "the run agent's copy of SCRIPT_STEP_MARKER (it runs in the user's interpreter on the "
        "standard library alone; test_realworld holds the two equal)",
}
# Stats whose value the analysis keeps as a table column of the same name: outside analysis/ a
# literal is that column (model, present, stats and the renderers read it), inside it is checked.
COLUMNS = {
    "step_num": "the steps, memory and device tables' column",
    "requested_bytes": "the memory table's column",
}


def _module_files() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if p != NAMES_PY)


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def test_no_module_writes_a_trace_name():
    table = {t.name for t in names.TABLE}
    found = []
    for path in _module_files():
        rel = _rel(path)
        tree = ast.parse(path.read_text(), rel)
        docs = _docstrings(tree)
        in_analysis = rel.startswith("traceinsight/analysis/")
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Constant) and isinstance(node.value, str)) or id(node) in docs:
                continue
            v = node.value
            if v not in table or v in OUR_WORDS or (v in COLUMNS and not in_analysis) \
                    or (rel, v) in ONE_OFFS:
                continue
            found.append(f"{rel}:{node.lineno}: {v!r}")
    assert not found, "trace names written outside analysis/names.py (import them from there):\n" + \
        "\n".join(found)


def test_the_scan_sees_a_literal():
    """The check above would fail on a literal: a trace name written in a module is found."""
    tree = ast.parse('if "tf_function_call" in table.stat_str: pass')
    consts = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)]
    assert names.TF_FUNCTION_CALL in consts


def test_each_name_is_one_entry():
    seen: dict[str, int] = defaultdict(int)
    for t in names.TABLE:
        seen[t.name] += 1
        assert t.means, t.name
        assert isinstance(t.kind, Kind) and all(isinstance(s, Source) for s in t.seen)
        assert t.seen or t.note, f"{t.name}: no committed trace holds it and no note says why"
    assert [n for n, k in seen.items() if k > 1] == []


def _identifiers_of_names_py() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """names.py's top-level definitions: {identifier: the names it binds} for the table's constants
    and sets, and {identifier: the identifiers its definition reads}."""
    tree = ast.parse(NAMES_PY.read_text())
    table = {t.name for t in names.TABLE}
    binds: dict[str, set[str]] = {}
    reads: dict[str, set[str]] = {}
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            ids = [t.id for t in targets if isinstance(t, ast.Name)]
            value = node.value
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            ids, value = [node.name], node
        else:
            continue
        for ident in ids:
            v = getattr(names, ident, None)
            members = {v} if isinstance(v, str) else set(v) if isinstance(v, (frozenset, tuple)) else set()
            binds[ident] = {m for m in members if isinstance(m, str) and m in table}
            reads[ident] = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)} if value else set()
    return binds, reads


def _read_elsewhere() -> set[str]:
    """The identifiers of names.py the package's other modules import (``from
    traceinsight.analysis.names import X``) or read as ``names.X``."""
    out: set[str] = set()
    for path in _module_files():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module == "traceinsight.analysis.names":
                out.update(a.name for a in node.names)
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                    and node.value.id == "names":
                out.add(node.attr)
    return out


def test_every_name_is_read_by_the_analysis():
    binds, reads = _identifiers_of_names_py()
    elsewhere = _read_elsewhere()
    live = {i for i in binds if i in elsewhere}
    grown = True
    while grown:   # what a read definition of names.py reads is read too
        more = {r for i in live for r in reads.get(i, ()) if r in binds} - live
        live |= more
        grown = bool(more)
    read = {n for i in live for n in binds[i]}
    dead = sorted(t.name for t in names.TABLE if t.name not in read)
    assert not dead, f"entries of analysis/names.py no module reads: {dead}"


# --- what the committed traces hold

def _source_files(source: Source) -> tuple[str, ...]:
    """The committed traces of a source (globs under tests/data): a TF version's stock traces and
    runs under versions/; the 2.21.0 runs of runs/ and attribution/ (their run.json says so)."""
    if source.name.startswith("TF_2_"):
        v = source.value.removeprefix("TF ")
        return (f"versions/{v}", f"versions/tf-{v}-*") + (("runs/*", "attribution/*") if v == "2.21.0" else ())
    return {Source.TF_GPU_DEMO: ("gpu_demo",),
            Source.JAX_0_8_ROCM: ("jax/jax08_*.xplane.pb",),
            Source.JAX_0_10_CPU: ("jax/keras_jax_cpu_train_on_batch.xplane.pb",),
            Source.JAX_TPU: ("jax/tpu_inference_2.xplane.pb",)}[source]


def test_every_committed_tf_version_is_a_source():
    """A TF version committed under tests/data/versions/ is a Source, so its names are checked."""
    committed = {p.name for p in DATA.glob("versions/2.*") if p.is_dir()}
    assert committed == {s.value.removeprefix("TF ") for s in Source if s.name.startswith("TF_2_")}


def test_the_tf_sources_are_what_their_runs_recorded():
    import json
    for folder in [*DATA.glob("runs/*"), *DATA.glob("attribution/*")]:
        assert json.loads((folder / "run.json").read_text())["environment"]["tensorflow"] == "2.21.0"
    for folder in DATA.glob("versions/tf-*"):
        version = folder.name.split("-")[1]
        assert json.loads((folder / "run.json").read_text())["environment"]["tensorflow"] == version


@cache
def _held(source: Source) -> dict[str, frozenset[str]]:
    """What a source's traces hold: {"event" | "stat" | "plane" | "line": names}. Stat values held
    by reference are stat metadata names, so a ``ref_value`` stat's value counts as a stat name."""
    files = sorted({f for pattern in _source_files(source) for hit in DATA.glob(pattern)
                    for f in ([hit] if hit.is_file() else hit.rglob("*.xplane.pb"))})
    assert files, source
    out: dict[str, set[str]] = defaultdict(set)
    for f in files:
        for plane in XSpace.FromString(f.read_bytes()).planes:
            out["plane"].add(plane.name)
            out["stat"].update(md.name for md in plane.stat_metadata.values())
            used: set[int] = set()
            for line in plane.lines:
                out["line"].add(line.name)
                used.update(e.metadata_id for e in line.events)
            out["event"].update(md.name or md.display_name for k, md in plane.event_metadata.items()
                                if k in used)
    return {k: frozenset(v) for k, v in out.items()}


_WHERE = {Kind.EVENT: "event", Kind.EVENT_PREFIX: "event", Kind.STAT: "stat", Kind.STAT_VALUE: "stat",
          Kind.PLANE: "plane", Kind.PLANE_PREFIX: "plane", Kind.LINE: "line", Kind.LINE_PREFIX: "line"}


def _holds(source: Source, t: names.TraceName) -> bool:
    held = _held(source).get(_WHERE[t.kind], frozenset())
    if t.kind in (Kind.EVENT, Kind.STAT, Kind.PLANE, Kind.LINE):
        return t.name in held
    if t.kind is Kind.STAT_VALUE:
        return any(h.startswith(t.name) or h.endswith(t.name) for h in held)
    return any(h.startswith(t.name) for h in held)


@pytest.mark.parametrize("source", list(Source), ids=[s.name for s in Source])
def test_seen_is_what_the_committed_traces_hold(source):
    """Each entry names a source exactly when that source's traces hold the name: the versions the
    table claims are checked both ways (a name a new TF version drops or adds fails here)."""
    claimed = {t.name for t in names.TABLE if source in t.seen}
    holds = {t.name for t in names.TABLE if _holds(source, t)}
    assert sorted(claimed - holds) == [], f"claimed seen in {source.value} but absent"
    assert sorted(holds - claimed) == [], f"held by {source.value}'s traces but not claimed"


def test_a_version_difference_is_visible_in_the_table():
    """What the analysis reads differently by version is told by the table: KernelAndDeviceFunc::Run
    is written by every supported TF (its absence marks an older one), XLA compile events and
    ThreadpoolListener only by 2.21 among the committed TF traces, Keras 2's ``train_function`` marker
    model only by 2.12 - 2.15."""
    by_name = {t.name: t for t in names.TABLE}
    assert set(names.ALL_TF) <= set(by_name[names.KERNEL_RUN].seen)
    tf_of = {n: {s for s in by_name[n].seen if s in names.ALL_TF}
             for n in (names.CPU_COMPILER, names.JIT_COMPILER, names.THREADPOOL_LISTENER)}
    assert all(v == {Source.TF_2_21_0} for v in tf_of.values()), tf_of
    assert {s for s in by_name[names.PROFILED_BATCH].seen if s in names.ALL_TF} == \
        {Source.TF_2_16_2, Source.TF_2_21_0}


def test_traced_call_decides_from_the_stat_value():
    assert names.traced_call("traced-nonXla") and names.traced_call("traced-xla")
    assert not names.traced_call("notTraced-nonXla") and not names.traced_call("eager")
    assert names.xla_call("notTraced-xla") and not names.xla_call("traced-nonXla")
