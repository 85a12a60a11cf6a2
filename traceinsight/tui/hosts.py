"""The hosts screen (``h``, for runs whose profile sessions hold several hosts): per session the
hosts side by side, the straggler and the spread, each host's category split, and the steps
matched by step_num. The figures are ``Run.host_groups()``; the tables are the ones ``traceinsight
analyze`` prints (``traceinsight.report.hosts_terminal``)."""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Group
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Static

from traceinsight import present as fmt
from traceinsight.model import Run

STEP_ROWS = 50   # aligned steps shown per session (the report's JSON has them all)


def has_hosts(run: Run) -> bool:
    """Whether some profile session of the run holds two or more hosts: the hosts' comparison,
    one of the run's figures, has a group."""
    return bool(run.host_groups())


class HostsScreen(Screen):
    """Hosts per profile session. The comparison (bootstrap intervals of every host) is one of the
    run's figures, computed when the run was loaded (``Run.host_groups()``); a worker thread builds
    its tables and posts them as ``HostsReady``; ``pending`` is False once they are shown."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back")]

    @dataclass
    class HostsReady(Message):
        body: list                      # rich renderables, one Static each

    def __init__(self, run: Run) -> None:
        super().__init__()
        self.run = run
        self.pending = True

    def compose(self) -> ComposeResult:
        yield Static(Text(f"Hosts of {fmt.safe(self.run.name)}: each profile session with several "
                          "hosts (steps matched by step_num: the hosts' clocks are not "
                          "synchronised)", style="bold"), id="hosts-title")
        with VerticalScroll(id="hosts-body"):
            yield Static(Text("Comparing the hosts …", style="italic"), classes="missing")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#hosts-body", VerticalScroll).focus()
        self.run_worker(self._compare, thread=True, group="hosts", exit_on_error=False)

    def _compare(self) -> None:
        """Runs in a worker thread: the run's host comparison as tables (nothing computed)."""
        try:
            groups = self.run.host_groups()
            from traceinsight.report.hosts_terminal import renderables
            body: list = [Group(*renderables(g, STEP_ROWS)) for g in groups]
            if not body:
                body = [Text("No profile session of this run has two hosts with steady steps.",
                             style="italic")]
        except Exception as e:  # noqa: BLE001 - say so on the screen rather than fail silently
            body = [Text(f"Could not compare the hosts: {type(e).__name__}: {fmt.safe(e)}",
                         style="bold red")]
        self.post_message(self.HostsReady(body))

    def on_hosts_screen_hosts_ready(self, message: HostsReady) -> None:
        scroll = self.query_one("#hosts-body", VerticalScroll)
        scroll.remove_children()
        scroll.mount_all([Static(r, classes="host-session") for r in message.body])
        self.pending = False
