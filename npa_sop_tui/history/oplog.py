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
    records = [op for op in entry.operations if op.log]
    if operation_id is not None:
        records = [op for op in records if op.id == operation_id]
    return Path(str(records[-1].log)) if records else None


def read_events(path: Path) -> Iterator[Event]:
    """The events of a log, in order; lines that are not events (a torn last line of a
    run still writing, or a newer npa's kinds) are skipped."""
    with path.open(encoding="utf-8") as handle:
        for raw in handle:
            try:
                yield parse_event(json.loads(raw))
            except (ValueError, TypeError):
                continue
