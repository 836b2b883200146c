"""Lifecycle events as NDJSON."""

from __future__ import annotations

import json

from npa_sop_tui.events import Diagnostic, parse_event


def test_events_round_trip_as_ndjson() -> None:
    event = Diagnostic(operation_id="op", severity="warning", summary="s", detail="d")
    line = json.dumps(event.model_dump(mode="json"))
    assert parse_event(line) == event
