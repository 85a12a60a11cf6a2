"""Python hotspots of a mode (the python-tracer pass): the tracer's frame events parsed into
function, file and line, grouped by where the file comes from (the user's workload, Keras,
TensorFlow, traceinsight, other; installed packages are indexed by file name without importing
them), and summed per steady step."""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

import numpy as np

from traceinsight.analysis import native, rules
from traceinsight.analysis.attribute import Attribution
from traceinsight.analysis.names import EAGER_CONST, PYTHON_FRAME
from traceinsight.analysis.results import PS_PER_MS, in_windows, owned_time, sort_order, steady_windows
from traceinsight.columns import Columns, text
from traceinsight.pyfiles import pick

HOTSPOT_COLUMNS = ["function", "file", "line", "group", "self_ms", "inclusive_ms", "calls_per_step",
                   "op_calls_per_step", "conversions_per_step", "slices_per_step", "input_ms",
                   "dispatch_ms", "entry"]
# op_calls_per_step, conversions_per_step, slices_per_step: the main-thread op calls (of them the
# ``_EagerConst`` runs that convert a value to a tensor, and the ``StridedSlice`` runs) per steady
# step whose issuer is this frame: the innermost frame above the op that is not TensorFlow's own
# (nor a builtin or another package's), i.e. the user's, Keras' or the tool's code that called
# into TensorFlow. input_ms, dispatch_ms: the main-thread time of those categories (conversion
# work, per-op dispatch) owned by events under this frame and by no issuer nested deeper, per steady
# step of the python pass (not scaled: read as shares of the pass's own input and dispatch time).
# entry: the frame (an issuer) was called straight from the user's code or the tool's, with no
# other issuer between: a library's entry point (``Model.train_on_batch``), whose own conversions
# are of the arguments the user passed. What the findings read to tell the user's ops and
# conversions from Keras'.
# the groups whose frames issue ops (``ISSUER_GROUPS``): TensorFlow's own frames and other
# packages' (numpy, builtins) are walked through to the code that called them
ISSUER_GROUPS = ("user", "keras", "traceinsight")

# the file is a base name, or a pseudo-file in angle brackets that may hold spaces and colons:
# "<frozen abc>", "<unknown>", "<string>"
_FRAME = re.compile(r"^\$(?P<file><[^>]*>|[^ :]+)(?::(?P<line>\d+))? (?P<func>.+)$")


def parse_frame(name: str) -> tuple[str, int, str]:
    """``$layer.py:872 __call__`` -> ("layer.py", 872, "__call__"); ``$builtins isinstance`` ->
    ("builtins", 0, "isinstance"); ``$<frozen abc>:117 __instancecheck__`` -> ("<frozen abc>",
    117, "__instancecheck__")."""
    m = _FRAME.match(name)
    if not m:
        return name.lstrip(PYTHON_FRAME), 0, ""
    return m.group("file"), int(m.group("line") or 0), m.group("func")


_PACKAGES = (("tensorflow", "tensorflow"), ("keras", "keras"), ("tf_keras", "keras"),
             ("tsl", "tensorflow"), ("xla", "tensorflow"))


@lru_cache(maxsize=1)
def _package_files() -> dict[str, str]:
    """File basename -> "keras" / "tensorflow" for the installed packages, found without importing
    them. The python tracer records base names only, so this is how frames are grouped. Walking
    TensorFlow's tree takes a while, so the index is kept for the process, and on disk per package
    location and version only where the user asks for it (``TRACEINSIGHT_CACHE=DIR``): the tool
    writes nothing outside a run folder unless asked."""
    import importlib.util

    roots: list[tuple[str, str]] = []
    for pkg, group in _PACKAGES:
        try:
            spec = importlib.util.find_spec(pkg)
        except (ImportError, ValueError):
            spec = None
        if spec is not None and spec.submodule_search_locations:
            roots += [(r, group) for r in spec.submodule_search_locations]
    records = _install_records([r for r, _ in roots])
    cache_dir = os.environ.get("TRACEINSIGHT_CACHE")
    cache = None
    if cache_dir:
        import hashlib
        import json
        # the dist-info folders' names carry the distributions' versions (and their places)
        key = hashlib.sha256(json.dumps([roots, sorted(records)]).encode()).hexdigest()[:16]
        cache = Path(cache_dir) / f"pyfiles-{key}.json"
        try:
            data = json.loads(cache.read_text())
            if isinstance(data, dict) and all(isinstance(v, str) for v in data.values()):
                return data
        except (OSError, ValueError, RecursionError):
            pass
    listed = _recorded_py_files([r for r, _ in roots], records)
    out: dict[str, str] = {}
    for root, group in roots:
        files = listed.get(root)
        if files is None:   # no install record lists this folder: walk it
            files = [f for _, _, names in os.walk(root) for f in names if f.endswith(".py")]
        for f in files:
            # keras wins over tensorflow on a shared base name: keras frames dominate a Keras
            # step, and ambiguous names are few
            if out.get(f) != "keras":
                out[f] = group
    if cache is not None:
        try:
            from traceinsight.runfolder import atomic_write_json
            atomic_write_json(cache, out)
        except OSError:
            pass  # a read-only folder: walk again next time
    return out


# the distributions that install the packages of ``_PACKAGES`` (dist-info names, normalised)
_DISTRIBUTIONS = frozenset({"tensorflow", "tensorflow-cpu", "tensorflow-intel", "tensorflow-macos",
                            "keras", "tf-keras"})


def _install_records(roots: list[str]) -> dict[str, str]:
    """dist-info folder (``.../site-packages/tensorflow_cpu-2.21.0.dist-info``) -> its RECORD's
    text, for the distributions of ``_DISTRIBUTIONS`` installed beside the package folders
    ``roots`` (what pip installed there). Read from the folders themselves: ``importlib.metadata`` costs more to
    import than the reading."""
    out: dict[str, str] = {}
    for parent in dict.fromkeys(os.path.dirname(os.path.realpath(r)) for r in roots):
        try:
            entries = [e.name for e in os.scandir(parent) if e.name.endswith(".dist-info")]
        except OSError:
            continue
        for name in entries:
            dist = name[: -len(".dist-info")].rpartition("-")[0].lower().replace("_", "-")
            if dist in _DISTRIBUTIONS:
                try:
                    # bytes decoded: read_text's newline translation costs more than the read
                    out[os.path.join(parent, name)] = (
                        Path(parent) / name / "RECORD").read_bytes().decode("utf-8")
                except (OSError, UnicodeDecodeError):
                    continue
    return out


def _recorded_py_files(roots: list[str], records: dict[str, str]) -> dict[str, list[str]]:
    """The .py base names under each package folder of ``roots`` that the install records list
    (a RECORD line: ``tensorflow/python/ops/math_ops.py,sha256=...,1234``), instead of walking
    TensorFlow's tree (thousands of folders: 0.05 - 0.1 s, more on a cold disk). A folder no
    RECORD lists (a source checkout, an install without one) is left out: the caller walks it."""
    folders = {os.path.realpath(r): r for r in roots}
    out: dict[str, list[str]] = {}
    for info, record in records.items():
        parent = os.path.dirname(info)     # RECORD's paths are relative to it
        root_of: dict[str, str | None] = {}
        # TensorFlow's RECORD is ~20,000 lines, a tenth of them .py: the cheap test first
        for line in [x for x in record.split("\n") if ".py," in x or x.startswith('"')]:
            if line.startswith('"'):    # a quoted path (a comma in it): CSV, rarely
                import csv
                path = next(csv.reader([line.rstrip("\r")]))[0]
            else:
                path = line.partition(",")[0]
            if not path.endswith(".py"):
                continue
            top, _, rest = path.partition("/")
            if top not in root_of:
                root_of[top] = folders.get(os.path.join(parent, top))
            root = root_of[top]
            if root is not None and rest:
                out.setdefault(root, []).append(rest.rpartition("/")[2])
    return out


@lru_cache(maxsize=1)
def _own_files() -> frozenset[str]:
    from traceinsight.pyfiles import own_files
    return own_files()


def frame_group(file: str, user_files: frozenset[str],
                recorded: dict[str, list[str]] | None = None) -> str:
    """user / keras / tensorflow / other for a python-tracer frame's file base name: from what the
    capture recorded in the workload process when there is a record (exact for that run), else
    from the packages installed here (foreign traces)."""
    if file in user_files:
        return "user"
    if recorded and file in recorded:
        return pick(recorded[file])
    if file in _own_files():
        return "traceinsight"
    if file.startswith("tensorflow.") or file.startswith("tsl") or file.startswith("_pywrap"):
        return "tensorflow"
    if file.startswith("keras") or file.startswith("tf_keras"):
        return "keras"
    if recorded:
        return "other"  # not a file the workload process loaded: a builtin or extension module
    return _package_files().get(file, "other")


def hotspots_table(a: Attribution, steps: Columns, *, user_files: frozenset[str] = frozenset(),
                   scale: float = 1.0, python_files: dict[str, list[str]] | None = None
                   ) -> Columns:
    """Python time per function from python-tracer frames: self = python-category time owned by the
    frame; inclusive = python-category time inside its outermost (non-recursive) calls; per steady
    step, multiplied by ``scale`` (the host pass's python time / this pass's)."""
    t = a.table
    ws, we, n = steady_windows(a, steps)
    if n == 0 or a.main_line < 0:
        return Columns.no_rows(HOTSPOT_COLUMNS)
    frame_name = np.array([nm.startswith(PYTHON_FRAME) for nm in t.names] or [False], dtype=bool)
    # the keys in the column's own dtype: other keys would make numpy convert the whole
    # table-long column (a copy of it at the analysis's peak, and its time)
    lo, hi = np.searchsorted(t.line, np.array([a.main_line, a.main_line + 1], dtype=t.line.dtype))
    # every frame name's file, group, and whether it issues ops (TensorFlow's own frames and
    # other packages' are walked through to the code that called them). A base name TensorFlow
    # shares with Keras (traceback_utils.py: both wrap their API calls in an ``error_handler``)
    # is walked through too: the frame may be TensorFlow's own
    parsed = {nid: parse_frame(t.names[nid]) for nid in np.flatnonzero(frame_name).tolist()
              if nid < len(t.names)}
    group_of = {nid: frame_group(f[0], user_files, python_files) for nid, f in parsed.items()}
    issuer_of = {nid: g in ISSUER_GROUPS and "tensorflow" not in str((python_files or {}).get(
        parsed[nid][0], "")) for nid, g in group_of.items()}
    swept = _swept(a, ws, we, int(lo), int(hi), frame_name, issuer_of, group_of)
    if swept is not None:
        calls_by_name, self_by_name, incl_by_name = swept["calls"], swept["self"], swept["inclusive"]
    else:
        # python time owned by each event (segments of steady steps, clipped to them); per
        # function: calls, self time, and inclusive time of outermost (non-recursive) calls
        own_py = owned_time(a, ws, we, rules.PYTHON)
        calls_by_name, self_by_name, incl_by_name = native.frame_sums(
            a.parent, t.name, t.start, ~a.outside & (t.end > t.start), frame_name, lo, hi, ws, we,
            own_py, consume_own=True)
        del own_py     # 8 bytes an event (made subtree sums in place: no copy of it was made)
    if not calls_by_name.any():
        return Columns.no_rows(HOTSPOT_COLUMNS)
    nids = np.nonzero(calls_by_name)[0]
    frames = [parsed[nid] for nid in nids.tolist()]
    groups = [group_of[nid] for nid in nids.tolist()]
    issuers = [issuer_of[nid] for nid in nids.tolist()]
    issued = _issued_by_frame(a, ws, we, nids, issuers, groups) if swept is None else \
        _issued_swept(swept, nids)
    df = Columns({"function": text([func or t.names[nid] for nid, (_, _, func) in zip(nids.tolist(), frames)]),
                  "file": text([f[0] for f in frames]),
                  "line": np.array([f[1] for f in frames], dtype=np.int64),
                  "group": text(groups),
                  "self_ms": self_by_name[nids] / PS_PER_MS / n * scale,
                  "inclusive_ms": incl_by_name[nids] / PS_PER_MS / n * scale,
                  "calls_per_step": calls_by_name[nids] / n,
                  **{k: v if k == "entry" else v / n for k, v in issued.items()}})
    # ties (many frames own no python time) in a fixed order, so reports do not reshuffle
    return df.take(sort_order([(df["self_ms"], False), (df["inclusive_ms"], False),
                               (df["function"], True), (df["file"], True), (df["line"], True)]))


def _swept(a: Attribution, ws: np.ndarray, we: np.ndarray, lo: int, hi: int,
           frame_name: np.ndarray, issuer_of: dict[int, bool], group_of: dict[int, str]
           ) -> dict[str, np.ndarray] | None:
    """The main thread's frame sums and the issuers' sums (``native.frame_sweep``) in one pass,
    with no per-event column; None where the sweep cannot give ``frame_sums`` and
    ``_issued_by_frame``'s figures exactly (windows that overlap, owned times past 2**53 ps, a
    timeline that is not the nesting's): the per-event path gives them."""
    if not ((we >= ws).all() and (ws[1:] >= we[:-1]).all()):
        return None
    t = a.table
    n_names = len(frame_name)
    issuer_name = np.zeros(n_names, dtype=bool)
    caller_name = np.zeros(n_names, dtype=bool)
    for nid, is_issuer in issuer_of.items():
        issuer_name[nid] = is_issuer
        caller_name[nid] = group_of[nid] in ("user", "traceinsight")
    op_kind = np.full(n_names, -1, dtype=np.int8)
    for i, nm in enumerate(t.names):
        op = rules.op_of_name(nm)
        if op is not None:
            op_kind[i] = 1 if op[1] == EAGER_CONST else 2 if op[1] == "StridedSlice" else 0
    out = native.frame_sweep(a.parent, t.name, t.start, t.end, a.outside, lo, hi, a.timeline,
                             ws, we, frame_name, rules.PYTHON,
                             issuer_name, caller_name, op_kind, rules.INPUT, rules.DISPATCH)
    if out is None or max(out["time_a"].max(initial=0), out["time_b"].max(initial=0)) >= 1 << 53:
        return None
    return out


def _issued_swept(swept: dict[str, np.ndarray], nids: np.ndarray) -> dict[str, np.ndarray]:
    """``_issued_by_frame``'s columns from the sweep's per-name sums (integers below 2**53: the
    float sums the per-event path makes are exact, so these are they)."""
    ops = swept["ops"][nids]
    return {"op_calls_per_step": ops[:, 0].astype(float),
            "conversions_per_step": ops[:, 1].astype(float),
            "slices_per_step": ops[:, 2].astype(float),
            "input_ms": swept["time_a"][nids].astype(float) / PS_PER_MS,
            "dispatch_ms": swept["time_b"][nids].astype(float) / PS_PER_MS,
            "entry": swept["entry"][nids].copy()}


def _issued_by_frame(a: Attribution, ws: np.ndarray, we: np.ndarray, nids: np.ndarray,
                     issuers: list[bool], groups: list[str]) -> dict[str, np.ndarray]:
    """Per frame name of ``nids``: the main-thread op calls inside the steady windows whose
    nearest frame above them that is an issuer (``issuers``: its group is one of
    ``ISSUER_GROUPS``) is that frame, and of
    them the conversions (``_EagerConst``) and the slices (``StridedSlice``); summed over the
    windows (see HOTSPOT_COLUMNS); and whether the frame is an entry point."""
    t = a.table
    out = {k: np.zeros(len(nids)) for k in ("op_calls_per_step", "conversions_per_step",
                                            "slices_per_step", "input_ms", "dispatch_ms")}
    out["entry"] = np.zeros(len(nids), dtype=bool)
    issuer_name = np.zeros(len(t.names) or 1, dtype=bool)
    row_of_name = np.full(len(t.names) or 1, -1, dtype=np.int64)
    for k, (nid, is_issuer) in enumerate(zip(nids.tolist(), issuers)):
        row_of_name[nid] = k
        issuer_name[nid] = is_issuer
    if not issuer_name.any():
        return out
    main_issuer = issuer_name[t.name] & (t.line == a.main_line)
    issuer = native.nearest_marked(main_issuer, a.parent)
    # entry points: issuer calls in the windows whose nearest issuer above is the user's or the
    # tool's frame, or none
    calls = np.nonzero(main_issuer & ~a.outside)[0]
    del main_issuer
    calls = calls[in_windows(t.start[calls], ws, we) >= 0]
    par = a.parent[calls]
    up = np.where(par >= 0, issuer[np.maximum(par, 0)], -1)
    up_row = np.where(up >= 0, row_of_name[t.name[np.maximum(up, 0)]], -1)
    callers = np.array([g in ("user", "traceinsight") for g in groups] + [True], dtype=bool)
    out["entry"][row_of_name[t.name[calls[callers[up_row]]]]] = True
    # each event's issuer's row, -1 for none: the owned time is summed by it in the C kernel,
    # with no table-long column per category (a large trace's peak is here). Indexing, not
    # np.take: take copies int32 indices to int64 first
    group = np.empty(len(issuer), dtype=np.int32)
    row32 = row_of_name.astype(np.int32)
    for lo in range(0, len(issuer), 1 << 20):       # in chunks: no table-long temporaries
        by = issuer[lo:lo + (1 << 20)]
        group[lo:lo + len(by)] = np.where(by >= 0, row32[t.name[np.maximum(by, 0)]], -1)
    for col, cat in (("input_ms", rules.INPUT), ("dispatch_ms", rules.DISPATCH)):
        by_row = native.owned_time(a.timeline, ws, we, cat, len(nids), group=group)
        if by_row.max(initial=0) < 1 << 53:
            # integers below 2**53: the float sum the per-event path made is exact, so this is it
            out[col] = by_row.astype(float) / PS_PER_MS
            continue
        owned = owned_time(a, ws, we, cat)    # past 2**53 ps: the per-event float sum, as before
        owners = np.nonzero(owned)[0]
        by = issuer[owners]
        ok = by >= 0
        weights = owned[owners[ok]].astype(float)
        del owned, owners
        rows = row_of_name[t.name[by[ok]]]
        del by, ok
        out[col] = np.bincount(rows, weights=weights, minlength=len(nids)) / PS_PER_MS
    del group
    op_types = [rules.op_of_name(nm) for nm in t.names]
    is_op_name = np.array([o is not None for o in op_types] or [False], dtype=bool)
    ops = np.nonzero(is_op_name[t.name] & (t.line == a.main_line) & ~a.outside)[0]
    ops = ops[in_windows(t.start[ops], ws, we) >= 0]
    if not len(ops):
        return out
    above = issuer[a.parent[ops]]
    keep = (a.parent[ops] >= 0) & (above >= 0)
    ops, above = ops[keep], above[keep]
    rows = row_of_name[t.name[above]]
    kinds = np.array([o[1] if o is not None else "" for o in op_types] or [""], dtype=object)
    op_kind = kinds[t.name[ops]]
    for col, sel in (("op_calls_per_step", np.ones(len(ops), dtype=bool)),
                     ("conversions_per_step", op_kind == EAGER_CONST),
                     ("slices_per_step", op_kind == "StridedSlice")):
        out[col] = np.bincount(rows[sel], minlength=len(nids)).astype(float)
    return out
