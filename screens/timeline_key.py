"""The `t` key that opens an operation's timeline, shared by home, the dashboard and the
deploy screen. Its own module so those screens bind the key without importing the timeline
screen and its event-log parsing (pydantic models) before the first frame."""

from __future__ import annotations

from textual.binding import Binding


def timeline_binding(screen_id: str) -> Binding:
    """The `t` key of the screens that open a timeline (in help and the palette; the
    footers keep their room for the keys used every minute)."""
    return Binding(
        "t",
        "timeline",
        "Timeline",
        tooltip="The operation's resources as bars, critical path marked",
        show=False,
        id=f"{screen_id}.timeline",
    )
