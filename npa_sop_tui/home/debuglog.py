"""`--debug`: a rotating log file under `NPA_HOME/logs`, secrets masked.

Only a `--debug` call configures logging (the import alone costs time every headless call
would pay); the log then takes every record of npa's own loggers at DEBUG and other
libraries' at INFO (their DEBUG output can carry request headers and tokens). Every message
goes through the same redaction as event logs before it is written.
"""

from __future__ import annotations

import contextlib
import logging
import logging.handlers
import os
import platform
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from npa_sop_tui import __version__
from npa_sop_tui.home import paths

LOG_NAME = "npa-debug.log"
MAX_BYTES = 5 * 1024 * 1024
BACKUPS = 3
_OWN = ("npa_sop_tui", "npa")

log = logging.getLogger("npa_sop_tui.debug")


def logs_dir() -> Path:
    return paths.npa_home() / "logs"


class _RedactingFilter(logging.Filter):
    """Masks secret-looking text in the formatted message (and the traceback)."""

    def __init__(self) -> None:
        super().__init__()
        from npa_sop_tui.redact import Redactor

        self._redactor = Redactor()

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = self._redactor.text(record.getMessage())
        record.args = None
        if record.exc_info:
            record.exc_text = self._redactor.text(
                logging.Formatter().formatException(record.exc_info)
            )
            record.exc_info = None
        return True


class _DebugLogHandler(logging.handlers.RotatingFileHandler):
    """The `--debug` file (its own class, so `stop` removes it and nothing else).

    Opened through `home_files` (0600, `O_NOFOLLOW`): a planted `logs/npa-debug.log` symlink
    is refused, never appended to or chmodded. Rotation renames the links themselves."""

    stopped: OSError | None = None
    """Why the log stopped taking lines (a full disk, a quota, a folder gone), if it did."""

    def _open(self) -> Any:
        from npa_sop_tui.home.files import open_private

        fd = open_private(self.baseFilename, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        return os.fdopen(fd, "a", encoding=self.encoding)

    def emit(self, record: logging.LogRecord) -> None:
        if self.stopped is None:
            super().emit(record)

    def handleError(self, record: logging.LogRecord) -> None:
        """A line the disk would not take stops the log, said once in one line: the command
        goes on and ends as it would have (logging's own handling prints a traceback for
        every line, and the failed flush at the end would fail a command that succeeded)."""
        error = sys.exc_info()[1]
        if not isinstance(error, OSError):
            super().handleError(record)
            return
        self.stopped = error
        with contextlib.suppress(OSError):
            sys.stderr.write(
                f"debug log: stopped: {error.strerror or error} ({self.baseFilename}); "
                "the command goes on without it\n"
            )
        self._drop_stream()

    def close(self) -> None:
        try:
            super().close()
        except OSError:  # the last buffered lines did not fit: the file is closed anyway
            self._drop_stream()

    def _drop_stream(self) -> None:
        stream, self.stream = self.stream, None  # type: ignore[assignment]
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()


def start(argv: Sequence[str], *, program: str = "npa") -> Path | None:
    """Send logging to the rotating debug log, say where on stderr, and return its path;
    None (said once on stderr) when the home cannot hold it: the command runs without."""
    from npa_sop_tui.errors import UsageError

    stop()  # one debug log per call
    try:  # the folder is made 0700 (the home too), the file 0600: nobody else's business
        path = logs_dir() / LOG_NAME
        handler = _DebugLogHandler(path, maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8")
    except UsageError as exc:  # a read-only home, a planted symlink
        sys.stderr.write(f"debug log: not written: {exc.render()}\n")
        return None
    except OSError as exc:  # a full disk, a quota
        sys.stderr.write(f"debug log: not written: {exc.strerror or exc} ({logs_dir()})\n")
        return None
    handler.setFormatter(
        logging.Formatter("%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s")
    )
    handler.addFilter(_RedactingFilter())
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    for name in _OWN:
        logging.getLogger(name).setLevel(logging.DEBUG)
    logging.captureWarnings(True)
    from npa_sop_tui.redact import Redactor

    log.info(
        "%s %s: %s (python %s, %s); NPA_HOME=%s",
        program,
        __version__,
        Redactor().text(" ".join(argv)),  # masked here too: other handlers may see it first
        platform.python_version(),
        platform.platform(terse=True),
        paths.npa_home(),
    )
    if handler.stopped is None:  # else it said already why it is not written
        sys.stderr.write(f"debug log: {path}\n")
    return path


def note_error(exc: BaseException) -> None:
    """Record a failure the user was shown (our errors) or not (bugs, with the traceback)."""
    from npa_sop_tui.errors import NpaError

    if isinstance(exc, NpaError):
        log.info("error (exit %s): %s", exc.exit_code, exc.render())
    else:
        log.error("unexpected %s", type(exc).__name__, exc_info=exc)


def stop() -> None:
    """Close the debug log (a process may run several calls in a row: tests, the SDK)."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        if isinstance(handler, _DebugLogHandler):
            root.removeHandler(handler)
            handler.close()


def logging_sink(sink: Callable[[Any], None]) -> Callable[[Any], None]:
    """`sink`, also writing every lifecycle event (as its JSON) to the debug log."""
    events = logging.getLogger("npa_sop_tui.events")

    def logged(event: Any) -> None:
        events.debug("%s", event.model_dump_json())
        sink(event)

    return logged
