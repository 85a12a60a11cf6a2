"""The traceinsight viewer app. Built by ``get_app(run)`` from a loaded run (tests drive it with a
pilot), or by ``get_loading_app(load, what)`` for the ``view`` command, which loads in a worker thread
behind a loading screen."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable

from textual.app import App
from textual.binding import Binding

from traceinsight import present as fmt
from traceinsight.finding import Finding
from traceinsight.model import Run
from traceinsight.tui.help import HelpScreen
from traceinsight.tui.loading import LoadingScreen
from traceinsight.tui.overview import OverviewScreen

# The other screens (and pandas, which their tables use) are imported when first shown: the
# first frame needs only the loading screen and the overview.


def _showing(screen: object, module: str, name: str) -> bool:
    """``isinstance(screen, module.name)`` without importing the module (not imported: no)."""
    mod = sys.modules.get(module)
    return mod is not None and isinstance(screen, getattr(mod, name))

DARK, LIGHT = "textual-dark", "textual-light"


class TraceinsightApp(App):
    CSS_PATH = "app.tcss"
    TITLE = "traceinsight"
    BINDINGS = [
        Binding("c", "compare", "Compare"),
        Binding("f", "findings", "Findings"),
        Binding("h", "hosts", "Hosts"),     # only for runs with multi-host profile sessions
        Binding("q", "quit", "Quit"),
        Binding("question_mark", "help", "Help", key_display="?"),
        Binding("r", "report", "Report"),
        Binding("t", "toggle_theme", "Theme", show=False),
    ]

    def __init__(self, run: Run | None, *, load: Callable[[], Run] | None = None, what: str = "",
                 report_path: Path | None = None, theme: str | None = None) -> None:
        super().__init__()
        self.run_data = run
        self._load = load
        self._what = what
        self.load_error: BaseException | None = None   # re-raised by the view command after exit
        self.report_path = report_path
        self.last_report: Path | None = None
        self.multi_host = False             # some profile session of the run has several hosts
        self._summary_frame: tuple[Run, Any] | None = None    # (run, its summary DataFrame)
        if theme:
            self.theme = theme

    def on_mount(self) -> None:
        if self.run_data is not None:
            self.show_run(self.run_data)
            return
        self.push_screen(LoadingScreen(self._what))
        # Started after the loading screen is drawn: loading holds the GIL most of the time.
        self.call_after_refresh(self.run_worker, self._load_in_thread, thread=True, group="load",
                                exit_on_error=False)

    def _load_in_thread(self) -> None:
        assert self._load is not None, "an app without a run is given a loader"
        try:
            run = self._load()
        except BaseException as e:  # noqa: BLE001 - handed to the command, which reports it
            self.call_from_thread(self._load_failed, e)
            return
        self.call_from_thread(self.show_run, run)

    def _load_failed(self, error: BaseException) -> None:
        self.load_error = error
        self.exit(return_code=2)

    def show_run(self, run: Run) -> None:
        self.run_data = run
        from traceinsight.tui.hosts import has_hosts
        self.multi_host = has_hosts(run)
        self.sub_title = fmt.safe(run.name)
        if isinstance(self.screen, LoadingScreen):
            self.switch_screen(OverviewScreen(run))
        else:
            self.push_screen(OverviewScreen(run))

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        """Nothing but quit and help until the run is loaded; no key for the screen already shown
        (False also hides it from the footer)."""
        if self.run_data is None and action in {"report", "compare", "findings", "toggle_theme"}:
            return False
        findings = _showing(self.screen, "traceinsight.tui.findings", "FindingsScreen")
        if action == "compare" and (findings or _showing(self.screen, "traceinsight.tui.compare",
                                                          "CompareScreen")):
            return False
        if action == "findings" and findings:
            return False
        if action == "hosts" and (not self.multi_host or _showing(
                self.screen, "traceinsight.tui.hosts", "HostsScreen")):
            return False
        return True

    @property
    def loaded_run(self) -> Run:
        """The run, once loaded (``check_action`` disables what needs it until then)."""
        assert self.run_data is not None, "the run is not loaded yet"
        return self.run_data

    def summary(self):
        """The run's summary as the viewer reads it: a DataFrame built here, once per run, from
        ``Run.table("summary")`` (one of the run's figures); the overview's and the
        detail's cells are formatted from pandas' types of its mixed rows."""
        run = self.loaded_run
        kept = self._summary_frame
        if kept is None or kept[0] is not run:
            kept = self._summary_frame = (run, run.table("summary").to_pandas())
        return kept[1]

    def findings(self) -> tuple[list[Finding], str | None]:
        """The run's findings (one of its figures), or why there are none."""
        from traceinsight.tui.findings import load_findings
        return load_findings(self.loaded_run)

    # --- navigation --------------------------------------------------------------------------
    def show_mode(self, name: str) -> None:
        from traceinsight.tui.mode import ModeScreen
        try:
            summary = self.summary()
            rows = summary[summary["mode"] == name]
            row = rows.iloc[0] if len(rows) else None
        except Exception:  # noqa: BLE001 - the overview says why; the detail shows what it can
            row = None
        figures = self.loaded_run.figures
        self.push_screen(ModeScreen(self.loaded_run.modes[name], row,
                                    figures.op_ms_per_call.get(name) if figures is not None else None,
                                    figures.step_series.get(name) if figures is not None else None,
                                    figures.layer_matrix if figures is not None else None))

    def action_compare(self) -> None:
        from traceinsight.tui.compare import CompareScreen, default_pair
        if isinstance(self.screen, CompareScreen):
            return
        a, b = default_pair(self.loaded_run, getattr(self.screen, "selected_mode", None))
        self.push_screen(CompareScreen(self.loaded_run, a, b))

    def action_findings(self) -> None:
        from traceinsight.tui.findings import FindingsScreen
        if not isinstance(self.screen, FindingsScreen):
            self.push_screen(FindingsScreen(self.loaded_run, self.findings()))

    def action_hosts(self) -> None:
        from traceinsight.tui.hosts import HostsScreen
        if not isinstance(self.screen, HostsScreen):
            self.push_screen(HostsScreen(self.loaded_run))

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_toggle_theme(self) -> None:
        self.theme = LIGHT if self.theme != LIGHT else DARK

    def action_report(self) -> None:
        # Rendering the report and writing it: off the UI thread (the figures are the run's own).
        self.run_worker(self._write_report, thread=True, exclusive=True, group="report",
                        exit_on_error=False)

    def _write_report(self) -> None:
        from traceinsight.tui.report import write_report
        try:
            path = write_report(self.loaded_run, self.report_path)
        except Exception as e:  # noqa: BLE001 - a failed report must not take the viewer down
            self.call_from_thread(self.notify, f"report not written: {type(e).__name__}: {fmt.safe(e)}",
                                  severity="error", timeout=8)
            return
        self.call_from_thread(self._report_written, path)

    def _report_written(self, path: Path) -> None:
        self.last_report = path
        self.notify(f"report written: {fmt.safe(path)}", title="Report", timeout=8)
