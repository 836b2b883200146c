"""Which keys a deploy screen offers in each stage (Textual's check_action: None hides)."""

from __future__ import annotations

import pytest

from npa_sop_tui.screens.deploy_stage import OperationStage, offered, running

S = OperationStage


@pytest.mark.parametrize(
    ("action", "stage", "failed", "status_started", "shown"),
    [
        ("apply", S.PLANNED, False, False, True),
        ("apply", S.PLANNING, False, False, None),
        ("apply", S.DONE, False, False, None),
        ("cancel", S.APPLYING, False, False, True),
        ("cancel", S.CANCELLING, False, False, True),
        ("cancel", S.PLANNED, False, False, None),
        ("status", S.APPLYING, False, True, True),
        ("status", S.APPLYING, False, False, None),
        ("status", S.DONE, False, False, True),
        ("retry", S.DONE, True, False, True),
        ("retry", S.DONE, False, False, None),
        ("retry", S.PLANNING, True, False, None),
        ("leave", S.APPLYING, False, False, None),
        ("leave", S.CANCELLING, False, False, None),
        ("leave", S.PLANNED, False, False, True),
        ("log", S.APPLYING, False, False, True),
    ],
)
def test_each_stage_offers_its_keys(
    action: str, stage: str, failed: bool, status_started: bool, shown: bool | None
) -> None:
    assert offered(action, stage, failed=failed, status_started=status_started) is shown


def test_only_applying_and_cancelling_count_as_running() -> None:
    assert [s for s in vars(S).values() if isinstance(s, str) and running(s)] == [
        S.APPLYING,
        S.CANCELLING,
    ]
