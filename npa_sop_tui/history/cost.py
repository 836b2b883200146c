"""Cost so far: the hourly price the last deploy's preflight quoted × the hours since the
cluster came up. An estimate (list prices, no discounts or reservations), said as such."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import TYPE_CHECKING

from npa_sop_tui.events import PreflightReported
from npa_sop_tui.history.oplog import read_events

if TYPE_CHECKING:
    from npa_sop_tui.state.store import StateStore


@dataclass(frozen=True)
class CostSoFar:
    hourly: Decimal
    currency: str
    since: float
    """When the cluster came up (the end of the deploy that made it)."""

    def hours(self, now: float) -> float:
        return max(0.0, now - self.since) / 3600.0

    def total(self, now: float) -> Decimal:
        return (self.hourly * Decimal(str(round(self.hours(now), 6)))).quantize(Decimal("0.01"))

    def short_text(self, now: float) -> str:
        """`12.30 USD so far · 4.10 USD/h`: the dashboard's one-line cost."""
        hourly = self.hourly.quantize(Decimal("0.01"))  # the quote keeps the price list's digits
        unit = self.currency.upper()
        return f"{self.total(now)} {unit} so far · {hourly} {unit}/h"


def quoted_hourly(log: Path) -> tuple[Decimal, str] | None:
    """(total hourly price, currency) of the last preflight in an operation log."""
    quote: tuple[Decimal, str] | None = None
    try:
        for event in read_events(log):
            if isinstance(event, PreflightReported):
                price = event.report.get("price") or {}
                try:
                    quote = (Decimal(str(price["total"])), str(price.get("currency", "")))
                except (KeyError, InvalidOperation, TypeError):
                    continue
    except OSError:
        return None
    return quote


def cost_so_far(name: str, *, store: StateStore | None = None) -> CostSoFar | None:
    """The running cost of cluster `name`, or None when it is not up or no price is known."""
    from npa_sop_tui.home import inventory

    entry = inventory.get(name, store=store)
    if entry is None or entry.state not in ("deployed", "ready"):
        return None
    # the cluster has run (and cost) since the first good deploy after its last destroy
    ops = entry.operations
    destroyed = [i for i, op in enumerate(ops) if op.kind == "destroy" and op.result == "ok"]
    since_destroy = ops[destroyed[-1] + 1 :] if destroyed else ops
    deploys = [op for op in since_destroy if op.kind == "deploy" and op.result == "ok"]
    if not deploys:
        return None
    up_since = deploys[0].ended or deploys[0].started
    # the price quoted by the deploy that last changed it; an earlier quote if it has none
    for op in reversed(deploys):
        if op.log_file:
            quote = quoted_hourly(op.log_file)
            if quote is not None:
                return CostSoFar(quote[0], quote[1], since=up_since)
    return None
