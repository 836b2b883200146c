"""The plan under review on the deploy screen: what it would do, what it costs, and the
buttons to go back or apply.

It shows a plan and the apply's progress through its summary line; the screen decides
(and asks, for a plan that deletes or replaces something) before anything is applied.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button

from npa_sop_tui.tui.widgets.deploy.plan_price import PlanPrice
from npa_sop_tui.tui.widgets.deploy.plan_summary import PlanSummaryLine


class PlanReview(Vertical):
    """Plan summary, price, and Back / Apply."""

    DEFAULT_CSS = "PlanReview { height: auto; }"

    def __init__(self, spec: Any, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.spec = spec
        self.plan: Any = None
        """The plan on show (a `PlanSummary`), None while planning."""

    def compose(self) -> ComposeResult:
        yield PlanSummaryLine(id="plan-summary")
        yield PlanPrice(self.spec, id="plan-price")
        with Horizontal(classes="buttons", id="plan-buttons"):
            yield Button("Back (esc)", id="leave")
            yield Button("Apply (a)", id="apply", variant="success", disabled=True)

    @property
    def ready(self) -> bool:
        """A plan with something to apply is on show."""
        return self.plan is not None and self.plan.total > 0

    def confirm_question(self) -> str | None:
        """The question to ask before applying, or None when the plan deletes nothing."""
        if self.plan is None or not self.plan.destructive:
            return None
        return (
            f"The plan DELETES or REPLACES resources of {self.spec.name}:\n"
            f"{', '.join(self.plan.destructive)}\n\nApply anyway?"
        )

    def show_plan(self, plan: Any, *, sandbox: bool) -> None:
        self.plan = plan
        self.query_one(PlanSummaryLine).show_plan(plan, self.spec.name, sandbox=sandbox)
        apply = self.query_one("#apply", Button)
        apply.disabled = plan.total == 0  # applying an empty plan would only look like progress
        if not apply.disabled:
            apply.focus()

    def show_plan_failed(self, why: str) -> None:
        self.query_one(PlanSummaryLine).show_plan_failed(why)

    def show_applying(self) -> None:
        self.query_one("#plan-buttons").display = False
        if self.plan is not None:
            self.query_one(PlanSummaryLine).show_applying(self.plan, self.spec.name)

    def show_applied(self, result: str) -> None:
        if self.plan is not None:
            self.query_one(PlanSummaryLine).show_applied(self.plan, self.spec.name, result)

    def restart(self) -> None:
        """Planning again: no plan, the buttons back, Apply off until the new plan."""
        self.plan = None
        self.query_one(PlanSummaryLine).update("Planning again…")
        self.query_one("#plan-buttons").display = True
        self.query_one("#apply", Button).disabled = True
