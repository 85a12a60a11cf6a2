"""The package's import graph: which traceinsight modules import which, cycles, layers.

Every ``import`` of a ``traceinsight`` module counts, at module level, inside a function (a lazy
import is still a dependency: it only moves the cost) or under ``if TYPE_CHECKING:`` (a type named
from above is a dependency too: it never runs, but the code that names it depends on it). Usage:

    python tools/import_graph.py            # layers, cycles, largest modules
    python tools/import_graph.py --edges    # every edge

``tests/test_house.py`` uses :func:`graph` and :func:`cycles` to keep the house acyclic.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "traceinsight"


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(tree: ast.AST, here: str, is_package: bool) -> set[str]:
    out: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                out.update(a.name for a in child.names if a.name.split(".")[0] == "traceinsight")
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = here.split(".")
                    base = base if is_package else base[:-1]
                    base = base[: len(base) - (child.level - 1)]
                    mod = ".".join(base + ([child.module] if child.module else []))
                else:
                    mod = child.module or ""
                if mod.split(".")[0] != "traceinsight":
                    continue
                out.add(mod)
                # `from traceinsight.analysis import load` imports the submodule
                out.update(f"{mod}.{a.name}" for a in child.names)
            visit(child)

    visit(tree)
    return out


def graph() -> dict[str, set[str]]:
    """module -> the traceinsight modules it imports (only modules that exist)."""
    files = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    g: dict[str, set[str]] = {}
    for name, path in files.items():
        deps = _imports(ast.parse(path.read_text(encoding="utf-8")), name, path.name == "__init__.py")
        # a package's __init__ is imported by every submodule anyway: count real modules only
        g[name] = {d for d in deps if d in files and d != name and not files[d].name == "__init__.py"}
    return g


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]
    sys.setrecursionlimit(10000)

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in g.get(v, ()):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            strong(v)
    return out


def layers(g: dict[str, set[str]]) -> dict[str, int]:
    """Layer of each module: 0 imports nothing of the package; else 1 + its deepest import
    (modules of one cycle share a layer)."""
    comp_of: dict[str, int] = {}
    comps = cycles(g)
    for i, c in enumerate(comps):
        for m in c:
            comp_of[m] = i
    memo: dict[str, int] = {}

    def depth(v: str, seen: frozenset) -> int:
        if v in memo:
            return memo[v]
        group = set(comps[comp_of[v]]) if v in comp_of else {v}
        deps = {w for m in group for w in g[m]} - group
        d = 0 if not deps else 1 + max(depth(w, seen | group) for w in deps if w not in seen)
        for m in group:
            memo[m] = d
        return d

    return {v: depth(v, frozenset()) for v in g}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--edges", action="store_true", help="print every edge")
    a = ap.parse_args()
    g = graph()
    if a.edges:
        for m in sorted(g):
            for d in sorted(g[m]):
                print(f"{m} -> {d}")
        return 0
    lay = layers(g)
    print(f"{len(g)} modules, {sum(len(d) for d in g.values())} imports, {max(lay.values()) + 1} layers")
    for i in range(max(lay.values()) + 1):
        print(f"  layer {i}: " + ", ".join(sorted(m.removeprefix("traceinsight.") for m in g if lay[m] == i)))
    cyc = cycles(g)
    print(f"{len(cyc)} cycle(s)" + (":" if cyc else ""))
    for c in cyc:
        print("  " + " <-> ".join(m.removeprefix("traceinsight.") for m in c))
    sizes = sorted(((sum(1 for _ in p.open(encoding="utf-8")), module_name(p)) for p in PACKAGE.rglob("*.py")), reverse=True)
    print("largest modules: " + ", ".join(f"{n.removeprefix('traceinsight.')} {k}" for k, n in sizes[:6]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
