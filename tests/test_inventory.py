"""The cluster inventory: private records that round-trip, damaged records named, not fatal."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from npa_sop_tui import inventory
from npa_sop_tui.errors import UsageError
from npa_sop_tui.inventory import InventoryEntry, OperationRecord


def test_inventory_round_trip_is_private() -> None:
    entry = InventoryEntry(name="inv", kube_context="nebius-inv-slurm", region="eu-north1")
    entry.record(OperationRecord(id="deploy-1", kind="deploy", started=1.0))
    entry.record(OperationRecord(id="deploy-1", kind="deploy", started=1.0, result="ok"))
    inventory.save(entry)
    loaded = inventory.require("inv")
    assert loaded.operations[-1].result == "ok" and len(loaded.operations) == 1
    path = Path(os.environ["NPA_HOME"]) / "soperator" / "inv" / "inventory.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [e.name for e in inventory.list_clusters()] == ["inv"]
    with pytest.raises(UsageError, match="no cluster named 'other'"):
        inventory.require("other")


def test_damaged_inventory_is_reported() -> None:
    path = Path(os.environ["NPA_HOME"]) / "soperator" / "bad" / "inventory.json"
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    with pytest.raises(Exception, match="damaged"):
        inventory.get("bad")
    assert inventory.list_clusters() == []  # skipped, not fatal
