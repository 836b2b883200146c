"""The deploy screen's plan line: what the plan adds, changes and destroys (and which
resources it would delete or replace, in red), then how the apply is going and how it
ended. The counts are the plan's own, as `npa soperator plan` prints them."""

from __future__ import annotations

from typing import Any

from textual.content import Content
from textual.widgets import Static

from npa_sop_tui.tui.safety import markup, shown


class PlanSummaryLine(Static):
    """`Plan for c: 3 to add, 0 to change, 0 to destroy.` and what follows it."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("Planning…", id=id)

    def show_plan(self, plan: Any, name: str, *, sandbox: bool) -> None:
        lines = [
            markup(
                f"Plan for [b]$name[/b]: [green]{plan.add} to add[/], "
                f"[yellow]{plan.change} to change[/], [red]{plan.remove} to destroy[/].",
                name=name,
            )
        ]
        # one line per pool, as `npa … plan` says (a markup value is one line)
        lines += [markup("  $pool", pool=p.describe()) for p in plan.pools]
        if plan.destructive:
            lines.append(
                markup(
                    "[b red]⚠ destructive:[/] these are deleted or replaced: $destructive",
                    destructive=", ".join(plan.destructive),
                )
            )
            self.set_class(True, "-destructive")
        if sandbox:
            lines.append(markup("[b reverse] SANDBOX [/] local Terraform on the stand-in recipe."))
        lines.append(
            markup("Nothing to apply: the cluster already matches the spec. Press esc to go back.")
            if plan.total == 0
            else markup("Press [b]a[/b] to apply this plan.")
        )
        self.update(Content("\n").join(lines))

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
        # the error may be several lines (Terraform's), each shown safely
        self.update(
            Content.assemble(markup("[red]Plan failed:[/] "), shown(why, keep_newlines=True))
        )
