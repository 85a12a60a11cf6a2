"""The report document laid out once, for every writer: an ordered list of sections, each a title
and blocks (paragraphs, column tables, lists, code, pictures, collapsible details, a finding's card,
a mode's group of tables). Inline text is data, never markup: a plain value is text from a trace or
a run (each writer escapes it its own way), ``Code`` a name shown as code, ``Words`` our own words
or a formatted figure, ``Strong`` emphasis, ``Prose`` a sentence of ``prose`` / ``verify_text`` /
``factor_text`` that takes the writer's way of showing a name and a text.

Nothing here computes a figure: it picks what the document holds and says in which order and in
which block it goes. ``markdown.py`` and ``html.py`` write these blocks (``ARCHITECTURE.md``,
"An output format of the report")."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

from traceinsight import present
from traceinsight.report import factor_text as ft
from traceinsight.report import prose
from traceinsight.report import verify_text as vt
from traceinsight.report.document import FindingEntry, HostSession, ModeEntry, ReportDocument
from traceinsight.stats import RATIO_METHOD

Format = Callable[[Any], str]


# ------------------------------------------------------------------------------------------ inline

@dataclass(frozen=True)
class Code:
    """A name from a trace or a run shown as code."""
    value: Any


@dataclass(frozen=True)
class Words:
    """Our own words or a figure already formatted (``present``): nothing in it is markup."""
    value: str


@dataclass(frozen=True)
class Strong:
    parts: tuple[Any, ...]


@dataclass(frozen=True)
class Flag:
    """A word in a table cell that stands out where the format can mark it (a significant change)."""
    value: str


@dataclass(frozen=True)
class Prose:
    """A sentence written by a prose module with the writer's own ``name`` and ``text``
    (``write(name, text) -> str``). ``names``: how the sentence shows a mode's name where the
    format allows markup, as code or as text."""
    write: Callable[[Format, Format], str]
    names: str = "code"


# a paragraph, a cell or a title: a tuple of parts (a plain value, Code, Words, Strong, Prose)
Text = tuple[Any, ...]


@dataclass(frozen=True)
class ProseList:
    """Lines or table rows a prose module writes with the writer's ``name`` and ``text``:
    ``write(name, text)`` -> a list of strings (a list's items) or of rows of strings."""
    write: Callable[[Format, Format], list]


# ------------------------------------------------------------------------------------------ blocks

@dataclass(frozen=True)
class Para:
    """A paragraph; ``role``: "" (body text), "note" (a muted aside), "summary" (the lead)."""
    text: Text
    role: str = ""


@dataclass(frozen=True)
class Items:
    """A bulleted list (``marker``: the markdown bullet)."""
    items: Sequence[Text] | ProseList
    marker: str = "-"


@dataclass(frozen=True)
class Table:
    """A table: header cells and rows of cells (each a part: a value, Code, Words), ``align`` 'l'
    or 'r' per column; ``what`` names its rows when a writer may show only the first ones (None:
    always whole)."""
    header: Sequence[Any]
    rows: Sequence[Sequence[Any]] | ProseList
    align: str
    what: str | None = None


@dataclass(frozen=True)
class CodeBlock:
    text: str
    lang: str = ""


@dataclass(frozen=True)
class Picture:
    """A chart a writer draws where its format can: "bars" (the category bars as SVG),
    "mermaid" (the same as a Mermaid chart), "files" (links to SVG files written beside the
    report), "steps" (each mode's steps as SVG), "host_skew" (a profile session's hosts as SVG).
    ``data``: what it is drawn from (the modes, a host session)."""
    kind: str
    data: Any = None


@dataclass(frozen=True)
class Group:
    """Blocks under a small heading, ``name`` (stressed) then ``title``: one mode's tables
    (``mode``: its name, as code) or a titled part of a section."""
    title: Text
    blocks: Sequence[Any]
    mode: Any = None
    name: Text = ()


@dataclass(frozen=True)
class Details:
    """Collapsible blocks under a one-line summary."""
    summary: Text
    blocks: Sequence[Any]


@dataclass(frozen=True)
class Card:
    """One finding: its title, its blocks, its severity (``style``)."""
    title: Text
    blocks: Sequence[Any]
    style: str


@dataclass(frozen=True)
class Section:
    """A titled part of the report (``level`` 2, or 3 inside another). ``collapsed``: a section of
    ``Details`` blocks only, whose title a plain-text format may leave out; ``svg``: a section that
    is pictures, left out by a writer that draws none; ``droppable``: left out first when a page
    must be shorter (a paste's size limit)."""
    title: Text
    blocks: Sequence[Any] = field(default_factory=tuple)
    level: int = 2
    collapsed: bool = False
    svg: bool = False
    droppable: bool = False


@dataclass(frozen=True)
class Page:
    """A whole report or diff: its title, the lead paragraphs, the sections in order."""
    title: Text
    lead: Sequence[Para]
    sections: Sequence[Section]


# ----------------------------------------------------------------------------------------- tables

def align(cols: Sequence[present.ColumnSpec]) -> str:
    return "".join("r" if c.numeric else "l" for c in cols)


def cell(c: present.ColumnSpec, row: Mapping[str, Any]) -> Any:
    """A cell by its column spec: a formatted figure, plain text, or a name as code."""
    v = c.value(row)
    if c.format is not None:
        return Words(c.format(v))
    return v if c.text else Code(v)


class CellRows(Sequence[list[Any]]):
    """A column table's rows, each made from its record (``cell`` by column) when it is read: a
    writer that shows only a table's first rows formats only those. ``modes``: each record is
    (mode, row), the mode's name its first cell. Equal to any sequence of the same rows."""

    __slots__ = ("_cols", "_records", "_modes")

    def __init__(self, cols: Sequence[present.ColumnSpec], records: Sequence[Any],
                 modes: bool = False) -> None:
        self._cols, self._records, self._modes = cols, records, modes

    def _row(self, rec: Any) -> list[Any]:
        if self._modes:
            mode, r = rec
            return [Code(mode)] + [cell(c, r) for c in self._cols]
        return [cell(c, rec) for c in self._cols]

    def __len__(self) -> int:
        return len(self._records)

    @overload
    def __getitem__(self, i: int) -> list[Any]: ...

    @overload
    def __getitem__(self, i: slice) -> list[list[Any]]: ...

    def __getitem__(self, i: int | slice) -> list[Any] | list[list[Any]]:
        if isinstance(i, slice):
            return [self._row(r) for r in self._records[i]]
        return self._row(self._records[i])

    def __iter__(self) -> Iterator[list[Any]]:
        return (self._row(r) for r in self._records)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]   # as a list: rows are not hashed

    def __repr__(self) -> str:
        return repr(list(self))


def column_table(cols: Sequence[present.ColumnSpec], records: Sequence[Mapping[str, Any]],
                 what: str | None = None) -> Table:
    return Table([Words(c.label) for c in cols], CellRows(cols, records), align(cols), what)


def modes_column_table(cols: Sequence[present.ColumnSpec],
                       records: Sequence[tuple[Any, Mapping[str, Any]]], what: str) -> Table:
    """Rows of several modes in one table, the mode's name first: ``records`` (mode, row)."""
    return Table([Words("mode")] + [Words(c.label) for c in cols], CellRows(cols, records, True),
                 "l" + align(cols), what)


# ------------------------------------------------------------------------------------- the report

def _ok(modes: Sequence[ModeEntry]) -> list[ModeEntry]:
    return [m for m in modes if m["status"] == "ok"]


def report_page(document: ReportDocument) -> Page:
    doc = document.data
    run, modes = doc["run"], doc["modes"]
    lead = [Para((doc["summary"],), "summary")]
    wl = run.get("workload") or {}
    if wl.get("path") or wl.get("name"):
        lead.append(Para((Words("Workload "), Code(wl.get("path") or wl.get("name")))
                         + ((Words(" ("), wl["kind"], Words(")")) if wl.get("kind") else ())
                         + (Words(" · "), doc["generator"]), "note"))
    # the modes and where their time goes first, the environment with the command at the end
    # (the notebook, which shows the report, opens on the modes and the chart)
    sections = [modes_section(modes)]
    sections += time_section(modes)
    sections += steps_section(modes, document.step_marks)
    sections += host_sections(doc.get("host_sessions") or [], document.host_categories)
    sections.append(findings_section(doc["findings"]))
    sections += verify_section(doc.get("verify")) + factor_section(doc.get("factors"))
    sections.append(Section((Words("Details"),), detail_blocks(modes, doc.get("layer_matrix") or []),
                            collapsed=True, droppable=True))
    env = doc.get("environment") or {}
    if prose.env_items(env):
        sections.append(Section((Words("Environment"),), [Table(
            [Words(""), Words("")],
            ProseList(lambda name, text: prose.environment_rows(env, text, name)), "ll")]))
    if run.get("command"):
        sections.append(Section((Words("Reproduce"),), [CodeBlock(run["command"] or "", "sh")]))
    return Page((Words("traceinsight report: "), run["name"]), lead, sections)


def modes_section(modes: Sequence[ModeEntry]) -> Section:
    return Section((Words("Modes"),), [
        Para((Prose(lambda name, text: prose.timing_note(modes, name)), Words(" " + RATIO_METHOD)),
             "note"),
        column_table(prose.MODE_COLUMNS, modes)])


def time_section(modes: Sequence[ModeEntry]) -> list[Section]:
    """Each mode's mean and median ms/step by category, the notes on how far to trust them and
    the category bars."""
    ok = _ok(modes)
    if not ok:
        return []
    notes = [Para((Prose(_modes_note(f, modes), "text"),), "note")
             for f in (prose.distortion_note, prose.correction_note, prose.concentrated_note)
             if f(modes, str)]
    return [Section((Words("Where the time goes"),), [
        Para((Words(prose.category_means_note(modes) + "."),), "note"), Picture("bars", modes),
        column_table(prose.CATEGORY_COLUMNS, ok), *notes,
        Para((Words(prose.CATEGORY_MEDIANS_NOTE),), "note"), column_table(prose.MEDIAN_COLUMNS, ok),
        Picture("mermaid", modes), Picture("files")])]


def _modes_note(note: Callable[[Sequence[ModeEntry], Format], str],
                modes: Sequence[ModeEntry]) -> Callable[[Format, Format], str]:
    return lambda name, text: note(modes, name)


def steps_section(modes: Sequence[ModeEntry], marks: Mapping[str, Any]) -> list[Section]:
    """Each mode's steps over the run (``report.svg``): ``Picture`` data (modes, their marks)."""
    from traceinsight.report.svg import MAX_STEP_CHARTS
    ok = _ok(modes)
    more = (f" The first {MAX_STEP_CHARTS} of {len(ok)} modes; the JSON report has every step."
            if len(ok) > MAX_STEP_CHARTS else "")
    return [Section((Words("Steps over the run"),), [
        Para((Words("Each host-traced step, split by category; the first step, stalls and "
                    f"retraces marked. Hover a bar for its figures.{more}"),), "note"),
        Picture("steps", (ok[:MAX_STEP_CHARTS], marks))], svg=True)]


def host_sections(sessions: Sequence[HostSession], categories: Sequence[list[dict]]) -> list[Section]:
    """Multi-host profile sessions: the hosts side by side, the straggler and the spread, each
    host's category split (``categories``: each session's rows), and the steps matched by
    step_num."""
    if not sessions:
        return []
    blocks: list[Any] = [Para((Words(prose.HOSTS_INTRO),), "note")]
    for g, split in zip(sessions, categories):
        body: list[Any] = [Items([(line,) for line in g["sentences"]]),
                           column_table(present.host_columns(g["aligned"]), g["hosts"])]
        if g["category_names"]:
            body += [Para((Words(prose.host_split_caption(g)),)),
                     column_table(present.host_category_columns(g["category_names"]), split)]
        if g["steps"]:
            body += [Picture("host_skew", g),
                     Details((Words(f"Steps matched by step_num ({len(g['steps'])})"),),
                             [column_table(present.HOST_STEP_COLUMNS, g["steps"], "steps")])]
        blocks.append(Section((Words("Profile session "), Code(g["session"])), body, level=3))
    return [Section((Words("Hosts"),), blocks)]


def finding_card(f: FindingEntry) -> Card:
    if f.get("saving_ms") is not None:
        saving: Text = (Strong((Words(f"Saves ≈ {present.ms(f['saving_ms'])} ms/step"),)),)
    else:
        saving = (Strong((Words("No saving estimate"),)),)
    head = saving + (Words(" ("), f["saving_basis"], Words(") · severity "), f["severity"],
                     Words(" · rule "), Code(f["rule"]), Words(" · modes "))
    for i, m in enumerate(f["modes"]):
        head += ((Words(", "),) if i else ()) + (Code(m),)
    return Card((Words(f"{present.integer(f['rank'])}. "), f["title"]),
                [Para(head), Para((f["evidence"],)), CodeBlock(f["fix"], "python")], f["severity"])


def findings_section(findings: Sequence[FindingEntry]) -> Section:
    if not findings:
        return Section((Words("Findings"),),
                       [Para((Words("No rule found anything to change in this run."),))])
    return Section((Words("Findings"),), [finding_card(f) for f in findings])


def verify_section(v: dict | None) -> list[Section]:
    """``capture --verify``: each finding's claimed saving against the fix applied."""
    if not v:
        return []
    return [Section((Words("Claimed against measured (capture --verify)"),), [
        Table([Words(h) for h in vt.HEADER], ProseList(lambda name, text: vt.rows(v, name, text)),
              "lllrrr"),
        Items(ProseList(lambda name, text: vt.notes(v, name, text)), "*")])]


def factor_section(factors: dict | None) -> list[Section]:
    """The factor table (``report/factor_text.py``), after the findings; none without a pair."""
    if not factors or not ft.has_table(factors):
        return []
    blocks: list[Any] = [
        Para((Words(ft.INTRO),), "note"),
        Table([Words(h) for h in ft.EFFECT_HEADER],
              ProseList(lambda name, text: ft.effect_rows(factors, name, text)), "lllll")]
    for title, write in (("Gaps split into factors", ft.gap_sentences),
                         ("Interactions", ft.interaction_sentences),
                         ("No pair in this run", ft.absent_sentences)):
        if write(factors, str, str):
            blocks.append(Group((), [Items(ProseList(_factor_lines(write, factors)), "*")],
                                name=(Words(title),)))
    return [Section((Words("Factors: what separates the modes"),), blocks)]


def _factor_lines(write: Callable[[dict, Format, Format], list[str]],
                  factors: dict) -> Callable[[Format, Format], list]:
    return lambda name, text: write(factors, name, text)


def _per_mode(title: str, tables: Sequence[tuple[Any, Any]], cols: Sequence[present.ColumnSpec],
              what: str, count: bool = False) -> list[Details]:
    """One group per mode with rows (``tables``: (mode, its rows)): the mode's name, its table."""
    groups = [Group((Words(f" ({len(rows)} {what})"),) if count else (),
                    [column_table(cols, rows, what)], mode)
              for mode, rows in tables if rows]
    return [Details((Words(title),), groups)] if groups else []


def _all_modes(title: str, ok: Sequence[ModeEntry], rows: list[tuple[Any, Mapping[str, Any]]],
               cols: Sequence[present.ColumnSpec], what: str) -> list[Details]:
    """Rows of every mode in one table, the mode's name first."""
    return [Details((Words(title),), [modes_column_table(cols, rows, what)])] if rows else []


def detail_blocks(modes: Sequence[ModeEntry],
                  layer_rows: Sequence[Mapping[str, Any]] = ()) -> list[Details]:
    """The collapsible tables after the findings: device side, ops, tf.data stages, retraces,
    Python hotspots, events no rule places, layers (``layer_rows``: the document's cross-mode
    layer view), memory, notes."""
    ok = _ok(modes)
    out = device_details(ok)
    out += _per_mode("Top ops per mode", [(m["name"], m["ops"]) for m in ok], present.OP_COLUMNS,
                     "ops", count=True)
    out += _per_mode(present.STAGE_TITLE, [(m["name"], m.get("tfdata_stages")) for m in ok],
                     present.STAGE_COLUMNS, "stages")
    out += _all_modes("Retraces (tf.function traces per function)", ok,
                      [(m["name"], r) for m in ok for r in m["retraces"]],
                      present.RETRACE_COLUMNS, "functions")
    out += _per_mode("Python hotspots", [(m["name"], m["hotspots"]) for m in ok],
                     present.HOTSPOT_COLUMNS, "functions")
    out += _all_modes("Events no rule places (category “other”)", ok,
                      [(m["name"], o) for m in ok for o in m["other"]],
                      present.OTHER_COLUMNS, "events")
    out += layer_details(layer_rows)
    out += _all_modes(present.MEMORY_TITLE, ok, [(m["name"], m["memory"]) for m in ok
                                                 if present.memory_recorded(m.get("memory"))],
                      present.MEMORY_COLUMNS, "modes")
    notes: list[Text] = [(Code(m["name"]), Words(": "), n) for m in modes for n in m.get("notes", [])]
    notes += [(Code(m["name"]), Words(": "), m["step_rule"]) for m in ok if m.get("step_rule")]
    if notes:
        out.append(Details((Words("Notes and how steps were found"),), [Items(notes)]))
    return out


def layer_details(rows: Sequence[Mapping[str, Any]]) -> list[Details]:
    """The cross-mode layer view: each layer's ms/step in every mode with a layers table, then
    its ratio in each mode to the mode it is compared with, with the ratio's interval."""
    names, pairs, layers = present.layer_matrix(rows)
    if not layers:
        return []
    head = [Words("layer")] + [Code(n) for n in names] + [Code(f"{a} ÷ {b}") for a, b in pairs]
    body = [[Code(lay)] + [Words(present.ms(v)) for v in vals] + [Words(r or "") for r in ratios]
            for lay, vals, ratios in layers]
    blocks: list[Any] = [Table(head, body, "l" + "r" * (len(names) + len(pairs)), "layers")]
    if pairs:
        blocks.append(Para((Words(present.LAYER_RATIO_NOTE),), "note"))
    return [Details((Words(present.LAYERS_TITLE),), blocks)]


def device_details(ok: Sequence[ModeEntry]) -> list[Details]:
    """GPU traces: per device (the slowest sets the step) and the top kernels with their TF ops."""
    groups = []
    for m in ok:
        if not m.get("devices"):
            continue
        tables = [column_table(prose.DEVICE_COLUMNS, m["devices"], "devices")]
        if m.get("kernels"):
            tables.append(column_table(prose.KERNEL_COLUMNS, m["kernels"], "kernels"))
        groups.append(Group((Words(": median ms per steady step and device"),), tables, m["name"]))
    return [Details((Words("Device side (kernels, copies, idle; per device)"),), groups)] if groups else []


# --------------------------------------------------------------------------------------- the diff

DIFF_MODES_NOTE = ("Delta = B − A in ms/step (positive: B is slower); significant when the 95 % "
                   "bootstrap interval excludes no change.")


def diff_page(diff: dict) -> Page:
    """Two runs side by side: what changed in the environment, each matched pair of modes, then
    one section per pair (its categories, the ops and the retraces that changed)."""
    a, b = diff["a"]["name"], diff["b"]["name"]
    sections = []
    changes = diff["environment_changes"]
    if changes:
        sections.append(Section((Words("Environment changes"),), [Table(
            [Words(""), a, b], ProseList(lambda name, text: [
                [text(c["key"]), prose.env_value(c["a"], text, name), prose.env_value(c["b"], text, name)]
                for c in changes]), "lll")]))
    modes: list[Any] = [Para((Words(DIFF_MODES_NOTE),), "note"), Table(
        [Words(h) for h in ("A", "B", "A ms/step", "B ms/step", "delta", "ratio B/A", "significant")],
        [[Code(p["a"]), Code(p["b"]), Words(present.ms(p["a_ms"])), Words(present.ms(p["b_ms"])),
          Words(present.signed_ms(p["delta_ms"])),
          Words(present.ratio_ci(p.get("ratio"), p.get("ratio_lo"), p.get("ratio_hi"), p.get("ratio_note"))),
          Flag("yes") if p["significant"] else Words("no")] for p in diff["pairs"]], "llrrrll")]
    for side, label in (("only_in_a", "A"), ("only_in_b", "B")):
        if diff[side]:
            names: Text = ()
            for i, n in enumerate(diff[side]):
                names += ((Words(", "),) if i else ()) + (Code(n),)
            modes.append(Para((Words(f"Only in {label}: "),) + names))
    sections.append(Section((Words("Modes"),), modes))
    sections += [pair_section(p) for p in diff["pairs"]]
    title: Text = (Words("traceinsight diff: "), a, Words(" → "), b)
    if diff.get("same_run"):   # two modes of one run
        title = (Words("traceinsight diff: "), a, Words(", two of its modes"))
    return Page(title, [Para((diff["summary"],), "summary")], sections)


def pair_section(p: dict) -> Section:
    blocks: list[Any] = [Para((p["sentence"],)), Table(
        [Words(h) for h in ("category", "A ms/step", "B ms/step", "delta", "95 % CI of delta",
                            "significant")],
        [[c["category"], Words(present.ms(c["a_ms"])), Words(present.ms(c["b_ms"])),
          Words(present.signed_ms(c["delta_ms"])),
          Words(f"{present.ms(c['delta_lo'])} … {present.ms(c['delta_hi'])}"
                if c.get("delta_lo") is not None else "–"),
          Words({True: "yes", False: "no", None: "–"}[c.get("significant")])]
         for c in p["categories"]], "lrrrll")]
    groups = [Group((Words(f" ({len(p['ops'][kind])})"),), [Table(
        [Words(h) for h in ("op", "type", "thread", "A ms/step", "B ms/step", "delta")],
        [[Code(o["op"]), Code(o["type"]), o["thread"], Words(present.ms(o["a_ms"])),
          Words(present.ms(o["b_ms"])), Words(present.signed_ms(o["delta_ms"]))] for o in p["ops"][kind]],
        "lllrrr", "ops")], name=(Words(kind),))
        for kind in ("slower", "faster", "added", "removed") if p["ops"][kind]]
    if groups:
        blocks.append(Details((Words(f"Op diff ({present.integer(p['ops']['same_count'])} ops unchanged)"),),
                              groups))
    if p["retraces"]:
        blocks.append(Details((Words("Retrace diff"),),
                              [column_table(present.RETRACE_DIFF_COLUMNS, p["retraces"], "functions")]))
    return Section((Code(p["a"]), Words(" → "), Code(p["b"])), blocks, droppable=True)
