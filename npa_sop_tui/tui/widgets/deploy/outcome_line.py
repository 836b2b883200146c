"""The line under a deploy that says how its plan or apply ended, and what to press next."""

from __future__ import annotations

from textual.widgets import Static

from npa_sop_tui.tui.backend import OperationOutcome
from npa_sop_tui.tui.safety import markup


class OutcomeLine(Static):
    """Empty while the plan or apply runs; then its ending (the failure's own words shown
    as text, never as markup) and the keys that go on from there."""

    def show_ending(self, outcome: OperationOutcome, step: str) -> None:
        if step == "plan":
            self.update(markup("Press [b]r[/b] to plan again, [b]l[/b] for the whole log."))
        elif outcome.result == "ok":
            self.update("[green]Deployed.[/] Opening the status dashboard…")
        elif outcome.result == "interrupted":
            self.update(
                "[yellow]Interrupted.[/] Terraform stopped and saved its state; deploy again "
                "to converge, or destroy to remove what was created."
            )
        else:
            self.update(
                markup(
                    "[red]Deploy failed:[/] $why  ([b]r[/b] plan again, [b]l[/b] log)",
                    why=outcome.message,
                )
            )

    def clear(self) -> None:
        self.update("")
