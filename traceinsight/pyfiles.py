"""Which package a Python source file belongs to: user code, keras, tensorflow, traceinsight (the
capture's own drivers, which run inside the workload process) or other.

The python tracer names frames ``$<base name>:<line> <function>``, without the directory, so the
capture records, in the workload process itself, the base name -> group(s) of every module loaded
(``timings.json`` key ``python_files``). Kept free of heavy imports: the workload process and the
analysis both use it.
"""

from __future__ import annotations

import os
import sys

GROUPS = ("user", "keras", "tensorflow", "traceinsight", "other")
# this package's folder: its frames in a trace are the tool's, never the user's
OWN_ROOT = os.path.dirname(os.path.realpath(__file__))


def own_files() -> frozenset[str]:
    """Base names of the modules of this package that run in a workload process (the capture's
    drivers and the hooks of ``run`` / ``profile``): how traces recorded before the group existed
    still place them."""
    names = set()
    for sub in ("capture", os.path.join("capture", "hook")):
        try:
            names |= {n for n in os.listdir(os.path.join(OWN_ROOT, sub)) if n.endswith(".py")}
        except OSError:
            pass
    names.discard("__init__.py")
    return frozenset(names)


def path_group(path: str, workload: str | None = None) -> str:
    real = os.path.realpath(path)
    if workload and real == os.path.realpath(workload):
        return "user"
    if real.startswith(OWN_ROOT + os.sep):
        return "traceinsight"
    parts = set(real.replace("\\", "/").split("/"))
    if parts & {"keras", "tf_keras"}:
        return "keras"
    if parts & {"tensorflow", "tsl", "xla", "tensorflow_core"}:
        return "tensorflow"
    if workload and os.path.dirname(real) == os.path.dirname(os.path.realpath(workload)):
        return "user"  # a module next to the workload file: the user's own code
    return "other"


def loaded_python_files(workload: str | None = None) -> dict[str, str]:
    """Base name -> its group(s) joined by "+" (``"keras+tensorflow"`` when files of both share
    the name), for every module loaded in this process; names only in "other" are left out."""
    out: dict[str, set[str]] = {}
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if not isinstance(path, str) or not path:
            continue
        out.setdefault(os.path.basename(path), set()).add(path_group(path, workload))
    return {name: "+".join(g for g in GROUPS if g in groups)
            for name, groups in sorted(out.items()) if groups != {"other"}}


def pick(groups: str | list[str]) -> str:
    """One group for a base name several files share: user, then keras, then tensorflow."""
    names = groups.split("+") if isinstance(groups, str) else groups
    for g in GROUPS:
        if g in names:
            return g
    return "other"
