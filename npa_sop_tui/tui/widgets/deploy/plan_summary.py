"""The deploy screen's plan line: what the plan adds, changes and destroys (and which
resources it would delete or replace, in red), then how the apply is going and how it
ended. The counts are the plan's own, as `npa soperator plan` prints them."""

from __future__ import annotations

from typing import Any

from textual.widgets import Static

from npa_sop_tui.tui.safety import markup


class PlanSummaryLine(Static):
    """`Plan for c: 3 to add, 0 to change, 0 to destroy.` and what follows it."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("Planning…", id=id)

    def show_plan(self, plan: Any, name: str, *, sandbox: bool) -> None:
        text = (
            f"Plan for [b]$name[/b]: [green]{plan.add} to add[/], "
            f"[yellow]{plan.change} to change[/], [red]{plan.remove} to destroy[/].$pools"
        )
        pools = "".join(f"\n  {p.describe()}" for p in plan.pools)  # as `npa … plan` says
        if plan.destructive:
            text += "\n[b red]⚠ destructive:[/] these are deleted or replaced: $destructive"
            self.set_class(True, "-destructive")
        if sandbox:
            text += "\n[b reverse] SANDBOX [/] local Terraform on the stand-in recipe."
        text += (
            "\nNothing to apply: the cluster already matches the spec. Press esc to go back."
            if plan.total == 0
            else "\nPress [b]a[/b] to apply this plan."
        )
        self.update(markup(text, name=name, pools=pools, destructive=", ".join(plan.destructive)))

    def show_applying(self, plan: Any, name: str) -> None:
        self.update(
            markup(
                f"Applying to [b]$name[/b]: {plan.add} to add, "
                f"{plan.change} to change, {plan.remove} to destroy. "
                "Press [b]c[/b] to interrupt.",
                name=name,
            )
        )

    def show_applied(self, plan: Any, name: str, result: str) -> None:
        """The apply ended (`result`: ok, failed, interrupted): "Press c" no longer applies."""
        self.update(
            markup(
                f"Apply to [b]$name[/b] ({plan.add} to add, {plan.change} to change, "
                f"{plan.remove} to destroy): $result.",
                name=name,
                result=result,
            )
        )

    def show_plan_failed(self, why: str) -> None:
        self.update(markup("[red]Plan failed:[/] $why", why=why))
