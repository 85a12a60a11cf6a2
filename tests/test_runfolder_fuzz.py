"""Damaged run folders: run.json and timings.json are validated against their schemas at load
(traceinsight/schemas/run.schema.json, timings.schema.json). Anything invalid is one line naming
the file and the field; a damaged timings.json fails its own mode only; nothing is a traceback or
a hang. Plus the bootstrap's cap on samples x resamples (10 million steps)."""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import re
import shutil
import signal
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import traceinsight
from traceinsight import runfolder, stats
from traceinsight.cli import main
from traceinsight.errors import TraceinsightError

from xspace_builder import Space


def tiny_trace(path: Path, n_steps: int = 4) -> None:
    sp = Space()
    sp.task_environment()
    line = sp.host().line("python")
    for i in range(n_steps):
        line.event("train", i * 100, 90, step_num=i)
        line.event("TFE_Py_Execute", i * 100 + 10, 50)
    sp.write(path)


GOOD_RUN = {
    "schema_version": 1, "tool": "traceinsight test", "created_utc": "2026-01-01T00:00:00+00:00",
    "workload": {"path": "/x/model.py", "name": "model", "kind": "function"},
    "command": "traceinsight capture model.py", "environment": {"python": "3.11"},
    "modes": {"eager": {"dir": "eager", "status": "ok", "error": None},
              "function": {"dir": "function", "status": "ok", "error": None}},
}
GOOD_TIMINGS = {
    "mode": "eager", "first_step_s": 0.1, "steps_s": [0.010, 0.011, 0.012, 0.010, 0.013],
    "step_nums": [1, 2, 3, 4, 5],
    "traced": {"host": {"steps_s": [0.012, 0.013], "step_nums": [1, 2],
                        "profile_options": {"requested": {"host_tracer_level": 3}}},
               "python": {"steps_s": [0.02], "problem": None}},
    "python_files": {"model.py": "user"},
    "input_signatures": {"steps": 5, "truncated": False,
                         "distinct": [{"args": ["Python float 0.0"]}]},
}


def make_run(root: Path) -> Path:
    run = root / "run"
    for mode in ("eager", "function"):
        tiny_trace(run / mode / "host" / "plugins" / "profile" / "s" / "h.xplane.pb")
        (run / mode / "timings.json").write_text(json.dumps(GOOD_TIMINGS))
    (run / "run.json").write_text(json.dumps(GOOD_RUN))
    return run


def paths_of(obj, prefix=()):
    """Every path (tuple of keys / indexes) inside a JSON value."""
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from paths_of(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from paths_of(v, prefix + (i,))


def set_at(obj, path, value):
    if not path:
        return value
    obj = copy.deepcopy(obj)
    cur = obj
    for p in path[:-1]:
        cur = cur[p]
    cur[path[-1]] = value
    return obj


def delete_at(obj, path):
    if not path:
        return obj
    obj = copy.deepcopy(obj)
    cur = obj
    for p in path[:-1]:
        cur = cur[p]
    del cur[path[-1]]
    return obj


BAD_VALUES = [None, True, False, "x", "", -5, -1e-3, 0, 1e300, -1e300, 2 ** 70, [], {}, [1, "a"],
              {"a": None}, [[[]]], "../../etc", "a/b", 3.5, [-0.01], ["0.1"], [True, False]]
TEXT_DAMAGE = ["NaN", "Infinity", "-Infinity", "[" * 100_000 + "]" * 100_000, "{", "",
               "\ufeff{}", "null", "[]", '{"schema_version": 1, "modes": {"a": 5}}',
               '{"steps_s": [1e999]}']


def variants(good: dict, rng: np.random.Generator, n: int):
    """n damaged texts of one JSON document: values swapped for wrong types and ranges, keys
    dropped, texts cut or garbled, non-JSON numbers, deep nesting."""
    paths = [p for p in paths_of(good) if p]
    out = []
    for k in range(n):
        kind = k % 5
        if kind in (0, 1):
            p = paths[rng.integers(len(paths))]
            out.append(json.dumps(set_at(good, p, BAD_VALUES[rng.integers(len(BAD_VALUES))])))
        elif kind == 2:
            p = paths[rng.integers(len(paths))]
            out.append(json.dumps(delete_at(good, p)))
        elif kind == 3:
            text = json.dumps(good)
            cut = int(rng.integers(len(text)))
            if rng.random() < 0.5:
                out.append(text[:cut])
            else:
                pos = int(rng.integers(len(text)))
                out.append(text[:pos] + chr(int(rng.integers(1, 0x2FF))) + text[pos + 1:])
        else:
            p = paths[rng.integers(len(paths))]
            token = TEXT_DAMAGE[rng.integers(len(TEXT_DAMAGE))]
            marker = "\"__HOLE__\""
            out.append(json.dumps(set_at(good, p, "__HOLE__")).replace(marker, token, 1))
    return out


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang()


@pytest.mark.parametrize("target", ["run.json", "timings.json"])
def test_fuzz_damaged_run_folders_never_crash_or_hang(tmp_path, target):
    """300 damaged run.json and 300 damaged timings.json (600 in all): every one loads or is
    refused in one line with exit 2, through load, findings and the markdown report."""
    run = make_run(tmp_path)
    good = GOOD_RUN if target == "run.json" else GOOD_TIMINGS
    where = run / ("run.json" if target == "run.json" else "eager/timings.json")
    rng = np.random.default_rng(2026 if target == "run.json" else 13)
    outcome = {"ok": 0, "refused": 0, "mode failed": 0}
    old = signal.signal(signal.SIGALRM, _alarm)
    try:
        for text in variants(good, rng, 300):
            where.write_text(text, encoding="utf-8", errors="surrogatepass")
            signal.alarm(20)
            try:
                loaded = traceinsight.load(run, use_cache=False)
                from traceinsight.report import render
                render(loaded, "md")
                eager = loaded.modes.get("eager")
                if target == "timings.json" and eager is not None and not eager.ok:
                    assert "timings.json" in eager.error and "\n" not in eager.error
                    assert loaded.modes["function"].ok  # the other mode still opens
                    outcome["mode failed"] += 1
                else:
                    outcome["ok"] += 1
            except TraceinsightError as e:
                assert "\n" not in str(e) and len(str(e)) < 400
                outcome["refused"] += 1
            except Hang:
                pytest.fail(f"hang on {text[:200]!r}")
            finally:
                signal.alarm(0)
    finally:
        signal.signal(signal.SIGALRM, old)
    assert sum(outcome.values()) == 300
    assert outcome["refused" if target == "run.json" else "mode failed"] > 50


def test_invalid_fields_are_named(tmp_path, capsys):
    run = make_run(tmp_path)
    cases = [
        ("eager/timings.json", set_at(GOOD_TIMINGS, ("steps_s", 2), -0.010), "steps_s.2"),
        ("eager/timings.json", set_at(GOOD_TIMINGS, ("first_step_s",), -5), "first_step_s"),
        ("eager/timings.json", set_at(GOOD_TIMINGS, ("first_step_s",), 1e300), "first_step_s"),
        ("eager/timings.json", set_at(GOOD_TIMINGS, ("first_step_s",), "0.1"), "first_step_s"),
        ("eager/timings.json", set_at(GOOD_TIMINGS, ("steps_s", 0), True), "steps_s.0"),
        ("eager/timings.json", set_at(GOOD_TIMINGS, ("traced", "host", "steps_s", 1), "x"),
         "traced.host.steps_s.1"),
    ]
    for file, data, field in cases:
        (run / file).write_text(json.dumps(data))
        loaded = traceinsight.load(run, use_cache=False)
        m = loaded.modes["eager"]
        assert m.status == "failed" and f"field {field}:" in m.error, (field, m.error)
        assert loaded.modes["function"].ok
    (run / "eager/timings.json").write_text(json.dumps(GOOD_TIMINGS))
    (run / "run.json").write_text(json.dumps(set_at(GOOD_RUN, ("modes", "eager", "dir"), "../..")))
    assert main(["analyze", str(run)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "run.json: field modes.eager.dir" in err[0]


def test_nan_in_timings_is_refused(tmp_path):
    run = make_run(tmp_path)
    (run / "eager/timings.json").write_text(json.dumps(GOOD_TIMINGS).replace("0.011", "NaN"))
    m = traceinsight.load(run, use_cache=False).modes["eager"]
    assert m.status == "failed" and "NaN" in m.error


def test_oversized_json_is_refused_before_reading(tmp_path, monkeypatch):
    run = make_run(tmp_path)
    monkeypatch.setattr(runfolder, "MAX_JSON_BYTES", 1000)
    # read_json's default was bound at definition: the limit is read through the module
    big = GOOD_TIMINGS | {"steps_s": [0.01] * 500}
    (run / "eager/timings.json").write_text(json.dumps(big))
    with pytest.raises(TraceinsightError, match="refused before reading"):
        runfolder.read_json(run / "eager/timings.json", max_bytes=runfolder.MAX_JSON_BYTES)


def test_ten_million_steps_do_not_hang_the_bootstrap():
    """The bootstrap's work is capped: beyond BOOTSTRAP_WORK_MAX draws it takes each resample's
    median as an order statistic (one sort), and agrees with element-wise resampling."""
    rng = np.random.default_rng(5)
    samples = rng.lognormal(size=10_000_000)
    t0 = time.process_time()
    lo, hi = stats.median_ci(samples)
    assert time.process_time() - t0 < 60  # element-wise: 2e10 draws, hours
    assert lo < np.median(samples) < hi
    # the order-statistic path against element-wise resampling on a smaller set
    x = rng.lognormal(size=20_001)
    from traceinsight import resample
    saved = resample.BOOTSTRAP_WORK_MAX
    try:
        resample.BOOTSTRAP_WORK_MAX = 0
        fast = stats.bootstrap_medians(x)
        resample.BOOTSTRAP_WORK_MAX = 10 ** 12
        slow = stats.bootstrap_medians(x)
    finally:
        resample.BOOTSTRAP_WORK_MAX = saved
    for q in (2.5, 50, 97.5):
        assert np.percentile(fast, q) == pytest.approx(np.percentile(slow, q), rel=0.01)


def test_huge_sparse_trace_is_refused_before_reading(tmp_path, capsys):
    """A 3 GB sparse .xplane.pb (no disk used): refused in one line, memory untouched."""
    import resource
    p = tmp_path / "huge.xplane.pb"
    with open(p, "wb") as f:
        f.truncate(3 << 30)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert main(["analyze", str(p)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "2 GiB" in err[0]
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100_000  # KiB


def test_trace_larger_than_available_memory_is_refused(tmp_path, monkeypatch):
    from traceinsight.analysis import events
    p = tmp_path / "t.xplane.pb"
    tiny_trace(p)
    monkeypatch.setattr(events, "available_memory", lambda: 100)
    with pytest.raises(TraceinsightError, match="more than the 0 MiB of memory available"):
        events.load_files([p])


# ------------------------------------------------------------------ a run folder is someone else's
# Confinement: nothing derived from a run folder reads or writes outside it. The reads are
# watched with an audit hook (every open, listdir and scandir of this process); the writes by
# comparing a victim folder's files before and after.

_WATCH: dict = {"area": None, "run": None, "allowed": (), "outside": []}


def _audit(event, args):
    area = _WATCH["area"]
    if area is None or event not in ("open", "os.listdir", "os.scandir"):
        return
    path = args[0] if args else None
    if path is None or isinstance(path, int):
        return
    try:
        real = os.path.realpath(os.fsdecode(path))
    except (TypeError, ValueError):
        return
    if real.startswith(area) and not any((real + "/").startswith(p + "/")
                                         for p in (_WATCH["run"], *_WATCH["allowed"])):
        _WATCH["outside"].append((event, real))


sys.addaudithook(_audit)


class watch_reads:
    """Records what this process opens or lists under ``area`` but outside ``run``."""

    def __init__(self, area: Path, run: Path, allowed: tuple = ()):
        self.area, self.run = os.path.realpath(area), os.path.realpath(run)
        self.allowed = tuple(os.path.realpath(p) for p in allowed)

    def __enter__(self):
        _WATCH.update(area=self.area, run=self.run, allowed=self.allowed, outside=[])
        return _WATCH["outside"]

    def __exit__(self, *exc):
        _WATCH["area"] = None


def snapshot(folder: Path) -> dict:
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None)
            for p in sorted(folder.rglob("*"))}


def victim(tmp_path: Path) -> Path:
    """A folder outside the run holding what a malicious run would like to read or replace: a
    settings file, a timings.json and a trace in the layout of a mode folder."""
    v = tmp_path / "victim"
    v.mkdir()
    (v / "settings.json").write_text('{"keep": true}')
    (v / "eager.json").write_text('{"keep": true}')
    (v / "timings.json").write_text(json.dumps(GOOD_TIMINGS))
    tiny_trace(v / "host" / "plugins" / "profile" / "s" / "h.xplane.pb")
    return v


def notes_of(run, mode="eager"):
    return " ".join(run.modes[mode].notes)


@pytest.mark.parametrize("link", [".traceinsight", "analysis"])
def test_cache_is_never_written_through_a_symlink(tmp_path, link):
    from traceinsight.analysis import cache
    run = make_run(tmp_path)
    v = victim(tmp_path)
    before = snapshot(v)
    if link == ".traceinsight":
        (run / ".traceinsight").symlink_to(v)
    else:
        (run / ".traceinsight").mkdir()
        (run / ".traceinsight" / f"analysis-v{cache.ANALYSIS_VERSION}").symlink_to(v)
    for _ in range(2):
        loaded = traceinsight.load(run)
        assert loaded.modes["eager"].ok and loaded.modes["function"].ok
        assert "analysis cache not written" in notes_of(loaded) and "symlink" in notes_of(loaded)
    assert snapshot(v) == before


def test_a_mode_named_dotdot_reads_nothing_outside(tmp_path):
    run = make_run(tmp_path)
    v = victim(tmp_path)
    (run / "run.json").write_text(json.dumps(
        set_at(GOOD_RUN, ("modes",), {"..": {"status": "ok"}, ".": {"status": "ok"},
                                      "eager": {"dir": "eager", "status": "ok"}})))
    with watch_reads(tmp_path, run) as outside:
        loaded = traceinsight.load(run, use_cache=False)
    assert outside == []
    assert not loaded.modes[".."].ok and not loaded.modes["."].ok
    assert loaded.modes["eager"].ok
    assert snapshot(v) == snapshot(v)


@pytest.mark.parametrize("what", ["mode folder", "profile folder", "session", "trace",
                                  "timings"])
def test_symlinks_out_of_the_run_are_not_followed(tmp_path, what):
    run = make_run(tmp_path)
    v = victim(tmp_path)
    eager = run / "eager"
    if what == "mode folder":
        shutil.rmtree(eager)
        eager.symlink_to(v)
    elif what == "profile folder":
        shutil.rmtree(eager / "host")
        (eager / "host").symlink_to(v / "host")
    elif what == "session":
        shutil.rmtree(eager / "host" / "plugins" / "profile" / "s")
        (eager / "host" / "plugins" / "profile" / "s").symlink_to(v / "host/plugins/profile/s")
    elif what == "trace":
        t = next((eager / "host").rglob("*.xplane.pb"))
        t.unlink()
        t.symlink_to(next((v / "host").rglob("*.xplane.pb")))
    else:
        (eager / "timings.json").unlink()
        (eager / "timings.json").symlink_to(v / "timings.json")
    with watch_reads(tmp_path, run) as outside:
        loaded = traceinsight.load(run, use_cache=False)
    assert [p for _, p in outside if not os.path.isdir(p)] == []   # no file of the victim read
    m = loaded.modes["eager"]
    assert not m.ok or "not read" in " ".join(m.notes)
    assert all(str(v) not in p for p in m.trace_paths)
    assert loaded.modes["function"].ok
    if not m.ok:
        assert "\n" not in m.error and ("symlink" in m.error or "no trace" in m.error)


def test_a_symlink_inside_the_run_is_followed(tmp_path):
    """Confinement is about leaving the folder: a mode folder linked to another inside it loads."""
    run = make_run(tmp_path)
    shutil.move(run / "eager", run / "real-eager")
    (run / "eager").symlink_to("real-eager")
    assert traceinsight.load(run, use_cache=False).modes["eager"].ok


def test_a_long_mode_name_without_a_folder_fails_alone(tmp_path, capsys):
    run = make_run(tmp_path)
    long = "m" * 300
    manifest = set_at(GOOD_RUN, ("modes", long), {"status": "ok"})
    (run / "run.json").write_text(json.dumps(manifest))
    loaded = traceinsight.load(run, use_cache=False)
    assert loaded.modes[long].status == "failed" and loaded.modes["eager"].ok
    assert main(["analyze", str(run), "--mode", "x" * 300]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_mode_dir_is_one_plain_component():
    for name in ("..", ".", ".hidden", "a/b", "x" * 300, "", "tf_keras:predict", "\x1b]52;c;"):
        d = runfolder.mode_dir(name)
        assert d and "/" not in d and not d.startswith(".") and len(d) <= runfolder.MAX_DIR_NAME
    assert runfolder.mode_dir("tf_keras:predict") == "tf_keras-predict"
    assert runfolder.mode_dir("x" * 300) != runfolder.mode_dir("x" * 299 + "y")


# ------------------------------------------------------------------------------------ FIFOs
def _no_hang(seconds=20):
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(seconds)
    return old


@pytest.mark.parametrize("where", ["trace", "cache", "run.json", "timings.json"])
def test_a_fifo_never_hangs_analyze_report_or_view(tmp_path, capsys, where):
    from traceinsight.analysis import cache
    run = make_run(tmp_path)
    if where == "trace":
        os.mkfifo(run / "eager/host/plugins/profile/s/zz.xplane.pb")
    elif where == "cache":
        d = run / ".traceinsight" / f"analysis-v{cache.ANALYSIS_VERSION}"
        d.mkdir(parents=True)
        os.mkfifo(d / "eager.json")
    elif where == "run.json":
        (run / "run.json").unlink()
        os.mkfifo(run / "run.json")
    else:
        (run / "eager/timings.json").unlink()
        os.mkfifo(run / "eager/timings.json")
    old = _no_hang()
    try:
        codes = [main(["analyze", str(run)]), main(["report", str(run), "-o",
                                                    str(tmp_path / "r.md")])]
        from traceinsight.report import load_run  # what view loads with
        try:
            load_run(run)
        except TraceinsightError:
            pass
    except Hang:
        pytest.fail(f"a FIFO as {where} hangs")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    err = capsys.readouterr().err
    assert "Traceback" not in err
    # without a readable run.json the folder is read as a logdir of traces
    assert codes == [0, 0]


# ------------------------------------------------------------------------------- the cache
def _cached_run(tmp_path):
    from traceinsight.analysis import cache
    run = make_run(tmp_path)
    loaded = traceinsight.load(run)
    assert loaded.modes["eager"].ok
    f = run / ".traceinsight" / f"analysis-v{cache.ANALYSIS_VERSION}" / "eager.json"
    assert f.is_file()
    return run, f


def _damage_cache(f: Path, how: str) -> None:
    data = json.loads(f.read_text())
    if how == "deep":
        f.write_text("[" * 200_000)
    elif how == "dev-zero":
        f.unlink()
        f.symlink_to("/dev/zero")
    elif how == "huge-int":
        cols = data["steps"]
        i = cols["dtypes"].index("int64")
        cols["values"][i][0] = 10 ** 30
        f.write_text(json.dumps(data))
    elif how == "huge-float-text":
        f.write_text(json.dumps(data).replace('"ok"', "1e999", 1))
    elif how == "wrong-type":
        data["name"] = {"a": 1}
        data["steps"] = [1, 2]
        f.write_text(json.dumps(data))
    elif how == "object-cell":
        cols = data["ops"]
        cols["values"] = [[{"x": 1}] for _ in cols["columns"]]
        f.write_text(json.dumps(data))
    elif how == "truncated":
        f.write_bytes(f.read_bytes()[: len(f.read_bytes()) // 2])
    elif how == "binary":
        f.write_bytes(bytes(range(256)) * 10)
    elif how == "folder":
        f.unlink()
        f.mkdir()
    elif how == "other-traces":      # the key matches, the files it names are elsewhere
        data["trace_paths"] = ["/etc/passwd"]
        f.write_text(json.dumps(data))
    elif how == "oversized":
        with open(f, "r+b") as fh:
            fh.truncate(300 << 20)   # sparse: no disk used


@pytest.mark.parametrize("how", ["deep", "dev-zero", "huge-int", "huge-float-text", "wrong-type",
                                 "object-cell", "truncated", "binary", "folder", "oversized",
                                 "other-traces"])
def test_a_damaged_cache_is_ignored_and_rebuilt(tmp_path, capsys, how):
    run, f = _cached_run(tmp_path)
    _damage_cache(f, how)
    loaded = traceinsight.load(run)
    assert loaded.modes["eager"].ok and loaded.modes["function"].ok
    if how not in ("huge-float-text",):   # an unreadable "status" is only a stale key
        assert "analysis cache not used" in notes_of(loaded), notes_of(loaded)
    assert main(["analyze", str(run)]) == 0
    assert "Traceback" not in capsys.readouterr().err
    if how not in ("dev-zero", "folder"):  # rebuilt: the next load reads it, without a note
        again = traceinsight.load(run)
        assert "analysis cache" not in notes_of(again)
        assert json.loads(f.read_text())["name"] == "eager"


# ----------------------------------------------------------------------- timings.json holes
@pytest.mark.parametrize("field,value", [
    (("rounds", 0, "steps_s"), ["x"]), (("rounds", 0, "steps_s"), [-1.0]),
    (("rounds", 0, "steps_s"), [1e300]), (("rounds", 0, "steps_s"), "0.1"),
    (("rounds", 0), 5), (("rounds",), {"a": 1}), (("rounds", 0, "round"), -1),
    (("load",), "busy"), (("load", "cpu_count"), "x"), (("load", "loadavg_start"), ["x"]),
    (("load", "timing_phase", "other_cpu_busy"), 7),
])
def test_bad_rounds_or_load_fail_their_mode_only(tmp_path, field, value):
    run = make_run(tmp_path)
    good = GOOD_TIMINGS | {"rounds": [{"round": 0, "steps_s": [0.01, 0.011], "step_nums": [1, 2]}],
                           "load": {"cpu_count": 2, "timing_phase": {"other_cpu_busy": 0.1}}}
    (run / "function/timings.json").write_text(json.dumps(good))
    assert traceinsight.load(run, use_cache=False).modes["function"].ok
    (run / "eager/timings.json").write_text(json.dumps(set_at(good, field, value)))
    loaded = traceinsight.load(run, use_cache=False)
    m = loaded.modes["eager"]
    assert m.status == "failed" and "timings.json: field " in m.error and "\n" not in m.error
    assert loaded.modes["function"].ok


# ----------------------------------------------------------------------------- the fuzz suite
# hypothesis, fixed seed (derandomize) and a bounded number of examples: the families above
# combined at random in one run folder, through load, analyze, report and export.
from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

NASTY = ["\x1b]52;c;cm0gLXJmIH4=\x07", "\x1b]0;pwned\x07", "\x1b[2J", "\u202e", "\n", "\r",
         "\x00", "\x7f", "\x9b", "\u2028", "..", "/", "../..", "%s", "{0}", "[red]x[/]"]
name_st = st.one_of(st.sampled_from(["eager", "function", "..", ".", "x" * 300, "a/b"]),
                    st.lists(st.sampled_from(NASTY + ["m", "eager"]), min_size=1, max_size=4)
                    .map("".join))
entry_st = st.fixed_dictionaries({
    "dir": st.sampled_from([None, "eager", "function", "out", "fifo", "loop", "missing"]),
    "status": st.sampled_from(["ok", "failed", "running", "pending"]),
    "error": st.one_of(st.none(), st.sampled_from(NASTY))})
cache_st = st.sampled_from(["none", "good", "deep", "dev-zero", "huge-int", "wrong-type",
                            "truncated", "fifo", "symlink-dir"])
env_st = st.dictionaries(st.sampled_from(["tensorflow", "keras", "cores", "python"]),
                         st.one_of(st.sampled_from(NASTY), st.integers(-5, 10 ** 20)), max_size=4)

FORBIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


@settings(max_examples=60, derandomize=True, deadline=None, phases=[Phase.explicit, Phase.generate],
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(modes=st.dictionaries(name_st, entry_st, min_size=1, max_size=4), cache_kind=cache_st,
       env=env_st, workload=st.sampled_from(NASTY + ["/x/model.py"]))
def test_fuzz_hostile_run_folders(tmp_path_factory, modes, cache_kind, env, workload):
    """Hostile run folders: mode names and folders (``..``, symlinks out and loops, FIFOs, 300
    characters, escape codes), damaged caches, escape codes in run.json's strings. No traceback,
    no hang, no read or write outside the run, no raw control character on any output."""
    from traceinsight.analysis import cache
    root = tmp_path_factory.mktemp("fuzz")
    run = make_run(root)
    v = victim(root)
    before = snapshot(v)
    (run / "out").symlink_to(v)
    os.mkfifo(run / "fifo")
    (run / "loop").symlink_to("loop")
    manifest = copy.deepcopy(GOOD_RUN)
    manifest["modes"] = {k: {kk: vv for kk, vv in e.items() if vv is not None}
                         for k, e in modes.items()}
    manifest["environment"] = env
    manifest["workload"] = dict(manifest["workload"], path=workload)
    (run / "run.json").write_text(json.dumps(manifest))
    if cache_kind != "none":
        traceinsight.load(run)
        cdir = run / ".traceinsight" / f"analysis-v{cache.ANALYSIS_VERSION}"
        files = sorted(cdir.glob("*.json")) if cdir.is_dir() else []
        if cache_kind == "symlink-dir":
            shutil.rmtree(run / ".traceinsight", ignore_errors=True)
            (run / ".traceinsight").symlink_to(v)
        elif cache_kind == "fifo" and files:
            files[0].unlink()
            os.mkfifo(files[0])
        elif files and cache_kind != "good":
            _damage_cache(files[0], cache_kind)
    outputs = []
    old = _no_hang(60)
    try:
        with watch_reads(root, run, allowed=(root / "csv",)) as outside:
            for argv in (["analyze", str(run)], ["report", str(run), "--format", "md"],
                         ["report", str(run), "--format", "html"],
                         ["report", str(run), "--format", "json"],
                         ["analyze", str(run), "--mode", "\x1b]0;x\x07"],
                         ["diff", str(run), "--modes", "eager,\x1b[2J"],
                         ["export", str(run), "--mode", "\u202ex", "-o", str(root / "csv")],
                         ["export", str(run), "--tables", "csv", "-o", str(root / "csv")]):
                out, err = io.StringIO(), io.StringIO()
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                    code = main(argv)
                assert code in (0, 1, 2), (argv, code)
                assert "Traceback" not in err.getvalue()
                if code:
                    assert len(err.getvalue().strip().splitlines()) == 1, err.getvalue()
                outputs += [out.getvalue(), err.getvalue()]
            outputs += [p.read_text() for p in sorted((root / "csv").glob("*.csv"))] \
                if (root / "csv").is_dir() else []
            from traceinsight.tui.overview import run_title
            try:
                outputs.append(run_title(traceinsight.load(run)).plain)
            except TraceinsightError:
                pass
    except Hang:
        pytest.fail("hang")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert [p for _, p in outside if not os.path.isdir(p)] == []
    assert snapshot(v) == before
    for text in outputs:
        # html / md / json / text: no raw control, escape or bidi character anywhere
        bad = FORBIDDEN.findall(text)
        assert not bad, (bad, text[:300])


def test_newest_run_is_the_one_made_last_not_the_last_name(tmp_path):
    """``view`` / ``analyze`` / ``report`` with no argument: a ``--name`` run made earlier does not
    win over a timestamped run made later (nor the other way round)."""
    runs = tmp_path / "runs"
    for name, created in (("zzz-named", "2026-01-01T00:00:00+00:00"),
                          ("20260301T000000Z-late", "2026-03-01T00:00:00+00:00"),
                          ("aaa-named-latest", "2026-04-01T00:00:00+00:00"),
                          ("broken", None)):
        (runs / name).mkdir(parents=True)
        manifest = {"created_utc": created} if created else "not an object"
        (runs / name / runfolder.MANIFEST).write_text(json.dumps(manifest))
        os.utime(runs / name / runfolder.MANIFEST, (0, 0))   # the broken one is oldest by mtime
    assert runfolder.newest_run(runs).name == "aaa-named-latest"
