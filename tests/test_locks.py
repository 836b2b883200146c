"""Review pass: secrets handed in on the command line never reach the lock's holder record,
which is shown to anyone who hits the lock (stderr and the JSON error document)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from npa_sop_tui.locks import ClusterBusy, ClusterLock

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
def test_review_busy_lock_never_shows_a_capacity_id(
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
