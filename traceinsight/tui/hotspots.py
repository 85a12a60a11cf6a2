"""Python hotspots grouped by whose code it is (user / keras / tensorflow / other); a group expands
to its functions, loaded when it is first expanded."""

from __future__ import annotations

import pandas as pd
from rich.text import Text
from textual.widgets import Tree

from traceinsight import present as fmt

GROUPS = {"user": "your code", "keras": "keras", "tensorflow": "tensorflow",
          "traceinsight": "traceinsight", "other": "other"}
MAX_CHILDREN = 500


class HotspotTree(Tree):
    def __init__(self, hotspots: pd.DataFrame, **kwargs) -> None:
        super().__init__(Text("Python self ms/step (incl. python: callees' Python too, not their ops)"), **kwargs)
        self.hotspots = hotspots
        self.show_root = True
        self.guide_depth = 3

    def on_mount(self) -> None:
        self.root.expand()
        groups = (self.hotspots.groupby("group")["self_ms"].sum()
                  .sort_values(ascending=False, kind="stable"))   # ties in group name order
        order = [g for g in groups.index if g in GROUPS] + [g for g in groups.index if g not in GROUPS]
        total = float(groups.sum()) or 1.0
        for g in order:
            label = Text.assemble((f"{fmt.ms(groups[g]):>7} ", "bold"),
                                  (f"{GROUPS.get(g, g):<11}", "bold"),
                                  (f" {fmt.percent(groups[g] / total):>4} of Python self time", "dim"))
            node = self.root.add(label, data=g, allow_expand=True)
            if g == order[0]:
                node.expand()     # the largest group open: its functions show without a keypress

    def on_tree_node_expanded(self, event: Tree.NodeExpanded) -> None:
        node = event.node
        if node is self.root or node.children or not isinstance(node.data, str):
            return
        rows = self.hotspots[self.hotspots["group"] == node.data].sort_values(
            ["self_ms", "function"], ascending=[False, True], kind="stable")
        for r in rows.head(MAX_CHILDREN).itertuples():
            where = fmt.safe(fmt.where(r.file, r.line)) if r.file else ""
            node.add_leaf(Text.assemble(
                (f"{fmt.ms(r.self_ms):>7} ", "bold"), f"{fmt.safe(r.function)}  ",
                (f"{where}  incl. python {fmt.ms(r.inclusive_ms)} · {fmt.count(r.calls_per_step)} calls/step",
                 "dim")))
        if len(rows) > MAX_CHILDREN:
            node.add_leaf(Text(f"… {len(rows) - MAX_CHILDREN:,} more (smaller) functions", style="italic"))
