"""The plan screen's price line: the spec's hourly and daily price from the billing
calculator, as the wizard's review step shows it, fetched in a thread so the plan never
waits for it (the cloud SDK's first import alone takes a second)."""

from __future__ import annotations

import asyncio
from typing import Any

from textual import work
from textual.widgets import Static
from textual.worker import get_current_worker

ASKING = "Hourly price: asking the billing calculator…"
# one line at 80 columns (76 inside the paddings): the resource table below needs the rows
NO_CLOUD = "Hourly price: unavailable (no tenant/project/subnet in ~/.npa/config.yaml)"


class PlanPrice(Static):
    """`Hourly price ≈ $X ($Y per day): …`, or why the price is unavailable."""

    DEFAULT_CSS = "PlanPrice { height: auto; padding: 0 1; color: $text-muted; }"

    def __init__(self, spec: Any, *, id: str | None = None) -> None:
        super().__init__(ASKING, id=id, markup=False)
        self.spec = spec

    def on_mount(self) -> None:
        self._fetch()

    @work(thread=True, exclusive=True, group="plan-price", exit_on_error=False)
    def _fetch(self) -> None:
        backend = self.app.backend  # type: ignore[attr-defined]
        try:
            text = asyncio.run(backend.price_estimate(self.spec))
        except Exception as exc:  # a price is a hint: its failure must not end the deploy
            text = f"Hourly price: unavailable ({getattr(exc, 'message', None) or exc})"
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self.update, text or NO_CLOUD)
