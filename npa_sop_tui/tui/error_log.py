"""Where the app's own errors go: a traceback appended to NPA_HOME/logs/tui-errors.log
(0600, never through a symlink), and the sentence the help shows about every log."""

from __future__ import annotations


def log_traceback(error: BaseException, where: str) -> str:
    """Append the traceback to NPA_HOME/logs/tui-errors.log; returns where it went."""
    import time
    import traceback

    try:
        import os

        from npa_sop_tui.home.files import open_private
        from npa_sop_tui.home.paths import npa_home

        path = npa_home() / "logs" / "tui-errors.log"
        text = "".join(traceback.format_exception(error))
        stamp = time.strftime("%Y-%m-%d %H:%M:%S")
        fd = open_private(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)  # 0600, no symlinks
        with os.fdopen(fd, "a", encoding="utf-8") as handle:
            handle.write(f"--- {stamp} in {where or 'the app'}\n{text}\n")
        return str(path)
    except Exception:  # logging must never turn one error into two
        return "the terminal output"


def log_places() -> str:
    """Where the logs are, for the help: a newcomer's first question after an error."""
    from npa_sop_tui.home.paths import npa_home, soperator_root

    logs = npa_home() / "logs"
    return (
        f"Logs: each operation's in {soperator_root()}/<cluster>/operations/ (g on the "
        f"dashboard); app errors in {logs}/tui-errors.log; --debug writes "
        f"{logs}/npa-debug.log."
    )
