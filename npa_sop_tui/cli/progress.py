"""Live progress for `npa soperator plan|deploy|destroy` in text mode (rich), on stderr.

A terminal gets a live panel: the phase, a bar of resources done/planned, and the resources in
flight with their elapsed time. Anything else (a pipe, a CI log) gets one plain line per phase
and per finished or failed resource. Diagnostics are kept and printed in full at the end.
Every line is worded by `events.describe`; this module only chooses what to show and how.
What Terraform, the cloud or a cluster said goes in as `Text` of its `safe_text` (`_shown`):
never markup, no control reaching the terminal.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any

from rich.console import Console, Group
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from npa_sop_tui.events import (
    Diagnostic,
    Event,
    LogLine,
    OperationFinished,
    PhaseChanged,
    PlanSummary,
    RecipeResolved,
    ResourceFailed,
    ResourceFinished,
    ResourceStarted,
    describe,
    level_of,
)
from npa_sop_tui.safe_text import safe_text

MAX_IN_FLIGHT_SHOWN = 8


def _shown(text: str, style: str = "") -> Text:
    """Event text as Rich text: lines kept, every control shown (`safe_text`), no markup."""
    return Text(safe_text(text, keep_newlines=True), style=style)


MAX_DIAGNOSTICS_KEPT = 50


def _stderr_console() -> Console:
    console = Console(stderr=True)
    # Piped to a file or CI log, a line wrapped at 80 columns splits paths and commands that
    # people copy; there the reader's viewer wraps, not us.
    console.soft_wrap = not console.is_terminal
    return console


class TextProgress:
    """An event sink that draws progress; use as a context manager around the operation."""

    def __init__(self, console: Console | None = None, *, verbose: bool = False) -> None:
        self.console = console or _stderr_console()
        self.verbose = verbose
        self.live_mode = self.console.is_terminal
        self.phase_label = "starting"
        self.planned = 0
        self.done = 0
        self.failed = 0
        self.in_flight: dict[str, float] = {}
        self.diagnostics: deque[Diagnostic] = deque(maxlen=MAX_DIAGNOSTICS_KEPT)
        self.last_log = ""
        self._bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=self.console,
            auto_refresh=False,
        )
        self._task = self._bar.add_task("resources", total=None)
        self._live: Live | None = None

    def __enter__(self) -> TextProgress:
        if self.live_mode:
            self._live = Live(
                get_renderable=self._render,
                console=self.console,
                refresh_per_second=4,
                transient=True,
            )
            self._live.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._live is not None:
            self._live.__exit__(*exc)
            self._live = None
        self.print_diagnostics()

    def note(self, text: str) -> None:
        self.console.print(_shown(text, style="yellow"))

    # -- the event sink --------------------------------------------------------------------

    def __call__(self, event: Event) -> None:
        if isinstance(event, PhaseChanged):
            if event.phase == "done":
                return
            self.phase_label = event.label
            self.in_flight.clear()
            self._line(f"» {describe(event)}", style="bold cyan")
        elif isinstance(event, RecipeResolved):
            self._line(describe(event), style="dim")
        elif isinstance(event, PlanSummary):
            self.planned = event.total
            self.done = 0
            self._bar.update(self._task, total=max(event.total, 0), completed=0)
            self._line(_indent(describe(event)))
        elif isinstance(event, ResourceStarted):
            self.in_flight[event.addr] = time.monotonic()
        elif isinstance(event, ResourceFinished):
            self.in_flight.pop(event.addr, None)
            self.done += 1
            self._bar.update(self._task, completed=self.done)
            if not self.live_mode:
                self._line(f"  ✓ {describe(event)}")
        elif isinstance(event, ResourceFailed):
            self.in_flight.pop(event.addr, None)
            self.failed += 1
            self._line(f"  ✗ {describe(event)}", style="red")
        elif isinstance(event, Diagnostic):
            if event.severity != "info":
                self.diagnostics.append(event)
        elif isinstance(event, LogLine):
            self.last_log = event.text
            if self.verbose or event.stream == "npa":
                self._line(_indent(describe(event)), style="dim")
        elif isinstance(event, OperationFinished):
            self.in_flight.clear()
        elif event.kind in ("preflight", "repair", "gpu_check"):
            # cloud preflight, post-deploy repairs, GPU gate: one line each, as they happen
            style = {"error": "red", "warning": "yellow"}.get(level_of(event))
            self._line(_indent(describe(event)), style=style)
        if self._live is not None:
            self._live.refresh()

    # -- drawing ---------------------------------------------------------------------------

    def _line(self, text: str, style: str | None = None) -> None:
        self.console.print(_shown(text, style=style or ""), highlight=False)

    def _render(self) -> Group:
        parts: list[Any] = [Text(safe_text(self.phase_label), style="bold")]
        if self.planned:
            parts.append(self._bar.get_renderable())
        if self.in_flight:
            table = Table.grid(padding=(0, 2))
            now = time.monotonic()
            items = sorted(self.in_flight.items(), key=lambda kv: kv[1])
            for addr, started in items[:MAX_IN_FLIGHT_SHOWN]:
                table.add_row(Text("⟳ " + safe_text(addr), style="cyan"), f"{now - started:4.0f}s")
            if len(items) > MAX_IN_FLIGHT_SHOWN:
                table.add_row(Text(f"… {len(items) - MAX_IN_FLIGHT_SHOWN} more"), "")
            parts.append(table)
        elif self.last_log:
            parts.append(Text(safe_text(self.last_log, limit=200), style="dim"))
        return Group(*parts)

    def print_diagnostics(self) -> None:
        for diag in self.diagnostics:
            style = "red" if diag.severity == "error" else "yellow"
            head, _, detail = describe(diag).partition("\n")
            self.console.print(_shown(head, style=f"bold {style}"), highlight=False)
            if detail:
                self.console.print(_shown(detail), highlight=False)


def _indent(text: str) -> str:
    return "\n".join(f"  {line}" for line in text.splitlines())
