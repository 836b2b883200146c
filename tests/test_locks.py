"""Cluster locks: a busy lock names its holder, and secrets handed in on the command line
never reach the holder record, which is shown to anyone who hits the lock (stderr and the
JSON error document)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from npa_sop_tui.locks import ClusterBusy, ClusterLock, is_locked

SECRET = "capacityblockgroup-LOCKsecret7"


@pytest.mark.parametrize(
    "flags",
    [
        ["--capacity-block-group", f"gpu={SECRET}"],
        [f"--capacity-block-group=gpu={SECRET}"],
        [
            "--capacity-block-group",
            "gpu=capacityblockgroup-other",
            "--capacity-block-group",
            SECRET,
        ],
    ],
)
def test_busy_lock_never_shows_a_capacity_id(
    flags: list[str], npa_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = ["/venv/bin/npa", "soperator", "deploy", "--spec", "c.yaml", *flags, "--yes"]
    monkeypatch.setattr(sys, "argv", argv)
    with ClusterLock("busy", operation="deploy") as held:
        record = held.path.read_text()
        assert SECRET not in record
        assert "capacityblockgroup-" not in record
        with pytest.raises(ClusterBusy) as caught:
            ClusterLock("busy", operation="plan").acquire()
    busy = caught.value
    assert SECRET not in busy.render()
    assert SECRET not in json.dumps(busy.json_extra())
    # still useful: it names the command and keeps the pool names
    assert "npa soperator deploy --spec c.yaml" in busy.message
    assert "gpu=***" in busy.message or "***" in busy.message


def test_lock_contention_names_the_holder() -> None:
    with ClusterLock("busy", operation="deploy"):
        assert is_locked("busy")
        with pytest.raises(ClusterBusy) as info:
            ClusterLock("busy", operation="destroy").acquire()
        assert f"pid {os.getpid()}" in info.value.message
        assert "deploy" in info.value.message
        assert info.value.exit_code == 2
    assert not is_locked("busy")
    ClusterLock("busy", operation="destroy").acquire().release()


# An ID the redactor's patterns do not know: only the flag handling can mask it.
PLAIN_ID = "e00LOCKplainid42"


@pytest.mark.parametrize(
    "flags",
    [
        ["--capacity-block-group", f"gpu={PLAIN_ID}"],
        ["--capacity-block-group", PLAIN_ID],
        [f"--capacity-block-group=gpu={PLAIN_ID}"],
        [f"--capacity-block-group={PLAIN_ID}"],
    ],
    ids=["separate-with-pool", "separate-bare", "joined-with-pool", "joined-bare"],
)
def test_holder_command_masks_every_form_of_the_capacity_flag(flags: list[str]) -> None:
    """Protects the flag masking itself: the IDs here match no redactor pattern."""
    from npa_sop_tui.locks import holder_command

    shown = holder_command(["/venv/bin/npa", "soperator", "deploy", *flags, "--yes"])
    assert PLAIN_ID not in shown
    assert shown.startswith("npa soperator deploy --capacity-block-group")
    assert shown.endswith("--yes")  # the flag after the value is kept as it is
    if "gpu=" in " ".join(flags):
        assert "gpu=***" in shown  # the pool name stays readable
