"""The project's own error types and the exit codes they map to.

Every front door (CLI, SDK, TUI, fleet) catches `NpaError` and shows its message; anything
else escaping is a bug in this project, not a user mistake.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130


class NpaError(Exception):
    """Base class: a problem we can explain to the user."""

    exit_code: int = EXIT_FAILED

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def render(self) -> str:
        """The text shown to a user: the message, then what to do next."""
        if self.hint:
            return f"{self.message}\n  hint: {self.hint}"
        return self.message

    def to_dict(self) -> dict[str, object]:
        return {"error": type(self).__name__, "message": self.message, "hint": self.hint}


class UsageError(NpaError):
    """Bad input that is not a spec problem: wrong flags, a missing file, missing identity."""

    exit_code = EXIT_BAD_INPUT


class OperationError(NpaError):
    """An operation ran and failed: Terraform error, unhealthy cluster, incomplete teardown."""

    exit_code = EXIT_FAILED


class Interrupted(NpaError):
    """The user interrupted an operation (Ctrl-C, cancel)."""

    exit_code = EXIT_INTERRUPTED
