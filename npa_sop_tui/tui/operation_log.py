"""An operation's log as the log viewer shows it: read back from the file the lifecycle
wrote, each line worded by `events.describe` as the live log words it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

LOG_VIEW_LIMIT = 20_000
"""Lines of an operation log the viewer holds (the newest); the file on disk has them all."""


def operation_log(name: str, operation_id: str | None = None) -> tuple[Path | None, list[Any]]:
    """(path, (level, text) lines) of one operation's event log: the given operation, else
    the cluster's latest one. Lines are worded by `events.describe`, like the live log."""
    import json
    from collections import deque

    from npa_sop_tui.events import describe, level_of, parse_event
    from npa_sop_tui.home import inventory

    entry = inventory.get(name)
    if entry is None:
        return None, []
    records = [op for op in entry.operations if op.log_file]
    if operation_id is not None:
        records = [op for op in records if op.id == operation_id]
    if not records:
        return None, []
    path = records[-1].log_file
    assert path is not None
    lines: deque[tuple[str, str]] = deque(maxlen=LOG_VIEW_LIMIT)
    try:
        from npa_sop_tui.home.bounded_read import open_regular

        with open_regular(path) as handle:  # a FIFO is refused, never waited on
            for raw in handle:
                try:
                    event = parse_event(json.loads(raw))
                except (ValueError, TypeError):
                    lines.append(("warning", raw.rstrip("\n")))  # unreadable: shown as is
                    continue
                lines.append((level_of(event), describe(event)))
    except OSError as exc:
        return path, [("error", f"cannot read {path}: {exc.strerror or exc}")]
    return path, list(lines)
