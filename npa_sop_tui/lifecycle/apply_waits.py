"""What `terraform apply` waits on in the recipe's `modules/slurm/main.tf`, and until when.

The waits themselves (what, how long, the recipe's resource address; a stand-in's events carry it)
are listed in status/apply_deadlines.py, which also tells `status` until when a running
deploy waits. Here: when one starts, the operation says so with its deadline; when it ends,
how long it took.
"""

from __future__ import annotations

from npa_sop_tui.events import Event
from npa_sop_tui.status.apply_deadlines import WAITS, ApplyWait, utc_clock, wait_for

__all__ = ["WAITS", "ApplyWait", "wait_for", "wait_note"]


def wait_note(event: Event) -> str | None:
    """A line for the operation's events when `event` starts or ends one of the waits."""
    address = getattr(event, "addr", None)
    wait = wait_for(address) if isinstance(address, str) else None
    if wait is None:
        return None
    if event.kind == "resource_started":
        deadline = utc_clock(event.ts + wait.minutes * 60)
        return f"apply waits for {wait.what}: up to {wait.minutes} min, gives up at {deadline}"
    if event.kind == "resource_finished":
        return f"apply wait done after {getattr(event, 'elapsed', 0):.0f} s: {wait.what}"
    if event.kind == "resource_failed":
        return f"apply wait failed: {wait.what}"
    return None
