"""npa's workers[] / capacity_status from an installation's terraform.tfstate."""

from __future__ import annotations

import json
from pathlib import Path

from npa_sop_tui.status.capacity import capacity_for


def _state(tmp_path: Path, resources: list[dict]) -> Path:
    install = tmp_path / "install"
    install.mkdir()
    (install / "terraform.tfstate").write_text(json.dumps({"resources": resources}))
    return install


def _null(name: str, *triggers: dict) -> dict:
    return {
        "mode": "managed",
        "type": "null_resource",
        "name": name,
        "instances": [{"attributes": {"triggers": t}} for t in triggers],
    }


def test_a_state_without_worker_groups_is_not_applied_capacity(tmp_path: Path) -> None:
    """Phase 1 only, or a destroyed cluster: no pools, so nothing is claimed as applied."""
    install = _state(tmp_path, [_null("cluster", {"name": "demo"})])
    assert capacity_for("demo", install) == ([], "unknown")


def test_stand_in_node_groups_are_read_from_their_triggers(tmp_path: Path) -> None:
    install = _state(
        tmp_path,
        [
            _null(
                "worker_v2",
                {"name": "gpu-0", "capacity": "preemptible"},
                {"name": "gpu-1", "capacity": "preemptible"},
                {"name": "cpu-0", "capacity": "on-demand"},
            ),
            _null(
                "worker_v2_size",
                {"name": "gpu-0", "size": "100"},
                {"name": "gpu-1", "size": "20"},
                {"name": "cpu-0", "size": "2"},
            ),
        ],
    )
    workers, status = capacity_for("demo", install)
    assert status == "applied"
    assert [w.model_dump() for w in workers] == [
        {"name": "cpu", "capacity_mode": "on-demand", "node_groups": 1, "nodes": 2},
        {"name": "gpu", "capacity_mode": "preemptible", "node_groups": 2, "nodes": 120},
    ]
