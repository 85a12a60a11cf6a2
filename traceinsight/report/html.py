"""One self-contained HTML file: inline CSS and SVG, no script, nothing fetched.

Every string that comes from a trace or a run (op, function and mode names, errors, environment,
commands) goes through ``esc``: ``present.safe`` (control and bidi characters as visible escapes,
long names cut) then ``html.escape(..., quote=True)``; the only markup is ours.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Sequence

from traceinsight import present
from traceinsight.model import CATEGORIES
from traceinsight.report.data import env_value
from traceinsight.report.document import FindingEntry, HostSession, ModeEntry, ReportDocument
from traceinsight.report.markdown import (
    CATEGORY_MEANS_NOTE,
    CATEGORY_MEDIANS_NOTE,
    STEP_COLUMN,
    concentrated_note,
    correction_note,
    distortion_note,
    mean_share,
)
from traceinsight.report.options import DEFAULTS, REPORT_DEFAULTS, RenderOptions, ReportOptions
from traceinsight.stats import RATIO_METHOD

if TYPE_CHECKING:
    from traceinsight.analysis.step_marks import StepMarks

TOP_ROWS = 25

COLORS = present.CATEGORY_COLORS
MAX_TEXT = 4000       # characters of one paragraph (evidence quotes op names)

CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2em auto;max-width:1100px;
 padding:0 1em;color:#1f2328}
h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #d0d7de;padding-bottom:.2em;margin-top:1.6em}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #d0d7de;padding:2px 8px;
 vertical-align:top}th{background:#f6f8fa;text-align:left}td.n{text-align:right;
 font-variant-numeric:tabular-nums}code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;
 font-size:.92em}pre{background:#f6f8fa;padding:.6em;overflow:auto}.summary{font-weight:600}
.finding{border-left:4px solid #d0d7de;padding:.1em 1em;margin:1em 0}.high{border-color:#cf222e}
.medium{border-color:#bf8700}.low{border-color:#1a7f37}.info{border-color:#8c959f}.muted{color:#57606a}
details{margin:.6em 0}summary{cursor:pointer;font-weight:600}.sig{font-weight:600}
"""


def esc(s: Any, limit: int | None = MAX_TEXT, newlines: bool = False) -> str:
    return html.escape(present.safe(s, limit, newlines=newlines), quote=True)


def num(x: Any) -> str:
    return esc(present.ms(x))


def signed(x: Any) -> str:
    return esc(present.signed_ms(x))


def pct(x: Any, signed_: bool = True) -> str:
    return esc(present.percent(x, signed=signed_))


def table(header: Sequence[str], rows: Sequence[Sequence[str]], numeric: str = "",
          cap: int | None = None, what: str = "rows") -> str:
    """Cells are already-escaped HTML; ``numeric`` marks right-aligned columns with 'r'."""
    shown = rows if cap is None else rows[:cap]
    out = ["<table><thead><tr>" + "".join(f"<th>{h}</th>" for h in header) + "</tr></thead><tbody>"]
    for r in shown:
        out.append("<tr>" + "".join(
            f"<td class=\"n\">{c}</td>" if i < len(numeric) and numeric[i] == "r" else f"<td>{c}</td>"
            for i, c in enumerate(r)) + "</tr>")
    out.append("</tbody></table>")
    if len(shown) < len(rows):
        out.append(f"<p class=\"muted\">{len(rows) - len(shown)} more {esc(what)} not shown "
                   f"(the JSON report has all).</p>")
    return "\n".join(out)


def count(x: Any) -> str:
    return esc(present.count(x))


def integer(x: Any) -> str:
    return esc(present.integer(x))


def code(s: Any) -> str:
    return f"<code>{esc(s, present.MAX_NAME)}</code>"


def pre(s: Any) -> str:
    return f"<pre><code>{esc(s, None, newlines=True)}</code></pre>"


def bars_svg(modes: Sequence[ModeEntry]) -> str:
    """Stacked bars: mean ms/step per category of each ok mode (``report.svg``)."""
    from traceinsight.report.svg import category_bars
    return category_bars(modes)


def step_charts(modes: Sequence[ModeEntry], marks: Mapping[str, StepMarks]) -> list[str]:
    """Each ok mode's steps over the run (``report.svg``), under a heading."""
    from traceinsight.report.svg import MAX_STEP_CHARTS, step_chart
    ok = [m for m in modes if m["status"] == "ok"]
    charts = [c for c in (step_chart(m, marks[m["name"]]) if m["name"] in marks else ""
                          for m in ok[:MAX_STEP_CHARTS]) if c]
    if not charts:
        return []
    more = (f" The first {MAX_STEP_CHARTS} of {len(ok)} modes; the JSON report has every step."
            if len(ok) > MAX_STEP_CHARTS else "")
    return ["<h2>Steps over the run</h2>",
            "<p class=\"muted\">Each host-traced step, split by category; the first step, stalls "
            f"and retraces marked. Hover a bar for its figures.{more}</p>", *charts]


def _env_value(v: Any) -> str:
    return env_value(v, esc, code)


def environment_table(env: dict) -> str:
    from traceinsight.report.markdown import env_items
    rows = [[code(label) if kind == "var" else esc(label),
             ("unset" if v is None else code(v)) if kind == "var" else _env_value(v)]
            for kind, label, v in env_items(env)]
    return table(["", ""], rows) if rows else ""


def _mode_rows(modes: Sequence[ModeEntry]) -> list[list[str]]:
    rows = []
    for m in modes:
        if m["status"] != "ok" or m.get("median_ms") is None:
            rows.append([code(m["name"]), "–", "–", "–",
                         ("no steps measured" if m["status"] == "ok"
                          else esc(m["status"], present.MAX_NAME))
                         + (f": {esc(m['error'], present.MAX_NAME)}" if m.get("error") else ""),
                         "–", "–", "–"])
            continue
        rows.append([code(m["name"]), num(m["median_ms"]), esc(present.ms_range(m["ci_lo_ms"], m["ci_hi_ms"])),
                     esc(present.ratio_ci(m["ratio"], m["ratio_lo"], m["ratio_hi"], m.get("ratio_note"))),
                     esc(m.get("vs_fastest") or "–"), num(m.get("first_step_ms")),
                     pct(m.get("distortion")), count(m.get("n"))])
    return rows


def modes_table(modes: Sequence[ModeEntry]) -> str:
    return table(["mode", "median ms/step", "95 % CI", "ratio to fastest", "vs fastest",
                  "first step ms", "profiler distortion", "steps"], _mode_rows(modes), "lrlllrrr")


def overview(document: ReportDocument) -> str:
    """The top of the report, for a notebook cell above the whole report's frame: the summary,
    the modes table and the category bars."""
    doc = document.data
    return "\n".join([f"<p><b>{esc(doc['summary'])}</b></p>", modes_table(doc["modes"]),
                      bars_svg(doc["modes"])])


def _timing_note(modes: Sequence[ModeEntry]) -> str:
    traced = [m["name"] for m in modes if m.get("timing_source") == "traced"]
    if traced and len(traced) == sum(1 for m in modes if m.get("timing_source")):
        return ("Median ms/step of the host-traced steps (no untraced timing was captured) with its "
                "95 % bootstrap interval.")
    note = "Median ms/step of the untraced steps with its 95 % bootstrap interval."
    if traced:
        note += " Without untraced timing, from the host-traced steps: " + ", ".join(
            present.safe(t) for t in traced) + "."
    return note


def _findings(findings: Sequence[FindingEntry]) -> str:
    if not findings:
        return "<p>No rule found anything to change in this run.</p>"
    out = []
    for f in findings:
        saving = (f"<b>Saves ≈ {num(f['saving_ms'])} ms/step</b> ({esc(f['saving_basis'])})"
                  if f.get("saving_ms") is not None else
                  f"<b>No saving estimate</b> ({esc(f['saving_basis'])})")
        out.append(
            f'<div class="finding {esc(f["severity"])}"><h3>{integer(f["rank"])}. {esc(f["title"])}</h3>'
            f"<p>{saving} · severity {esc(f['severity'])} · rule <code>{esc(f['rule'])}</code> · modes "
            + ", ".join(code(m) for m in f["modes"]) + "</p>"
            f"<p>{esc(f['evidence'])}</p>{pre(f['fix'])}</div>")
    return "\n".join(out)


def _verified(v: dict | None) -> list[str]:
    """``capture --verify``: each finding's claimed saving against the fix applied."""
    from traceinsight.report import verify_text as vt
    if not v:
        return []
    return ["<h2>Claimed against measured (capture --verify)</h2>",
            table(vt.HEADER, vt.rows(v, code, esc), "lllrrr"),
            "<ul>" + "".join(f"<li>{x}</li>" for x in vt.notes(v, code, esc)) + "</ul>"]


def _factors(factors: dict | None) -> list[str]:
    """The factor table (``report/factor_text.py``), after the findings; none without a pair."""
    from traceinsight.report import factor_text as ft
    if not factors or not ft.has_table(factors):
        return []
    out = ["<h2>Factors: what separates the modes</h2>", f"<p class=\"muted\">{esc(ft.INTRO)}</p>",
           table(ft.EFFECT_HEADER, ft.effect_rows(factors, code, esc), "lllll")]
    for title, lines in (("Gaps split into factors", ft.gap_sentences(factors, code, esc)),
                         ("Interactions", ft.interaction_sentences(factors, code, esc)),
                         ("No pair in this run", ft.absent_sentences(factors, code, esc))):
        if lines:
            out += [f"<h3>{esc(title)}</h3>", "<ul>" + "".join(f"<li>{x}</li>" for x in lines) + "</ul>"]
    return out


def _cells(cols: Sequence[present.ColumnSpec], row: dict) -> list[str]:
    out = []
    for c in cols:
        v = c.value(row)
        out.append(esc(c.format(v)) if c.format is not None else esc(v) if c.text else code(v))
    return out


def _align(cols: Sequence[present.ColumnSpec]) -> str:
    return "".join("r" if c.numeric else "l" for c in cols)


def spec_table(cols: Sequence[present.ColumnSpec], records: list[dict], what: str) -> str:
    """A per-mode table by its column specs (``present``), the first TOP_ROWS rows."""
    return table([c.label for c in cols], [_cells(cols, r) for r in records], _align(cols),
                 TOP_ROWS, what)


def _details(modes: Sequence[ModeEntry]) -> str:
    ok = [m for m in modes if m["status"] == "ok"]
    out = [_device_details(ok)] if any(m.get("devices") for m in ok) else []
    body = []
    for m in ok:
        if m["ops"]:
            body.append(f"<h3>{code(m['name'])} ({len(m['ops'])} ops)</h3>")
            body.append(spec_table(present.OP_COLUMNS, m["ops"], "ops"))
    if body:
        out.append("<details><summary>Top ops per mode</summary>" + "\n".join(body) + "</details>")
    body = []
    for m in ok:
        if m.get("tfdata_stages"):
            body.append(f"<h3>{code(m['name'])}</h3>")
            body.append(spec_table(present.STAGE_COLUMNS, m["tfdata_stages"], "stages"))
    if body:
        out.append(f"<details><summary>{esc(present.STAGE_TITLE)}</summary>" + "\n".join(body)
                   + "</details>")
    rows = [[code(m["name"])] + _cells(present.RETRACE_COLUMNS, r) for m in ok for r in m["retraces"]]
    if rows:
        out.append("<details><summary>Retraces</summary>" + table(
            ["mode"] + [c.label for c in present.RETRACE_COLUMNS], rows,
            "l" + _align(present.RETRACE_COLUMNS), TOP_ROWS, "functions") + "</details>")
    body = []
    for m in ok:
        if m["hotspots"]:
            body.append(f"<h3>{code(m['name'])}</h3>")
            body.append(spec_table(present.HOTSPOT_COLUMNS, m["hotspots"], "functions"))
    if body:
        out.append("<details><summary>Python hotspots</summary>" + "\n".join(body) + "</details>")
    rows = [[code(m["name"])] + _cells(present.OTHER_COLUMNS, o) for m in ok for o in m["other"]]
    if rows:
        out.append("<details><summary>Events no rule places (other)</summary>"
                   + table(["mode"] + [c.label for c in present.OTHER_COLUMNS], rows,
                           "l" + _align(present.OTHER_COLUMNS), TOP_ROWS, "events")
                   + "</details>")
    names, layers = present.layer_matrix(ok)
    if layers:
        out.append(f"<details><summary>{esc(present.LAYERS_TITLE)}</summary>" + table(
            ["layer"] + [code(n) for n in names], [[code(lay)] + [esc(present.ms(v)) for v in vals] for lay, vals in layers],
            "l" + "r" * len(names), TOP_ROWS, "layers") + "</details>")
    rows = [[code(m["name"])] + _cells(present.MEMORY_COLUMNS, m["memory"]) for m in ok
            if present.memory_recorded(m.get("memory"))]
    if rows:
        out.append(f"<details><summary>{esc(present.MEMORY_TITLE)}</summary>" + table(
            ["mode"] + [c.label for c in present.MEMORY_COLUMNS], rows,
            "l" + _align(present.MEMORY_COLUMNS), TOP_ROWS, "modes") + "</details>")
    notes = [f"<li>{code(m['name'])}: {esc(n)}</li>" for m in modes for n in m.get("notes", [])]
    notes += [f"<li>{code(m['name'])}: {esc(m['step_rule'])}</li>" for m in ok if m.get("step_rule")]
    if notes:
        out.append("<details><summary>Notes and how steps were found</summary><ul>"
                   + "".join(notes) + "</ul></details>")
    return "\n".join(out)


def _hosts(sessions: Sequence[HostSession], categories: Sequence[list[dict]]) -> list[str]:
    """Multi-host profile sessions: the hosts side by side, the straggler and the spread, each
    host's category split (``categories``: each session's rows), and the steps matched by
    step_num (first TOP_ROWS)."""
    if not sessions:
        return []
    out = ["<h2>Hosts</h2>",
           "<p class=\"muted\">Each profile session with several hosts (a multi-worker job): "
           "median ms per steady step of each host, its ratio to the fastest host with a 95 % "
           "bootstrap interval; where steps line up, in how many steps each host was the "
           "slowest and its median wait for each step's slowest host. The hosts' clocks are not "
           "synchronised: steps are matched by step_num, never by time.</p>"]
    for g, split in zip(sessions, categories):
        out.append(f"<h3>Profile session {code(g['session'])}</h3>")
        out.append("<ul>" + "".join(f"<li>{esc(line)}</li>" for line in g["sentences"]) + "</ul>")
        out.append(spec_table(present.host_columns(g["aligned"]), g["hosts"], "hosts"))
        if g["category_names"]:
            where = ("the device time of each host's slowest device"
                     if g["category_kind"] == "device" else "median ms per steady step")
            out.append(f"<p>Category split per host ({esc(where)}):</p>")
            out.append(spec_table(present.host_category_columns(g["category_names"]),
                                  split, "rows"))
        if g["steps"]:
            from traceinsight.report.svg import host_skew
            out.append(host_skew(g))
            out.append(f"<details><summary>Steps matched by step_num ({len(g['steps'])})</summary>"
                       + spec_table(present.HOST_STEP_COLUMNS, g["steps"], "steps")
                       + "</details>")
    return out


def _device_details(ok: Sequence[ModeEntry]) -> str:
    """GPU traces: per device (the slowest sets the step) and the top kernels with their TF ops."""
    body = []
    for m in ok:
        if not m.get("devices"):
            continue
        body.append(f"<h3>{code(m['name'])}: median ms per steady step and device</h3>")
        body.append(table(["host", "device", "steps", "step", "kernels", "H2D", "D2H", "D2D", "idle",
                           "host launch", "device span", "after host", ""],
                          [[code(d.get("host")), code(d.get("device")), count(d.get("steps")),
                            num(d.get("wall_ms")), num(d.get("compute_ms")), num(d.get("h2d_ms")),
                            num(d.get("d2h_ms")), num(d.get("d2d_ms")), num(d.get("idle_ms")),
                            num(d.get("launch_ms")), num(d.get("span_ms")),
                            num(d.get("after_host_ms")), "slowest" if d.get("slowest") else ""]
                           for d in m["devices"]], "llrrrrrrrrrrl", TOP_ROWS, "devices"))
        if m.get("kernels"):
            body.append(table(["TF op", "type", "kernel", "calls", "device ms", "ms/step", "share"],
                              [[code(k.get("op")), code(k.get("op_type")), code(k.get("kernel")),
                                count(k.get("calls")), num(k.get("device_ms")),
                                num(k.get("ms_per_step")), pct(k.get("share"), False)]
                               for k in m["kernels"]], "lllrrrr", TOP_ROWS, "kernels"))
    return ("<details><summary>Device side (kernels, copies, idle; per device)</summary>"
            + "\n".join(body) + "</details>")


def _page(title: str, body: list[str]) -> str:
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{esc(title, present.MAX_NAME)}</title><style>{CSS}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")


def render_document(document: ReportDocument) -> str:
    doc = document.data
    run, modes = doc["run"], doc["modes"]
    body = [f"<h1>traceinsight report: {esc(run['name'])}</h1>",
            f"<p class=\"summary\">{esc(doc['summary'])}</p>"]
    wl = run.get("workload") or {}
    if wl.get("path") or wl.get("name"):
        body.append(f"<p class=\"muted\">Workload {code(wl.get('path') or wl.get('name'))}"
                    + (f" ({esc(wl['kind'])})" if wl.get("kind") else "")
                    + f" · {esc(doc['generator'])}</p>")
    # the same order as the markdown report: the modes, where their time goes, the findings,
    # then the environment (the notebook shows this page and opens on the modes and the chart)
    body += ["<h2>Modes</h2>",
             f"<p class=\"muted\">{esc(_timing_note(modes))} {esc(RATIO_METHOD)}</p>",
             modes_table(modes),
             "<h2>Where the time goes</h2>",
             f"<p class=\"muted\">{esc(CATEGORY_MEANS_NOTE)}.</p>",
             bars_svg(modes),
             table(["mode", *CATEGORIES, STEP_COLUMN],
                   [[code(m["name"])] + [esc(mean_share((m.get("category_means") or {}).get(c),
                                                        (m.get("category_shares") or {}).get(c)))
                                         if m.get("host_events_recorded") is not False
                                         else "not recorded" for c in CATEGORIES]
                    + [num(m.get("category_total_ms"))] for m in modes if m["status"] == "ok"],
                   "l" + "r" * (len(CATEGORIES) + 1)),
             *[f"<p class=\"muted\">{esc(note)}</p>"
               for note in (distortion_note(modes, str), correction_note(modes, str)) if note],
             *([f"<p class=\"muted\">{esc(concentrated_note(modes, str))}</p>"]
               if concentrated_note(modes, str) else []),
             f"<p class=\"muted\">{esc(CATEGORY_MEDIANS_NOTE)}</p>",
             table(["mode", *CATEGORIES],
                   [[code(m["name"])] + [num(m["categories"].get(c))
                                         if m.get("host_events_recorded") is not False
                                         else "not recorded" for c in CATEGORIES]
                    for m in modes if m["status"] == "ok"], "l" + "r" * len(CATEGORIES)),
             *step_charts(modes, document.step_marks),
             *_hosts(doc.get("host_sessions") or [], document.host_categories),
             "<h2>Findings</h2>", _findings(doc["findings"]), *_verified(doc.get("verify")),
             *_factors(doc.get("factors")),
             "<h2>Details</h2>", _details(modes)]
    env = environment_table(doc.get("environment") or {})
    if env:
        body += ["<h2>Environment</h2>", env]
    if run.get("command"):
        body += ["<h2>Reproduce</h2>", pre(run["command"])]
    return _page(f"traceinsight report: {run['name']}", body)


def write(document: ReportDocument, options: ReportOptions = REPORT_DEFAULTS) -> str:
    return render_document(document)


def render_diff(diff: dict, options: RenderOptions = DEFAULTS) -> str:
    a, b = diff["a"]["name"], diff["b"]["name"]
    body = [f"<h1>traceinsight diff: {esc(a)} → {esc(b)}</h1>",
            f"<p class=\"summary\">{esc(diff['summary'])}</p>"]
    if diff["environment_changes"]:
        body += ["<h2>Environment changes</h2>", table(
            ["", esc(a), esc(b)], [[esc(c["key"]), _env_value(c["a"]), _env_value(c["b"])]
                                   for c in diff["environment_changes"]])]
    body += ["<h2>Modes</h2>", "<p class=\"muted\">Delta = B − A in ms/step (positive: B is slower).</p>",
             table(["A", "B", "A ms/step", "B ms/step", "delta", "ratio B/A", "significant"],
                   [[code(p["a"]), code(p["b"]), num(p["a_ms"]), num(p["b_ms"]), signed(p["delta_ms"]),
                     esc(present.ratio_ci(p.get("ratio"), p.get("ratio_lo"), p.get("ratio_hi"), p.get("ratio_note"))),
                     "<span class=\"sig\">yes</span>" if p["significant"] else "no"]
                    for p in diff["pairs"]], "llrrrll")]
    for side, label in (("only_in_a", "A"), ("only_in_b", "B")):
        if diff[side]:
            body.append(f"<p>Only in {label}: " + ", ".join(code(n) for n in diff[side]) + "</p>")
    for p in diff["pairs"]:
        body += [f"<h2>{code(p['a'])} → {code(p['b'])}</h2>", f"<p>{esc(p['sentence'])}</p>",
                 table(["category", "A ms/step", "B ms/step", "delta", "95 % CI of delta", "significant"],
                       [[esc(c["category"]), num(c["a_ms"]), num(c["b_ms"]), signed(c["delta_ms"]),
                         f"{num(c['delta_lo'])} … {num(c['delta_hi'])}"
                         if c.get("delta_lo") is not None else "–",
                         {True: "yes", False: "no", None: "–"}[c.get("significant")]]
                        for c in p["categories"]], "lrrrll")]
        ops = []
        for kind in ("slower", "faster", "added", "removed"):
            if p["ops"][kind]:
                ops.append(f"<h3>{kind} ({len(p['ops'][kind])})</h3>" + table(
                    ["op", "type", "thread", "A ms/step", "B ms/step", "delta"],
                    [[code(o["op"]), code(o["type"]), esc(o["thread"]), num(o["a_ms"]), num(o["b_ms"]),
                      signed(o["delta_ms"])] for o in p["ops"][kind]], "lllrrr", TOP_ROWS, "ops"))
        if ops:
            body.append(f"<details><summary>Op diff ({int(p['ops']['same_count'])} ops unchanged)"
                        "</summary>" + "\n".join(ops) + "</details>")
        if p["retraces"]:
            body.append("<details><summary>Retrace diff</summary>" + table(
                ["function", "A traced", "B traced", "A tracing ms", "B tracing ms", "A compile ms",
                 "B compile ms"],
                [[code(r["function"]), integer(r["a_traced"]),
                  integer(r["b_traced"]), num(r["a_tracing_ms"]),
                  num(r["b_tracing_ms"]), num(r["a_compile_ms"]), num(r["b_compile_ms"])]
                 for r in p["retraces"]], "lrrrrrr", TOP_ROWS, "functions") + "</details>")
    return _page(f"traceinsight diff: {a} → {b}", body)
