"""GitHub-flavoured markdown that pastes into a bug issue: summary, environment, modes, categories,
findings, collapsible details (top ops, retraces, Python hotspots) and the reproducing command.

GitHub refuses issue bodies over 65,536 characters: long tables are cut, whole rows at a time, with a
note saying how many rows were left out (the JSON report keeps them all).
"""

from __future__ import annotations

import re
from typing import Any, Sequence

from traceinsight import present
from traceinsight.model import CATEGORIES
from traceinsight.report.data import env_value
from traceinsight.report.document import FindingEntry, HostSession, ModeEntry, ReportDocument
from traceinsight.report.options import DEFAULTS, REPORT_DEFAULTS, RenderOptions, ReportOptions
from traceinsight.stats import RATIO_METHOD

CATEGORY_MEANS_NOTE = ("The user's step: mean ms/step per category with its share, the profiler's own "
                       "cost taken out of the host-traced steps' split, so the categories add up to "
                       "the untraced median above, stalls in a few steps included (a trace captured "
                       "without traceinsight has no untraced timing: its traced split, as said below)")
CATEGORY_MEDIANS_NOTE = ("The typical step: median ms/step per category, corrected as the means are "
                         "(medians do not add up to a step).")
STEP_COLUMN = "step ms"

GITHUB_LIMIT = 65_536
MAX_CELL = present.MAX_NAME          # characters of one table cell (op names can be huge)
MAX_TEXT = 4000                      # characters of one paragraph (evidence quotes op names)
ROW_CAPS = (20, 10, 5, 3, 1, 0)      # rows per detail table, tried in order until the report fits

_MD_SPECIAL = re.compile(r"([\\`*_\[\]|#~!])")


# ---------------------------------------------------------------------------------------- escaping

def text(s: Any, limit: int | None = MAX_TEXT) -> str:
    """Plain text from a trace or run, safe in markdown prose and table cells (control and bidi
    characters shown as escapes, a newline as ``\\n``, cut at ``limit`` characters)."""
    s = present.safe(s, limit)
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MD_SPECIAL.sub(r"\\\1", s)


def code(s: Any, max_len: int = MAX_CELL, table: bool = True) -> str:
    """An inline code span holding any string (backticks, pipes and newlines included)."""
    s = present.safe(s, max_len)
    if table:
        s = s.replace("|", "\\|")
    ticks = max((len(t) for t in re.findall(r"`+", s)), default=0) + 1
    pad = " " if s.startswith("`") or s.endswith("`") or not s else ""
    return "`" * ticks + pad + s + pad + "`" * ticks


def fence(body: str, lang: str = "") -> str:
    body = present.safe(body, None, newlines=True)
    ticks = max(3, max((len(t) for t in re.findall(r"`{3,}", body)), default=0) + 1)
    return f"{'`' * ticks}{lang}\n{body.rstrip()}\n{'`' * ticks}"


num = present.ms
count = present.count


def pct(x: Any, signed: bool = True) -> str:
    return present.percent(x, signed=signed)


def table(header: Sequence[str], rows: Sequence[Sequence[str]], align: str = "",
          cap: int | None = None, what: str = "rows") -> list[str]:
    """A GFM table; with ``cap``, only the first rows and a note on how many were left out."""
    align = align or "l" * len(header)
    sep = ["---:" if a == "r" else "---" for a in align]
    shown = rows if cap is None else rows[:cap]
    out = ["| " + " | ".join(header) + " |", "| " + " | ".join(sep) + " |"]
    out += ["| " + " | ".join(r) + " |" for r in shown]
    if len(shown) < len(rows):
        out += ["", f"_{len(rows) - len(shown)} more {what} not shown (the JSON report has all)._"]
    return out


# ----------------------------------------------------------------------------------------- sections

_ENV_LABELS = [("tensorflow", "TensorFlow"), ("keras", "Keras"), ("tf_keras", "tf_keras"),
               ("tf_keras_installed", "tf_keras installed"), ("python", "Python"),
               ("numpy", "NumPy"), ("os", "OS"), ("platform", "Platform"), ("machine", "Machine"),
               ("cpu", "CPU"), ("cpu_model", "CPU"), ("cores", "CPU cores"),
               ("cpu_cores", "CPU cores"), ("cpu_cores_usable", "CPU cores usable"),
               ("gpus", "GPU"), ("tf_built_with_cuda", "TF built with CUDA"), ("cuda", "CUDA"),
               ("cudnn", "cuDNN"), ("xprof", "xprof")]
# Left out of the markdown and HTML (they are pasted into public issues), kept in the JSON.
ENV_PRIVATE = ("hostname", "python_executable")
ENV_VAR_KEYS = ("env", "env_vars")


def env_items(env: dict) -> list[tuple[str, str, object]]:
    """(kind, label, value) rows of the environment table: kind "key" or "var" (an env variable)."""
    rows, seen = [], set(ENV_PRIVATE) | set(ENV_VAR_KEYS)
    for key, label in _ENV_LABELS:
        if key in env:
            rows.append(("key", label, env[key]))
            seen.add(key)
    rows += [("key", k, v) for k, v in env.items() if k not in seen]
    for key in ENV_VAR_KEYS:
        if isinstance(env.get(key), dict):
            if not env[key]:
                rows.append(("key", "Environment variables", "none of the relevant ones set"))
            rows += [("var", k, v) for k, v in env[key].items()]
    return rows


def _env_value(v: Any) -> str:
    return env_value(v, text, code)


def environment_rows(env: dict) -> list[list[str]]:
    return [[code(label) if kind == "var" else text(label),
             ("unset" if v is None else code(v)) if kind == "var" else _env_value(v)]
            for kind, label, v in env_items(env)]


def timing_note(modes: Sequence[ModeEntry]) -> str:
    traced = [m["name"] for m in modes if m.get("timing_source") == "traced"]
    note = "Median ms/step of the untraced steps with its 95 % bootstrap interval."
    if traced and len(traced) == sum(1 for m in modes if m.get("timing_source")):
        return "Median ms/step of the host-traced steps (no untraced timing was captured) with its " \
               "95 % bootstrap interval."
    if traced:
        note += " Without untraced timing, from the host-traced steps: " + ", ".join(
            code(n, table=False) for n in traced) + "."
    return note


def mode_rows(modes: Sequence[ModeEntry]) -> list[list[str]]:
    rows = []
    for m in modes:
        if m["status"] != "ok" or m.get("median_ms") is None:
            why = ("no steps measured" if m["status"] == "ok" else text(m["status"], MAX_CELL)) + (
                f": {text(m['error'], MAX_CELL)}" if m.get("error") else "")
            rows.append([code(m["name"]), "–", "–", "–", why, "–", "–", "–"])
            continue
        rows.append([
            code(m["name"]), num(m["median_ms"]),
            present.ms_range(m["ci_lo_ms"], m["ci_hi_ms"]),
            present.ratio_ci(m["ratio"], m["ratio_lo"], m["ratio_hi"], m.get("ratio_note")),
            text(m.get("vs_fastest") or "–"), num(m.get("first_step_ms")), pct(m.get("distortion")),
            count(m.get("n"))])
    return rows


def category_rows(modes: Sequence[ModeEntry]) -> list[list[str]]:
    """Per mode: each category's ms/step in the user's step with its share of it, then the step
    they add up to (the untraced median; a foreign trace's mean traced step)."""
    rows = []
    for m in modes:
        if m["status"] != "ok":
            continue
        means, shares = m.get("category_means") or {}, m.get("category_shares") or {}
        if m.get("host_events_recorded") is False:  # the trace cannot split host time
            rows.append([code(m["name"])] + ["not recorded"] * len(CATEGORIES)
                        + [num(m.get("category_total_ms"))])
            continue
        rows.append([code(m["name"])] + [mean_share(means.get(c), shares.get(c)) for c in CATEGORIES]
                    + [num(m.get("category_total_ms"))])
    return rows


def correction_note(modes: Sequence[ModeEntry], name: Any = None) -> str:
    """How each mode's split was made from its traced one, and how large the correction was:
    the traced mean step, the untraced median, the method, the largest changes by category."""
    parts = []
    for m in modes:
        c = m.get("correction") if m["status"] == "ok" else None
        if not c or m.get("host_events_recorded") is False:
            continue
        who = (name or text)(m["name"])
        if c["kind"] == "traced":
            parts.append(f"{who}: {c['method']}")
            continue
        removed = sorted(((k, v) for k, v in (c.get("removed_ms") or {}).items()
                          if present.is_num(v) and abs(v) >= 0.0005), key=lambda kv: -abs(kv[1]))
        by_cat = ", ".join(f"{k} {'−' if v > 0 else '+'}{num(abs(v))}" for k, v in removed)
        parts.append(f"{who}: traced mean step {num(c['traced_mean_ms'])} ms → untraced median "
                     f"{num(c['untraced_median_ms'])} ms; {c['method']}"
                     + (f"; drawn minus traced, ms/step: {by_cat}" if by_cat else ""))
    if not parts:
        return ""
    return "How this split was obtained, mode by mode: " + "; ".join(parts) + "."


def mean_share(mean: Any, share: Any) -> str:
    """``4.28 (42 %)``: a category's mean ms/step and its share of the traced time."""
    if not present.is_num(mean):
        return num(mean)
    return num(mean) + (f" ({present.percent(share)})" if present.is_num(share) and mean else "")


def concentrated_note(modes: Sequence[ModeEntry], name: Any = None) -> str:
    """Costs concentrated in a few steps that the analysis calls material (``stats.material``):
    the category, the steps it hit and its share of the time above the typical step (empty when
    none; the JSON lists every one)."""
    parts = []
    for m in modes:
        for cat, h in (m.get("concentrated") or {}).items() if m["status"] == "ok" else ():
            if not h.get("material"):
                continue
            steps = ", ".join(f"{s['step_num']} ({num(s['ms'])} ms)" for s in h["steps"][:5])
            parts.append(f"{(name or text)(m['name'])} {cat} in {len(h['steps'])} of {h['n_steps']} "
                         f"steps: {steps}; {present.percent(h['share'])} of the traced time above "
                         f"its typical {num(h['median_ms'])} ms")
    return ("In a few steps only: " + "; ".join(parts) + ".") if parts else ""


def distortion_note(modes: Sequence[ModeEntry], name: Any = None) -> str:
    """Which modes' category split to trust less: the profiler lengthened their traced steps by
    more than the threshold (empty when none)."""
    hit = [m for m in modes if m["status"] == "ok" and m.get("categories_distorted")]
    if not hit:
        return ""
    return ("Less certain: the profiler lengthened the traced steps of "
            + ", ".join(f"{(name or text)(m['name'])} ({pct(m.get('distortion'))})" for m in hit)
            + " by more than 15 %. Its cost is taken out of the split above (how: below), but "
            "the shares of those modes rest on that correction more than on the trace.")


def median_rows(modes: Sequence[ModeEntry]) -> list[list[str]]:
    """Per mode: each category's median ms/step (the typical step; medians do not add up, so no
    total)."""
    return [[code(m["name"])] + (["not recorded"] * len(CATEGORIES)
                                 if m.get("host_events_recorded") is False else
                                 [num(m["categories"].get(c)) for c in CATEGORIES])
            for m in modes if m["status"] == "ok"]


def finding_lines(findings: Sequence[FindingEntry]) -> list[str]:
    if not findings:
        return ["No rule found anything to change in this run."]
    out = []
    for f in findings:
        out.append(f"### {f['rank']}. {text(f['title'])}")
        out.append("")
        if f.get("saving_ms") is not None:
            head = f"**Saves ≈ {num(f['saving_ms'])} ms/step** ({text(f['saving_basis'])})"
        else:
            head = f"**No saving estimate** ({text(f['saving_basis'])})"
        modes = ", ".join(code(m, table=False) for m in f["modes"])
        out += [f"{head} · severity {text(f['severity'])} · rule {code(f['rule'], table=False)} · "
                f"modes {modes}", "",
                text(f["evidence"]), "", fence(f["fix"], "python"), ""]
    return out


def _details(summary: str, body: list[str]) -> list[str]:
    return ["<details>", f"<summary>{summary}</summary>", ""] + body + ["", "</details>", ""]


def _cell(c: present.ColumnSpec, row: dict) -> str:
    v = c.value(row)
    if c.format is not None:
        return c.format(v)
    return text(v, MAX_TEXT) if c.text else code(v)


def spec_table(cols: Sequence[present.ColumnSpec], records: list[dict],
               mode: str | None = None) -> tuple[list[str], list[list[str]]]:
    """Header and rows of a per-mode table by its column specs (``mode``: a first column)."""
    header = (["mode"] if mode is not None else []) + [c.label for c in cols]
    rows = [([code(mode)] if mode is not None else []) + [_cell(c, r) for c in cols] for r in records]
    return header, rows


def _align(cols: Sequence[present.ColumnSpec], mode: bool = False) -> str:
    return ("l" if mode else "") + "".join("r" if c.numeric else "l" for c in cols)


def detail_sections(modes: Sequence[ModeEntry], cap: int | None) -> list[str]:
    ok = [m for m in modes if m["status"] == "ok"]
    out: list[str] = []

    out += device_section(ok, cap)
    body: list[str] = []
    for m in ok:
        if not m["ops"]:
            continue
        header, rows = spec_table(present.OP_COLUMNS, m["ops"])
        body += [f"**{code(m['name'], table=False)}** ({len(rows)} ops)", ""]
        body += table(header, rows, _align(present.OP_COLUMNS), cap, "ops") + [""]
    if body:
        out += _details("Top ops per mode", body)

    body = []
    for m in ok:
        if not m.get("tfdata_stages"):
            continue
        header, rows = spec_table(present.STAGE_COLUMNS, m["tfdata_stages"])
        body += [f"**{code(m['name'], table=False)}**", ""]
        body += table(header, rows, _align(present.STAGE_COLUMNS), cap, "stages") + [""]
    if body:
        out += _details(present.STAGE_TITLE, body)

    rows = [row for m in ok for row in spec_table(present.RETRACE_COLUMNS, m["retraces"], m["name"])[1]]
    if rows:
        out += _details("Retraces (tf.function traces per function)", table(
            ["mode"] + [c.label for c in present.RETRACE_COLUMNS], rows,
            _align(present.RETRACE_COLUMNS, mode=True), cap, "functions"))

    body = []
    for m in ok:
        if not m["hotspots"]:
            continue
        header, rows = spec_table(present.HOTSPOT_COLUMNS, m["hotspots"])
        body += [f"**{code(m['name'], table=False)}**", ""]
        body += table(header, rows, _align(present.HOTSPOT_COLUMNS), cap, "functions") + [""]
    if body:
        out += _details("Python hotspots", body)

    rows = [row for m in ok for row in spec_table(present.OTHER_COLUMNS, m["other"], m["name"])[1]]
    if rows:
        out += _details("Events no rule places (category “other”)",
                        table(["mode"] + [c.label for c in present.OTHER_COLUMNS], rows,
                              _align(present.OTHER_COLUMNS, mode=True), cap, "events"))

    names, layers = present.layer_matrix(ok)
    if layers:
        out += _details(present.LAYERS_TITLE, table(
            ["layer"] + [code(n, table=False) for n in names],
            [[code(lay)] + [present.ms(v) for v in vals] for lay, vals in layers],
            "l" + "r" * len(names), cap, "layers"))

    rows = [row for m in ok if present.memory_recorded(m.get("memory"))
            for row in spec_table(present.MEMORY_COLUMNS, [m["memory"]], m["name"])[1]]
    if rows:
        out += _details(present.MEMORY_TITLE, table(
            ["mode"] + [c.label for c in present.MEMORY_COLUMNS], rows,
            _align(present.MEMORY_COLUMNS, mode=True), cap, "modes"))

    notes = [f"- {code(m['name'], table=False)}: {text(n)}" for m in modes for n in m.get("notes", [])]
    steps = [f"- {code(m['name'], table=False)}: {text(m['step_rule'])}" for m in ok if m.get("step_rule")]
    if notes or steps:
        out += _details("Notes and how steps were found", notes + steps)
    return out


def device_section(ok: Sequence[ModeEntry], cap: int | None) -> list[str]:
    """GPU traces: per device (the slowest sets the step) and the top kernels with their TF ops."""
    body: list[str] = []
    for m in ok:
        if not m.get("devices"):
            continue
        rows = [[code(d.get("host")), code(d.get("device")), count(d.get("steps")),
                 num(d.get("wall_ms")), num(d.get("compute_ms")), num(d.get("h2d_ms")),
                 num(d.get("d2h_ms")), num(d.get("d2d_ms")), num(d.get("idle_ms")),
                 num(d.get("launch_ms")), num(d.get("span_ms")),
                 num(d.get("after_host_ms")), "slowest" if d.get("slowest") else ""]
                for d in m["devices"]]
        body += [f"**{code(m['name'], table=False)}**: median ms per steady step and device", ""]
        body += table(["host", "device", "steps", "step", "kernels", "H2D", "D2H", "D2D", "idle",
                       "host launch", "device span", "after host", ""], rows, "llrrrrrrrrrrl",
                      cap, "devices") + [""]
        if m.get("kernels"):
            rows = [[code(k.get("op")), code(k.get("op_type")), code(k.get("kernel")),
                     count(k.get("calls")), num(k.get("device_ms")), num(k.get("ms_per_step")),
                     pct(k.get("share"), signed=False)] for k in m["kernels"]]
            body += table(["TF op", "type", "kernel", "calls", "device ms", "ms/step", "share"],
                          rows, "lllrrrr", cap, "kernels") + [""]
    return _details("Device side (kernels, copies, idle; per device)", body) if body else []


def _cut_to_limit(lines: list[str], limit: int) -> str:
    """Last resort: drop whole lines from the end (never mid-row) and say so."""
    note = "\n\n_Report cut to fit GitHub's 65,536-character limit; the JSON report has it all._\n"
    out, size = [], len(note)
    for line in lines:
        if size + len(line) + 1 > limit:
            break
        out.append(line)
        size += len(line) + 1
    while out and out[-1].startswith("|"):   # do not leave a table without its end or a half table
        out.pop()
    return "\n".join(out) + note


def render_document(document: ReportDocument, limit: int = GITHUB_LIMIT,
                    figures: Sequence[tuple[str, str]] = ()) -> str:
    """``figures``: (alt text, relative path) of SVG pictures written beside the report."""
    doc = document.data
    run, modes = doc["run"], doc["modes"]
    head = [f"# traceinsight report: {text(run['name'])}", "", f"**{text(doc['summary'])}**", ""]
    wl = run.get("workload") or {}
    if wl.get("path") or wl.get("name"):
        head += [f"Workload {code(wl.get('path') or wl.get('name'), table=False)}"
                 + (f" ({text(wl['kind'])})" if wl.get("kind") else "")
                 + f" · {text(doc['generator'])}", ""]
    # the modes and where their time goes first, the environment with the command at the end:
    # the same order as the HTML report (and the notebook, which shows it, opens on the modes)
    head += ["## Modes", "", timing_note(modes) + " " + RATIO_METHOD, ""]
    head += table(["mode", "median ms/step", "95 % CI", "ratio to fastest", "vs fastest",
                   "first step ms", "profiler distortion", "steps"], mode_rows(modes), "lrlllrrr")
    cats = category_rows(modes)
    if cats:
        head += ["", "## Where the time goes", "", CATEGORY_MEANS_NOTE + ".", ""]
        head += table(["mode", *CATEGORIES, STEP_COLUMN], cats, "l" + "r" * (len(CATEGORIES) + 1))
        for note in (distortion_note(modes), correction_note(modes)):
            if note:
                head += ["", note]
        spikes = concentrated_note(modes)
        if spikes:
            head += ["", spikes]
        head += ["", CATEGORY_MEDIANS_NOTE, ""]
        head += table(["mode", *CATEGORIES], median_rows(modes), "l" + "r" * len(CATEGORIES))
    head += figure_lines(modes, figures)
    found = (["", "## Findings", ""] + finding_lines(doc["findings"]) + verify_lines(doc.get("verify"))
             + factor_lines(doc.get("factors")))
    tail = [""]
    env = environment_rows(doc.get("environment") or {})
    if env:
        tail += ["## Environment", ""] + table(["", ""], env) + [""]
    if run.get("command"):
        tail += ["## Reproduce", "", fence(run["command"] or "", "sh"), ""]
    sessions = doc.get("host_sessions") or []
    for cap in ROW_CAPS:
        lines = (head + host_sections(sessions, document.host_categories, cap) + found
                 + detail_sections(modes, cap) + tail)
        out = "\n".join(lines)
        if len(out) <= limit:
            return out
    return _cut_to_limit(head + host_sections(sessions, document.host_categories, 0) + found + tail,
                         limit)


def verify_lines(v: dict | None) -> list[str]:
    """``capture --verify``: each finding's claimed saving against the fix applied."""
    from traceinsight.report import verify_text as vt
    if not v:
        return []

    def name(n: Any) -> str:
        return code(n, table=False)

    return (["", "## Claimed against measured (capture --verify)", ""]
            + table(vt.HEADER, vt.rows(v, code, text), "lllrrr") + [""]
            + [f"* {line}" for line in vt.notes(v, name, text)])


def factor_lines(factors: dict | None) -> list[str]:
    """The factor table (``report/factor_text.py``), after the findings; none without a pair."""
    from traceinsight.report import factor_text as ft
    if not factors or not ft.has_table(factors):
        return []

    def name(n: Any) -> str:
        return code(n, table=False)

    out = ["", "## Factors: what separates the modes", "", ft.INTRO, ""]
    out += table(ft.EFFECT_HEADER, ft.effect_rows(factors, code, text), "lllll")
    for title, lines in (("Gaps split into factors", ft.gap_sentences(factors, name, text)),
                         ("Interactions", ft.interaction_sentences(factors, name, text)),
                         ("No pair in this run", ft.absent_sentences(factors, name, text))):
        if lines:
            out += ["", f"**{title}**", ""] + [f"* {line}" for line in lines]
    return out


def figure_lines(modes: Sequence[ModeEntry], figures: Sequence[tuple[str, str]]) -> list[str]:
    """The category bars as a Mermaid chart (GitHub draws it where the report is pasted), then
    image links to the SVG files beside the report when it was written to a file (``report.svg``);
    the tables stay."""
    from urllib.parse import quote

    from traceinsight.report.svg import mermaid_bars
    out = mermaid_bars(modes)
    out = ([""] + out) if out else []
    if figures:
        out += ["", "Pictures (SVG files beside this report):", ""] + [
            f"![{text(alt, MAX_CELL)}]({quote(rel)})" for alt, rel in figures]
    return out


def host_sections(sessions: Sequence[HostSession], categories: Sequence[list[dict]],
                  cap: int | None) -> list[str]:
    """Multi-host profile sessions: the hosts side by side, the straggler and the spread, each
    host's category split (``categories``: each session's rows), and the steps matched by
    step_num (``cap`` rows, in a details block)."""
    if not sessions:
        return []
    out = ["", "## Hosts", "",
           "Each profile session with several hosts (a multi-worker job): median ms per steady "
           "step of each host, its ratio to the fastest host with a 95 % bootstrap interval; "
           "where steps line up, in how many steps each host was the slowest and its median wait "
           "for each step's slowest host. The hosts' clocks are not synchronised: steps are "
           "matched by step_num, never by time."]
    for g, split in zip(sessions, categories):
        cols = present.host_columns(g["aligned"])
        out += ["", f"### Profile session {code(g['session'], table=False)}", ""]
        out += [f"- {text(line)}" for line in g["sentences"]] + [""]
        header, rows = spec_table(cols, g["hosts"])
        out += table(header, rows, _align(cols))
        if g["category_names"]:
            cols = present.host_category_columns(g["category_names"])
            where = ("the device time of each host's slowest device"
                     if g["category_kind"] == "device" else "median ms per steady step")
            header, rows = spec_table(cols, split)
            out += ["", f"Category split per host ({where}):", ""] + table(header, rows, _align(cols))
        if g["steps"]:
            header, rows = spec_table(present.HOST_STEP_COLUMNS, g["steps"])
            out += [""] + _details(f"Steps matched by step_num ({len(rows)})", table(
                header, rows, _align(present.HOST_STEP_COLUMNS), cap, "steps"))[:-1]
    return out


def write(document: ReportDocument, options: ReportOptions = REPORT_DEFAULTS) -> str:
    return render_document(document)


# ---------------------------------------------------------------------------------------------- diff

def render_diff(diff: dict, options: RenderOptions = DEFAULTS,
                limit: int = GITHUB_LIMIT) -> str:
    head = [f"# traceinsight diff: {text(diff['a']['name'])} → {text(diff['b']['name'])}", "",
            f"**{text(diff['summary'])}**", ""]
    if diff["environment_changes"]:
        head += ["## Environment changes", ""] + table(
            ["", text(diff["a"]["name"]), text(diff["b"]["name"])],
            [[text(c["key"]), _env_value(c["a"]), _env_value(c["b"])]
             for c in diff["environment_changes"]]) + [""]
    head += ["## Modes", "", "Delta = B − A in ms/step (positive: B is slower); significant when "
             "the 95 % bootstrap interval excludes no change.", ""]
    head += table(["A", "B", "A ms/step", "B ms/step", "delta", "ratio B/A", "significant"],
                  [[code(p["a"]), code(p["b"]), num(p["a_ms"]), num(p["b_ms"]),
                    _signed(p["delta_ms"]),
                    present.ratio_ci(p.get("ratio"), p.get("ratio_lo"), p.get("ratio_hi"), p.get("ratio_note")),
                    "yes" if p["significant"] else "no"] for p in diff["pairs"]], "llrrrll")
    for side in ("only_in_a", "only_in_b"):
        if diff[side]:
            head += ["", f"Only in {'A' if side == 'only_in_a' else 'B'}: "
                     + ", ".join(code(n, table=False) for n in diff[side])]
    for cap in ROW_CAPS:
        lines = list(head)
        for p in diff["pairs"]:
            lines += ["", f"## {code(p['a'], table=False)} → {code(p['b'], table=False)}", "",
                      text(p["sentence"]), ""]
            lines += table(["category", "A ms/step", "B ms/step", "delta", "95 % CI of delta",
                            "significant"],
                           [[text(c["category"]), num(c["a_ms"]), num(c["b_ms"]), _signed(c["delta_ms"]),
                             f"{num(c['delta_lo'])} … {num(c['delta_hi'])}"
                             if c.get("delta_lo") is not None else "–",
                             {True: "yes", False: "no", None: "–"}[c.get("significant")]]
                            for c in p["categories"]], "lrrrll")
            body = []
            for kind in ("slower", "faster", "added", "removed"):
                ops = p["ops"][kind]
                if ops:
                    body += ["", f"**{kind}** ({len(ops)})", ""]
                    body += table(["op", "type", "thread", "A ms/step", "B ms/step", "delta"],
                                  [[code(o["op"]), code(o["type"]), text(o["thread"]),
                                    num(o["a_ms"]), num(o["b_ms"]), _signed(o["delta_ms"])]
                                   for o in ops], "lllrrr", cap, "ops")
            if body:
                lines += [""] + _details(f"Op diff ({p['ops']['same_count']} ops unchanged)", body)
            if p["retraces"]:
                lines += [""] + _details("Retrace diff", table(
                    ["function", "A traced", "B traced", "A tracing ms", "B tracing ms",
                     "A compile ms", "B compile ms"],
                    [[code(r["function"]), _int(r["a_traced"]), _int(r["b_traced"]),
                      num(r["a_tracing_ms"]), num(r["b_tracing_ms"]), num(r["a_compile_ms"]),
                      num(r["b_compile_ms"])] for r in p["retraces"]], "lrrrrrr", cap, "functions"))
        out = "\n".join(lines) + "\n"
        if len(out) <= limit:
            return out
    return _cut_to_limit(head, limit)


_signed = present.signed_ms
_int = present.integer
