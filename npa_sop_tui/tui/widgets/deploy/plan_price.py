"""The price line of the plan screen and the wizard's review step: the spec's hourly and
daily price from the billing calculator, fetched in a thread so neither waits for it (the
cloud SDK's first import alone takes a second)."""

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
    """`Hourly price ≈ $X ($Y per day): …`, or why the price is unavailable. A `quiet` one
    (the wizard's, priced again as the spec changes) stays hidden until a price comes, and
    says nothing without a cloud to ask."""

    DEFAULT_CSS = "PlanPrice { height: auto; padding: 0 1; color: $text-muted; }"

    def __init__(self, spec: Any, *, id: str | None = None, quiet: bool = False) -> None:
        super().__init__("" if quiet else ASKING, id=id, markup=False)
        self.spec = spec
        self.quiet = quiet
        self.display = not quiet

    def on_mount(self) -> None:
        if self.spec is not None:
            self._fetch()

    def estimate(self, spec: Any) -> None:
        """Price `spec` (a newer request replaces one still running)."""
        self.spec = spec
        self._fetch()

    @work(thread=True, exclusive=True, group="plan-price", exit_on_error=False)
    def _fetch(self) -> None:
        backend = self.app.backend  # type: ignore[attr-defined]
        try:
            text = asyncio.run(backend.price_estimate(self.spec))
        except Exception as exc:  # a price is a hint: its failure must not end the deploy
            text = f"Hourly price: unavailable ({getattr(exc, 'message', None) or exc})"
        if get_current_worker().is_cancelled or (text is None and self.quiet):
            return
        self.app.call_from_thread(self._show, text or NO_CLOUD)

    def _show(self, text: str) -> None:
        self.update(text)
        self.display = True
