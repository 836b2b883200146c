"""Errors in the app: one place turns a failed worker, a refused operation or a bug into an
error modal over the screen, whose state is kept.

A burst of unexpected errors (or one while the error modal itself is up) means the app cannot
recover: Textual's own handling then ends it, with a non-zero exit code.
"""

from __future__ import annotations

from typing import Any

from npa_sop_tui.tui.error_log import log_traceback

ERROR_BURST = 5
"""This many unexpected errors within ERROR_BURST_SECONDS end the app instead of opening modals."""
ERROR_BURST_SECONDS = 10.0


class ErrorReporting:
    """Mixed into the app (after `Guarded`, before `App`). The app's own handler of failed
    workers calls `show_error` (a mixin's `@on` handlers are not collected by Textual)."""

    unexpected_errors: list[BaseException]
    """Exceptions that escaped a handler and were shown in an error modal (tests read it)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.unexpected_errors = []
        self._error_times: list[float] = []

    def report_unexpected(self, error: BaseException, *, where: str = "") -> None:
        """An exception escaped a handler of ours: show it over the screen, keep the state.

        The traceback goes to NPA_HOME/logs/tui-errors.log. A burst of errors (or one while
        the error modal itself is up) means the app cannot recover: Textual's own handling
        ends it, with a non-zero exit code.
        """
        import time

        from npa_sop_tui.screens.modals import ErrorModal

        now = time.monotonic()
        self.unexpected_errors.append(error)
        self._error_times = [t for t in self._error_times if now - t < ERROR_BURST_SECONDS]
        self._error_times.append(now)
        log = log_traceback(error, where)
        burst = len(self._error_times) >= ERROR_BURST
        if burst or isinstance(self.screen, ErrorModal) or not self.is_running:
            self._handle_exception(error if isinstance(error, Exception) else RuntimeError(error))
            return
        where_text = f" in {where}" if where else ""
        self.push_screen(
            ErrorModal(
                f"Unexpected error{where_text}",
                f"{type(error).__name__}: {error}",
                "Nothing was lost: the screen behind this message keeps its state. This is a "
                f"bug in npa-sop; please report it with the traceback in {log}.",
            )
        )

    def show_error(self, error: BaseException | None, *, title: str = "Error") -> None:
        from npa_sop_tui.errors import NpaError
        from npa_sop_tui.screens.modals import ErrorModal

        if isinstance(error, NpaError):
            self.push_screen(ErrorModal(title, error.message, error.hint))
        else:
            text = f"{type(error).__name__}: {error}" if error else "unknown error"
            self.push_screen(
                ErrorModal(title, text, "This is a bug in npa-sop; please report it with the log.")
            )
