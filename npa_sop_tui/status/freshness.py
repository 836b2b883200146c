"""How old a source's data really is, for the dashboard and `status` (one rule for both).

Age always counts from the last *successful* collection (`Freshness.updated_at`), so it
climbs while a source fails or hangs, and it is recomputed at display time (every second
on the dashboard, on every redraw of `status --watch`). A source that failed is stale at
once. A source whose answer is overdue (a poll still running well past its interval, e.g.
sinfo waiting on a dead controller) is shown stale too, before the poll gives up.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from npa_sop_tui.status.model import Freshness

if TYPE_CHECKING:
    from npa_sop_tui.status.model import ClusterStatus

OVERDUE_GRACE_SECONDS = 5.0
"""How far past its interval a source may be before its data counts as stale."""


@dataclass(frozen=True)
class FreshnessView:
    """What to show for one source: `fresh 3s`, `STALE 41s (connection refused)`."""

    state: str  # fresh | stale | error | pending | disabled
    age: float | None  # seconds since the last successful collection
    reason: str | None = None

    def label(self) -> str:
        age = f" {format_age(self.age)}" if self.age is not None else ""
        head = "STALE" if self.state == "stale" else self.state
        reason = f" ({self.reason})" if self.reason else ""
        return f"{head}{age}{reason}"


def format_age(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 120:
        return f"{seconds}s"
    if seconds < 7200:
        return f"{seconds // 60}m"
    return f"{seconds // 3600}h"


def view(f: Freshness, *, interval: float | None = None, now: float | None = None) -> FreshnessView:
    """The freshness of one source as of `now`, given how often it is expected to answer."""
    now = time.time() if now is None else now
    age = None if f.updated_at is None else max(0.0, now - f.updated_at)
    if f.state == "fresh":
        if age is not None and interval is not None and age > interval + OVERDUE_GRACE_SECONDS:
            return FreshnessView("stale", age, f"no answer for {format_age(age - interval)}")
        return FreshnessView("fresh", age, f.note)
    if f.state == "stale":
        return FreshnessView("stale", age, f.error or "the last collection failed")
    if f.state == "error":
        return FreshnessView("error", age, f.error)
    return FreshnessView(f.state, age, f.note)


def heartbeat_doc(snap: ClusterStatus, *, interval: float | None = None) -> dict[str, Any]:
    """The `status --watch --output json` line written when nothing changed: each source's
    freshness as of now (judged by the same rule as the dashboard), so a consumer can tell a
    live watch from a stuck one without a new snapshot."""
    now = time.time()
    sources: dict[str, Any] = {}
    for source, f in snap.freshness.items():
        shown = view(f, interval=interval if source == "slurm" else None, now=now)
        sources[source] = {
            **f.model_dump(mode="json"),
            "shown": shown.state,
            "age_seconds": None if shown.age is None else round(shown.age, 1),
            "reason": shown.reason,
        }
    return {
        "heartbeat": True,
        "name": snap.name,
        "taken_at": now,
        "snapshot_taken_at": snap.taken_at,
        "verdict": snap.verdict.state,
        "freshness": sources,
    }
