"""One mode's Chrome trace (Perfetto, chrome://tracing): ``render(run, TraceOptions(mode, pass_name,
steps, gzip_level))`` gives the file's bytes as an iterator of chunks, streamed (never the whole
document in memory; gzip runs on a second thread while the next chunks are formatted);
``report.write_chunks`` writes them atomically.

It writes the trace-event format (catapult's "JSON Object Format": ``{"traceEvents": [...],
"displayTimeUnit": "ns"}``, ``ts`` / ``dur`` in µs) from the event table and attribution the
analysis already holds, not through XProf's converter (far slower per event, and it writes every
stat; ``tools/bench_export.py`` times both): one ``pid`` per plane, one ``tid`` per thread line, our
category on every slice (``cat`` and ``args.category``), a track per category on the main thread
(its exclusive timeline: which category owns each instant), the steps as spans with their category
split, and only the selected steps. Everything drawn is the per-event data of the mode's own analysis
(an ``analysis.mode.TraceAnalysis``: the event table, the attribution's main-thread timeline and the
steps table, with every correction the mode's analysis makes), made again from the pass's files by
``analysis.timeline.pass_analysis`` as the mode's analysis made it, so they are the mode's figures;
this module only formats them. Where the analysis claims no category (host time the trace cannot
split) there is no category track and the steps carry no split.

Every slice track is properly nested (what trace viewers need to draw a thread as a stack): events
the analysis keeps out of the nesting (step markers, events that cross other events' ends) go to a
"crossing events" track beside their thread. Times are floored to whole nanoseconds on the trace's
clock, relative to the first exported event (``metadata.traceinsight.t0_ns``), which keeps nesting.

``via_xprof`` is the one exception: XProf's own converter on the trace files (``raw_to_tool_data.
xspace_to_tool_data(paths, "trace_viewer", {})``, xprof 2.24), kept for ``export --via-xprof`` (all
stats in ``args``; XProf's conversion, not ours) and for ``tools/bench_export.py``.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import tempfile
import threading
import zlib
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from traceinsight.analysis.timeline import pass_analysis, pass_files
from traceinsight.errors import TraceinsightError
from traceinsight.model import ModeResult, Run
from traceinsight.report.options import TraceOptions

if TYPE_CHECKING:
    from traceinsight.analysis.mode import TraceAnalysis
    from traceinsight.runfolder import Pass


def render(run: Run, options: TraceOptions) -> Iterator[bytes]:
    """The trace file of ``options.mode``'s ``options.pass_name`` pass, in chunks (gzip unless
    ``gzip_level`` is None). Raises here, before any chunk, where the mode or pass is missing or
    its trace cannot be analysed; an unknown step raises on the first chunk."""
    tr = pass_trace(run, options.mode, options.pass_name)
    chunks = trace_chunks(tr, None if options.steps is None else list(options.steps),
                          options.mode)
    return chunks if options.gzip_level is None else gzipped(chunks, options.gzip_level)


def pass_trace(run: Run, mode_name: str, pass_name: Pass = "host") -> TraceAnalysis:
    """The per-event data of one pass of a mode, as the mode's analysis made it (made again from
    the pass's files: ``analysis.timeline.pass_analysis``)."""
    mode = run.modes.get(mode_name)
    if mode is None:
        raise TraceinsightError(f"{run.name} has no mode {mode_name!r}; modes: "
                                f"{', '.join(run.modes) or 'none'}")
    pass_paths(mode, pass_name)     # a missing pass is named before the mode's status
    return pass_analysis(mode, pass_name)


def pass_paths(mode: ModeResult, pass_name: str = "host") -> list[str]:
    """The trace files of one capture pass of a mode (all of them for foreign traces)."""
    return [str(p) for p in pass_files(mode, pass_name)]


@contextlib.contextmanager
def _quiet_stderr():
    """xprof's C++ logs every conversion step to fd 2: keep it, show it only on failure."""
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        try:
            saved = os.dup(2)
        except OSError:  # no fd 2 (embedded interpreters)
            yield tmp
            return
        os.dup2(tmp.fileno(), 2)
        try:
            yield tmp
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def via_xprof(paths: list[str]) -> str:
    """The Chrome trace-event JSON of some xplane files, via XProf's trace_viewer converter."""
    try:
        from xprof.convert import raw_to_tool_data
    except ImportError:
        raise TraceinsightError("the Chrome-trace export needs xprof: pip install xprof") from None
    with _quiet_stderr() as log:
        try:
            data, _content_type = raw_to_tool_data.xspace_to_tool_data(list(paths), "trace_viewer", {})
        except Exception as e:  # xprof raises plain exceptions on unreadable files
            log.seek(0)
            tail = log.read().decode(errors="replace").strip().splitlines()[-1:] or [""]
            raise TraceinsightError(f"xprof could not convert {paths[0]}: {e} {tail[0]}".strip()) from None
    if isinstance(data, bytes):
        data = data.decode("utf-8")
    if not data:
        raise TraceinsightError(f"xprof returned no trace for {paths[0]}")
    doc = json.loads(data)
    doc["traceEvents"] = [e for e in doc.get("traceEvents", []) if e]
    return json.dumps(doc, separators=(",", ":"))


# --------------------------------------------------------------------------- our trace export

# tid ranges of the synthetic tracks, per pid (line tids are line index + 1)
STEPS_TID = 1
CATEGORY_TID0 = 10               # + category code: the main thread's per-category tracks
LINE_TID0 = 100                  # + line index: the trace's thread lines
CROSSING_TID0 = 1_000_000        # + line index: events kept out of a line's nesting


def parse_steps(spec: str | None) -> list[int] | None:
    """``"5-9,12"`` -> [5, 6, 7, 8, 9, 12]; None for all steps."""
    if spec is None or spec.strip() in ("", "all"):
        return None
    out: list[int] = []
    for part in spec.split(","):
        m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", part)
        if not m:
            raise TraceinsightError(f"--steps {spec!r}: expected step numbers like 5-9,12")
        a, b = int(m.group(1)), int(m.group(2) or m.group(1))
        if b < a or b - a > 10_000_000:
            raise TraceinsightError(f"--steps {spec!r}: bad range {part.strip()}")
        out.extend(range(a, b + 1))
    return out


def _windows(steps: pd.DataFrame, select: list[int] | None) -> np.ndarray | None:
    """Sorted, merged [start, end) ps windows of the selected steps; None: everything."""
    if select is None:
        return None
    if steps.empty:
        raise TraceinsightError("--steps: this trace has no steps")
    chosen = steps[steps["step_num"].isin(select)]
    if chosen.empty:
        nums = steps["step_num"].tolist()
        raise TraceinsightError(f"--steps: no such step in this trace (its steps: "
                                f"{nums[0]}..{nums[-1]}, {len(nums)} steps)")
    w = chosen[["start_ps", "end_ps"]].to_numpy(dtype=np.int64)
    w = w[np.argsort(w[:, 0], kind="stable")]
    merged = [list(w[0])]
    for s, e in w[1:]:
        if s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    return np.asarray(merged, dtype=np.int64)


def _in_windows(start: np.ndarray, end: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Events overlapping a window (zero-length ones: inside it, its ends included). Windows are
    sorted and disjoint, so only the last one starting before an event's end can overlap it."""
    pos = end > start
    j = np.where(pos, np.searchsorted(w[:, 0], end, side="left"),
                 np.searchsorted(w[:, 0], start, side="right")) - 1
    jj = np.maximum(j, 0)
    return (j >= 0) & np.where(pos, w[jj, 1] > start, w[jj, 1] >= start)


def _fmt_us(ns: np.ndarray) -> list:
    """ns -> µs as shortest round-tripping floats (exact to the ns: consumers round back)."""
    return (ns / 1000.0).tolist()


_POW10 = 10 ** np.arange(19, dtype=np.int64)
_MID = np.frombuffer(b',"dur":', dtype=np.uint8)
_END = np.frombuffer(b'},\n', dtype=np.uint8)


def _digits(v: int) -> int:
    return max(1, len(str(int(v))))


# "00".."99" as little-endian uint16: two ASCII digits written at once
_PAIRS = np.array([(48 + i // 10) | ((48 + i % 10) << 8) for i in range(100)], dtype=np.uint16)


def _put_us(arr: np.ndarray, col: int, width: int, ns: np.ndarray) -> None:
    """Write ns as µs with 3 decimals into columns [col, col + width + 4) of every row: the
    integer part right-aligned in ``width`` columns, left-padded with spaces (JSON whitespace)."""
    n_digits = width + 3
    pairs = (n_digits + 1) // 2
    digits = np.empty((len(ns), 2 * pairs), dtype=np.uint8)
    as_pairs = digits.view(np.uint16)
    v = ns.astype(np.int64, copy=True)
    for k in range(pairs - 1, -1, -1):      # two digits at a time, from the right
        v, r = np.divmod(v, 100)
        as_pairs[:, k] = _PAIRS[r]
    off = 2 * pairs - n_digits
    arr[:, col:col + width] = digits[:, off:off + width]
    if width > 1:   # leading zeros of the integer part -> spaces
        ip = ns // 1000
        lead = ip[:, None] < _POW10[width - 1:0:-1][None, :]
        arr[:, col:col + width - 1][lead] = 32
    arr[:, col + width] = 46  # "."
    arr[:, col + width + 1:col + width + 4] = digits[:, off + width:]


def _x_records(group: np.ndarray, prefixes: list[bytes], ts_ns: np.ndarray,
               dur_ns: np.ndarray):
    """Complete-event records ``<prefix>TS,"dur":DUR},\n`` for many events, one numpy block per
    prefix (the part before ``"ts":`` is the same for every event of a group: pid, tid, name and
    category). Trace-event consumers sort events themselves, so records go out group by group."""
    if not len(group):
        return
    order = np.argsort(group, kind="stable")
    g = group[order]
    cut = np.flatnonzero(np.diff(g)) + 1
    for lo, hi in zip(np.concatenate(([0], cut)).tolist(), np.concatenate((cut, [len(g)])).tolist()):
        ix = order[lo:hi]
        pre = np.frombuffer(prefixes[int(g[lo])], dtype=np.uint8)
        ts, dur = ts_ns[ix], dur_ns[ix]
        w1, w2 = _digits(ts.max() // 1000), _digits(dur.max() // 1000)
        lp = len(pre)
        c1 = lp + w1 + 4
        c2 = c1 + len(_MID)
        width = c2 + w2 + 4 + len(_END)
        arr = np.empty((hi - lo, width), dtype=np.uint8)
        arr[:, :lp] = pre
        _put_us(arr, lp, w1, ts)
        arr[:, c1:c2] = _MID
        _put_us(arr, c2, w2, dur)
        arr[:, width - len(_END):] = _END
        yield arr.tobytes()


def trace_chunks(tr: TraceAnalysis, select: list[int] | None = None,
                 mode_name: str = "") -> Iterator[bytes]:
    """The trace-event JSON document (UTF-8) of a pass's kept analysis, as pieces to write one
    after the other (no copy of the whole document); see the module docstring."""
    from traceinsight.analysis import rules
    from traceinsight.model import CATEGORIES

    table, a = tr.table, tr.attribution
    steps = tr.steps.to_pandas()
    # where the trace cannot split host time the analysis claims no category: no category track
    # and no split on the steps (their categories are unknown, not zero)
    recorded = tr.host_events_recorded
    w = _windows(steps, select)
    idx = np.arange(len(table)) if w is None else \
        np.flatnonzero(_in_windows(table.start, table.end, w))
    start_ns = table.start[idx] // 1000
    end_ns = table.end[idx] // 1000
    # main-thread category timeline: runs of equal category, clipped to the windows
    if recorded and a.main_line >= 0 and len(a.seg_cat):
        change = np.flatnonzero(np.diff(a.seg_cat.astype(np.int16)) != 0) + 1
        run_start = a.timeline.times(np.concatenate(([0], change)))
        run_end = a.timeline.times(np.concatenate((change, [len(a.seg_cat)])))
        run_cat = a.seg_cat[np.concatenate(([0], change))].astype(np.int64)
        # steps reach past the timeline (a marker opened before the first event): python, as in
        # the analysis' category_time
        if len(steps):
            lo, hi = int(steps["start_ps"].min()), int(steps["end_ps"].max())
            if lo < run_start[0]:
                run_start, run_end = np.r_[lo, run_start], np.r_[run_start[0], run_end]
                run_cat = np.r_[rules.PYTHON, run_cat]
            if hi > run_end[-1]:
                run_start, run_end = np.r_[run_start, run_end[-1]], np.r_[run_end, hi]
                run_cat = np.r_[run_cat, rules.PYTHON]
        if w is not None:
            rs, re_, rc = [], [], []
            for ws, we in w:
                m = (run_start < we) & (run_end > ws)
                rs.append(np.maximum(run_start[m], ws))
                re_.append(np.minimum(run_end[m], we))
                rc.append(run_cat[m])
            run_start, run_end, run_cat = (np.concatenate(rs), np.concatenate(re_),
                                           np.concatenate(rc))
        run_start, run_end = run_start // 1000, run_end // 1000
    else:
        run_start = run_end = run_cat = np.zeros(0, dtype=np.int64)
    chosen = steps if select is None or steps.empty else steps[steps["step_num"].isin(select)]
    step_start = chosen["start_ps"].to_numpy(dtype=np.int64) // 1000 if len(chosen) else \
        np.zeros(0, dtype=np.int64)
    candidates = [x.min() for x in (start_ns, run_start, step_start) if len(x)]
    t0 = int(min(candidates)) if candidates else 0

    out: list[str] = []            # metadata and steps: few, formatted one by one, sent last
    meta = {"traceinsight": {"mode": mode_name, "t0_ns": t0, "files": list(map(str, table.files)),
                             "steps": None if select is None else sorted(set(select)),
                             "events": int(len(idx)), "categories": list(CATEGORIES),
                             "host_categories_recorded": bool(recorded), "notes": list(tr.notes)}}
    dumps = json.dumps
    yield ('{"displayTimeUnit":"ns","metadata":' + dumps(meta) + ',"traceEvents":[\n').encode()
    planes_used = sorted({table.lines[li].plane for li in np.unique(table.line[idx]).tolist()}
                         | ({table.lines[a.main_line].plane} if a.main_line >= 0 else set()))
    pid_of = {p: k + 1 for k, p in enumerate(planes_used)}
    for p in planes_used:
        info = table.planes[p]
        out.append(f'{{"ph":"M","pid":{pid_of[p]},"tid":0,"name":"process_name",'
                   f'"args":{{"name":{dumps(f"{info.host} {info.name}".strip())}}}}}')
        out.append(f'{{"ph":"M","pid":{pid_of[p]},"tid":0,"name":"process_sort_index",'
                   f'"args":{{"sort_index":{pid_of[p]}}}}}')
    main_pid = pid_of.get(table.lines[a.main_line].plane) if a.main_line >= 0 else None

    def thread(pid: int, tid: int, name: str) -> None:
        out.append(f'{{"ph":"M","pid":{pid},"tid":{tid},"name":"thread_name",'
                   f'"args":{{"name":{dumps(name)}}}}}')
        out.append(f'{{"ph":"M","pid":{pid},"tid":{tid},"name":"thread_sort_index",'
                   f'"args":{{"sort_index":{tid}}}}}')

    # 1. the steps, as spans with their category split (from the analysis' steps frame)
    if main_pid is not None and len(chosen):
        thread(main_pid, STEPS_TID, "steps")
        ts = _fmt_us(step_start - t0)
        dur = _fmt_us(chosen["end_ps"].to_numpy(dtype=np.int64) // 1000 - step_start)
        cols = ["wall_ms"] + (list(CATEGORIES) if recorded else [])
        vals = chosen[cols].to_numpy(dtype=float).round(6).tolist()
        firsts = chosen["first"].astype(bool).tolist()
        for num, t, d, v, f in zip(chosen["step_num"].tolist(), ts, dur, vals, firsts):
            args = ",".join(f'"{c if c == "wall_ms" else c + "_ms"}":{x!r}' for c, x in zip(cols, v))
            out.append(f'{{"ph":"X","pid":{main_pid},"tid":{STEPS_TID},"name":"step {int(num)}",'
                       f'"ts":{t},"dur":{d},"args":{{"step_num":{int(num)},'
                       f'"first":{"true" if f else "false"},{args}}}}}')
    # 2. the main thread's exclusive timeline, one track per category
    if main_pid is not None and len(run_cat):
        main_name = table.lines[a.main_line].display_name or table.lines[a.main_line].name
        for code in np.unique(run_cat).tolist():
            thread(main_pid, CATEGORY_TID0 + code, f"{main_name} · {CATEGORIES[code]}")
        cat_prefix = [(f'{{"ph":"X","pid":{main_pid},"tid":{CATEGORY_TID0 + c},"name":"{name}",'
                       f'"args":{{"category":"{name}"}},"ts":').encode()
                      for c, name in enumerate(CATEGORIES)]
        yield from _x_records(run_cat, cat_prefix, run_start - t0, run_end - run_start)
    # 3. the trace's own events, each with its category
    if len(idx):
        lines = table.line[idx].astype(np.int64)
        crossing = a.outside[idx]
        tid = np.where(crossing, CROSSING_TID0, LINE_TID0) + lines
        for li in np.unique(lines).tolist():
            info = table.lines[li]
            label = info.display_name or info.name or f"line {info.id}"
            pid = pid_of[info.plane]
            thread(pid, LINE_TID0 + li, label)
            if crossing[lines == li].any():
                thread(pid, CROSSING_TID0 + li, f"{label} (crossing events)")
        cat = a.cat[idx].astype(np.int64)
        names = table.name[idx].astype(np.int64)
        n_names, n_cat = len(table.names), len(CATEGORIES)
        key = (tid * n_names + names) * n_cat + cat
        uniq, inverse = np.unique(key, return_inverse=True)
        pid_by_line = np.asarray([pid_of.get(ln.plane, 0) for ln in table.lines], dtype=np.int64)
        prefixes = []
        for k in uniq.tolist():
            c = k % n_cat
            nm = (k // n_cat) % n_names
            t = k // n_cat // n_names
            li = t - (CROSSING_TID0 if t >= CROSSING_TID0 else LINE_TID0)
            prefixes.append(f'{{"ph":"X","pid":{pid_by_line[li]},"tid":{t},'
                            f'"name":{dumps(table.names[nm])},'
                            f'"args":{{"category":"{CATEGORIES[c]}"}},"ts":'.encode())
        yield from _x_records(inverse.ravel().astype(np.int64), prefixes, start_ns - t0,
                             end_ns - start_ns)
    # every block record ends with ",\n"; the steps and metadata come last, the last one without
    out.append('{"ph":"M","pid":0,"tid":0,"name":"process_name","args":{"name":"traceinsight"}}')
    yield (",\n".join(out) + "\n]}\n").encode("utf-8")


_DONE = object()


def gzipped(chunks: Iterable[bytes], level: int = 1) -> Iterator[bytes]:
    """``chunks`` as one gzip stream (what ui.perfetto.dev and chrome://tracing open as .json.gz;
    level 1: fast, and trace JSON, repetitive, still shrinks severalfold). The chunks are
    compressed on a second thread (zlib releases the GIL) while the next ones are formatted on this
    one; the compressed pieces are given here, as they come. Stopped early (the consumer failed: a
    full disk), the thread ends too."""
    z = zlib.compressobj(level, zlib.DEFLATED, 31)
    todo: queue.Queue[bytes | None] = queue.Queue(maxsize=4)
    done: queue.Queue[Any] = queue.Queue()

    def work() -> None:
        error = False
        while (chunk := todo.get()) is not None:
            if not error:      # after an error, keep taking chunks (dropped) until the end:
                try:           # the producer must never block on a full queue nobody empties
                    done.put(z.compress(chunk))
                except BaseException as e:
                    error = True
                    done.put(e)
        if not error:
            try:
                done.put(z.flush())
            except BaseException as e:
                done.put(e)
        done.put(_DONE)

    def take(out: Any) -> bytes:
        if isinstance(out, BaseException):
            raise out
        return out

    thread = threading.Thread(target=work, name="traceinsight-gzip", daemon=True)
    thread.start()
    ended = False
    try:
        for chunk in chunks:
            todo.put(chunk)
            while not done.empty():
                if piece := take(done.get_nowait()):
                    yield piece
        todo.put(None)
        ended = True
        while (out := done.get()) is not _DONE:
            if piece := take(out):
                yield piece
    finally:
        if not ended:
            todo.put(None)
        thread.join()
