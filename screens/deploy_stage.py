"""Where a deploy screen is (planning → planned → applying (→ cancelling) → done), and which
of its keys each stage offers."""

from __future__ import annotations


class OperationStage:
    PLANNING = "planning"
    PLANNED = "planned"
    APPLYING = "applying"
    CANCELLING = "cancelling"
    DONE = "done"


def running(stage: str) -> bool:
    """Terraform is applying: leaving the screen would hide it, so cancel comes first."""
    return stage in (OperationStage.APPLYING, OperationStage.CANCELLING)


def offered(action: str, stage: str, *, failed: bool, status_started: bool) -> bool | None:
    """Textual's check_action answer: True shows and runs the key, None hides it."""
    rules = {
        "apply": stage == OperationStage.PLANNED,
        "cancel": running(stage),
        "status": status_started or stage == OperationStage.DONE,
        "retry": stage == OperationStage.DONE and failed,
        "leave": not running(stage),
    }
    return True if rules.get(action, True) else None
