"""What one Terraform command did, as the runner and the `-json` reader fill it in."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from npa_sop_tui.events import Diagnostic

LOG_TAIL = 200


@dataclass
class RunResult:
    """What one Terraform command did; bounded whatever the length of the run."""

    args: list[str]
    returncode: int
    duration: float
    interrupted: bool = False
    killed: bool = False
    change_summary: dict[str, Any] | None = None
    outputs: dict[str, Any] | None = None
    resources_started: int = 0
    resources_finished: int = 0
    failed: list[str] = field(default_factory=list)
    errors: list[Diagnostic] = field(default_factory=list)
    log_tail: deque[str] = field(default_factory=lambda: deque(maxlen=LOG_TAIL))
    errored_state: str | None = None  # where Terraform's emergency state dump was saved
    no_space: bool = False  # Terraform reported "no space left on device"

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.interrupted

    def error_text(self) -> str:
        if self.errors:
            return "; ".join(d.summary + (f": {d.detail}" if d.detail else "") for d in self.errors)
        block = first_error_block(self.log_tail)
        if block:
            return block
        return "\n".join(list(self.log_tail)[-5:]) or f"terraform exited with {self.returncode}"


def first_error_block(lines: Sequence[str] | deque[str]) -> str:
    """The whole first `Error: …` block of Terraform's plain output (up to the next block),
    so a failed `init` shows its cause rather than the tail of the last message."""
    out: list[str] = []
    for line in lines:
        text = line.strip("│ ").rstrip() if line.startswith("│") else line.rstrip()
        starts = text.lstrip("╷╵ ").startswith("Error:")
        if starts and out:
            break
        if (starts or out) and text.strip("╷╵ "):
            out.append(text.strip("╷╵"))
    return "\n".join(out)
