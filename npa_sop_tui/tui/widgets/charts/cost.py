"""Cost so far per running cluster: a bar each, scaled to the costliest, with the sum it
stands for (hours × the hourly list price the last deploy's preflight quoted)."""

from __future__ import annotations

import time
from typing import Any

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from npa_sop_tui.cloud.report_text import money
from npa_sop_tui.tui.safety import Guarded

BAR = "■"


def cost_lines(costs: dict[str, Any], width: int, *, now: float) -> list[Text]:
    """One line per cluster (pure: tests and the widget call it)."""
    if not costs:
        return []
    totals = {name: cost.total(now) for name, cost in costs.items()}
    top = max(totals.values()) or 1
    name_w = min(20, max(len(n) for n in costs))
    lines = [Text("Cost so far (list prices, since the cluster came up)", style="bold")]
    for name, cost in sorted(costs.items(), key=lambda item: -totals[item[0]]):
        amount = money(str(totals[name]), cost.currency)
        detail = f"{amount} ({cost.duration_text(now)} × {cost.hourly_text()})"
        room = max(1, width - name_w - len(detail) - 3)
        length = max(1, round(room * float(totals[name] / top)))
        line = Text(name[:name_w].ljust(name_w) + " ")
        line.append(BAR * length, style="magenta")
        line.append(" " * (room - length) + " " + detail)
        line.truncate(width)
        lines.append(line)
    return lines


class CostChart(Guarded, Widget):
    """Shown on home when at least one cluster has a cost; redrawn each minute."""

    DEFAULT_CSS = """
    CostChart { height: auto; width: 1fr; }
    """

    costs: reactive[dict[str, Any]] = reactive(dict, layout=True)
    """Cluster name → history.cost.CostSoFar."""

    def on_mount(self) -> None:
        self.display = bool(self.costs)  # no room taken on a home without running clusters
        self.set_interval(60, self.refresh)

    def watch_costs(self) -> None:
        self.display = bool(self.costs)

    def render(self) -> Text:
        return Text("\n").join(cost_lines(self.costs, self.size.width or 80, now=time.time()))
