"""Which clusters a fleet target owns: the marker, the same-name guard, the identity it runs
under, and which of a project's clusters keep its network."""

from __future__ import annotations

from pathlib import Path

import pytest

from npa_sop_tui.errors import UsageError
from npa_sop_tui.fleet.loader import load_fleet
from npa_sop_tui.fleet.model import FleetTarget
from npa_sop_tui.fleet.ownership import (
    check_owned,
    deployed_in_project,
    read_marker,
    target_dir,
    target_identity,
    write_marker,
)
from npa_sop_tui.home import inventory
from npa_sop_tui.home.inventory_records import InventoryEntry

from testkit.fleets import ASSETS


@pytest.fixture
def target(npa_home: Path) -> FleetTarget:
    return load_fleet(ASSETS / "fleet-standin.yaml").targets[0]


def _cluster(name: str, state: str = "deployed") -> None:
    inventory.save(InventoryEntry(name=name, kube_context=f"nebius-{name}-slurm", state=state))  # type: ignore[arg-type]


def test_a_written_marker_reads_back_and_a_damaged_one_is_not_trusted(
    target: FleetTarget,
) -> None:
    assert read_marker(target) is None
    write_marker(target, "subnet-e00x")
    marker = read_marker(target)
    assert marker is not None
    assert (marker["fleet"], marker["name"], marker["subnet_id"]) == (
        target.fleet,
        target.name,
        "subnet-e00x",
    )
    assert (target_dir(target) / "target.json").stat().st_mode & 0o077 == 0
    (target_dir(target) / "target.json").write_text("[1, 2")
    assert read_marker(target) is None


def test_a_same_name_cluster_the_fleet_did_not_create_is_refused(target: FleetTarget) -> None:
    check_owned(target)  # the name is free
    _cluster(target.name)
    with pytest.raises(UsageError, match="was not created by this fleet target") as info:
        check_owned(target)
    assert info.value.exit_code == 2
    write_marker(target, None)
    check_owned(target)  # now it is this target's own cluster


def test_a_destroyed_cluster_of_the_same_name_frees_the_name(target: FleetTarget) -> None:
    _cluster(target.name, state="destroyed")
    check_owned(target)


def test_identity_comes_from_the_envelope_and_names_what_is_missing(
    target: FleetTarget,
) -> None:
    settings = {"tenant_id": None, "region": None}
    identity = target_identity(target, settings, "vpcsubnet-e00abc")  # type: ignore[arg-type]
    assert identity.project_id == target.project_id and identity.subnet_id == "vpcsubnet-e00abc"
    with pytest.raises(UsageError, match=r"subnet_id is not set: add projects\[0\]\.subnet_id"):
        target_identity(target, settings, None)  # type: ignore[arg-type]


def test_a_project_keeps_its_network_while_a_marked_cluster_is_deployed(
    target: FleetTarget,
) -> None:
    assert deployed_in_project(target.fleet, target.project_key) == []
    write_marker(target, None)
    _cluster(target.name)
    assert deployed_in_project(target.fleet, target.project_key) == [target.name]
    _cluster(target.name, state="destroyed")
    assert deployed_in_project(target.fleet, target.project_key) == []
