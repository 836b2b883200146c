"""Reading one operation's NDJSON event log (the one `lifecycle.operation` writes, redacted,
one event a line, path kept in the cluster's inventory record)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from npa_sop_tui.events import Event, parse_event


def operation_log_path(name: str, operation_id: str | None = None) -> Path | None:
    """The log of `operation_id` of cluster `name`, else of its latest logged operation."""
    from npa_sop_tui.home import inventory

    entry = inventory.get(name)
    if entry is None:
        return None
    records = [op for op in entry.operations if op.log_file]
    if operation_id is not None:
        records = [op for op in records if op.id == operation_id]
    return records[-1].log_file if records else None


def read_events(path: Path) -> Iterator[Event]:
    """The events of a log, in order; lines that are not events (a torn last line of a
    run still writing, or a newer npa's kinds) are skipped."""
    from npa_sop_tui.home.bounded_read import open_regular

    with open_regular(path) as handle:  # a FIFO planted there is refused, never waited on
        for raw in handle:
            try:
                yield parse_event(json.loads(raw))
            except (ValueError, TypeError):
                continue
