"""Findings: what to change, ranked by the saving ``traceinsight.findings.find(run)`` estimates."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from traceinsight import present as fmt
from traceinsight.finding import Finding
from traceinsight.model import Run

SEVERITY_STYLE = {"high": "bold #e15759", "medium": "bold #f28e2b", "low": "#4e79a7", "info": "dim"}


def load_findings(run: Run) -> tuple[list[Finding], str | None]:
    """The run's findings (``Run.findings``, one of its figures), or why there are none to show (a rule
    failing on an unusual run: the viewer keeps working)."""
    try:
        found = list(run.findings)
    except Exception as e:  # noqa: BLE001 - show the rule engine's failure instead of crashing
        return [], f"The findings engine failed on this run: {type(e).__name__}: {fmt.safe(e)}"
    error = run.figures.findings_error if run.figures is not None else None
    return found, (f"The findings engine failed on this run: {fmt.safe(error)}" if error else None)


def factor_split(run: Run, f: Finding) -> str:
    """The factor table's split of the gap between the finding's two modes (``run.factors``),
    as the reports word it; "" when the table has no such gap."""
    from traceinsight.factors import gap_of
    from traceinsight.report import factor_text
    table = run.figures.factors if run.figures is not None else None
    g = gap_of(table, *f.modes[:2]) if table is not None and len(f.modes) >= 2 else None
    if g is None or table is None:
        return ""
    doc = table.to_dict()
    doc["gaps"] = [g.to_dict()]
    return "\n".join(factor_text.gap_sentences(doc, fmt.safe, lambda s: fmt.safe(s, None)))


def finding_detail(f: Finding, run: Run | None = None) -> Text:
    text = Text()
    text.append(fmt.safe(f.title, None), style="bold")
    if fmt.is_num(f.saving_ms):
        text.append(f"\nsaving ≈ {fmt.ms(f.saving_ms)} ms/step", style="bold")
        if f.saving_basis:
            text.append(f" ({fmt.safe(f.saving_basis, None)})")
    if f.modes:
        text.append(f"\nmodes: {', '.join(fmt.safe(m) for m in f.modes)}", style="dim")
    if f.evidence:
        text.append("\n\nEvidence\n", style="bold").append(fmt.safe(f.evidence, None))
    split = factor_split(run, f) if run is not None else ""
    if split:
        text.append("\n\nFactors\n", style="bold").append(split)
    if f.fix:
        text.append("\n\nWhat to change\n", style="bold").append(
            fmt.safe(f.fix, None, newlines=True), style="#59a14f")
    return text


class FindingsScreen(Screen):
    BINDINGS = [Binding("escape", "app.pop_screen", "Back")]

    def __init__(self, run: Run, findings: tuple[list[Finding], str | None] | None = None) -> None:
        super().__init__()
        self.run = run
        self.findings, self.problem = findings if findings is not None else load_findings(run)

    def compose(self) -> ComposeResult:
        yield Static(Text(f"Findings for {fmt.safe(self.run.name)}, largest saving first", style="bold"),
                     id="findings-title")
        if self.problem or not self.findings:
            yield Static(self.problem or "No rule fired on this run.", classes="missing")
        else:
            yield DataTable(cursor_type="row", zebra_stripes=True, id="findings")
            with VerticalScroll(id="finding-detail-scroll"):
                yield Static(id="finding-detail")
        yield Footer()

    def on_mount(self) -> None:
        if not self.findings:
            return
        table = self.query_one("#findings", DataTable)
        table.add_columns("#", "severity", Text("saving", justify="right"), "finding")
        for i, f in enumerate(self.findings):
            saving = f.saving_ms
            table.add_row(str(f.rank or i + 1), Text(f.severity, style=SEVERITY_STYLE.get(f.severity, "")),
                          Text(f"{fmt.ms(saving)} ms" if fmt.is_num(saving) else "", justify="right"),
                          Text(fmt.safe(f.title, None)), key=str(i))
        table.focus()
        self.query_one("#finding-detail", Static).update(finding_detail(self.findings[0], self.run))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if 0 <= event.cursor_row < len(self.findings):
            self.query_one("#finding-detail", Static).update(finding_detail(self.findings[event.cursor_row], self.run))
