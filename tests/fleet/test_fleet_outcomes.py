"""A fleet target's outcome: which statuses count as success, when it finished, and the
error entry of a surprise."""

from __future__ import annotations

import pytest

from npa_sop_tui.fleet.loader import load_fleet
from npa_sop_tui.fleet.outcomes import Outcome, target_outcome, unexpected_error

from testkit.fleets import ASSETS


@pytest.mark.parametrize(
    ("status", "ok"),
    [
        ("planned", True),
        ("deployed", True),
        ("destroyed", True),
        ("absent", True),  # nothing to destroy is a success
        ("failed", False),
        ("interrupted", False),
        ("destroy-incomplete", False),
        ("not-run", False),
    ],
)
def test_only_what_leaves_the_target_as_asked_is_a_success(status: Outcome, ok: bool) -> None:
    target = load_fleet(ASSETS / "fleet-standin.yaml").targets[0]
    outcome = target_outcome(target, status, "m")
    assert outcome.ok is ok
    assert (outcome.key, outcome.name, outcome.backend) == (target.key, target.name, "soperator")


def test_an_outcome_that_started_has_finished_and_one_that_never_started_has_not() -> None:
    target = load_fleet(ASSETS / "fleet-standin.yaml").targets[0]
    assert target_outcome(target, "not-run", "skipped").finished is None
    ran = target_outcome(target, "deployed", "ok", started=100.0)
    assert ran.finished is not None and ran.finished >= 100.0


def test_a_surprise_is_named_by_its_type_and_message_without_a_traceback() -> None:
    entry = unexpected_error(KeyError("k"))
    assert entry == {"error": "unexpected", "type": "KeyError", "message": "'k'"}
