"""The existing npa's fleet records read beside ours: its fleet-state.json aggregate and its
per-target ownership markers; npa's status and plan documents beside ours."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from npa_sop_tui.cli.entry import main
from npa_sop_tui.fleet.npa_records import npa_entries, npa_owner

from testkit.fleets import fleet_text
from testkit.npa_home import hashes, write_fleet

pytestmark = pytest.mark.usefixtures("sandbox_in_home", "fast_standin")


def npa_cluster(project: str, name: str, status: str, home: Path) -> dict[str, Any]:
    return {
        "name": name,
        "status": status,
        "backend": "soperator",
        "project_key": project,
        "cluster_name": name,
        "project_id": f"project-e00{project}",
        "region": "eu-north1",
        "backend_state_root": str(home / "fleet" / "t" / project / name / "soperator"),
    }


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main(list(argv))
    return code, json.loads(capsys.readouterr().out)


def test_fleet_status_reads_npas_fleet_state_and_ownership(
    sandbox_in_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = sandbox_in_home
    state = write_fleet(
        home,
        "t",
        [
            npa_cluster("alpha", "fa", "ready", home),
            npa_cluster("alpha", "fb", "error", home),
            npa_cluster("beta", "fc", "destroyed", home),
        ],
    )
    doc = json.loads(state.read_text())
    doc["clusters"].append("not an entry")  # a damaged entry names no target: skipped
    state.write_text(json.dumps(doc))
    (home / "fleet/t/beta/fc/.npa-backend-owner.json").write_text("{garbage")
    path = tmp_path / "fleet.yaml"
    path.write_text(fleet_text())
    before = hashes(home, [home / "fleet"])

    code, table = cli(capsys, "fleet", "status", "--file", str(path), "--no-live", "-o", "json")
    assert code == 1, table  # fb failed in npa's records
    rows = {r["key"]: r for r in table["targets"]}
    assert rows["alpha/fa"]["fleet_state"] == "deployed"  # npa's `ready` is a success
    assert rows["alpha/fb"]["fleet_state"] == "failed"
    assert rows["beta/fc"]["fleet_state"] == "destroyed"
    assert rows["alpha/fa"]["owned_by_fleet"] is True
    assert rows["beta/fc"]["owned_by_fleet"] is False  # its marker is unreadable
    # npa's status document beside ours
    assert table["name"] == "t"
    by_name = {c["cluster_name"]: c for c in table["clusters"]}
    assert set(by_name) == {"fa", "fb", "fc"}
    assert all(c["backend"] == "soperator" for c in table["clusters"])
    assert by_name["fa"]["backend_state_root"] == str(home / "fleet/t/alpha/fa")
    assert table["backend_counts"] == {"mk8s": 0, "soperator": 3}
    assert hashes(home, [home / "fleet"]) == before  # read, never written


def test_npa_entries_and_markers_are_checked_per_target(sandbox_in_home: Path) -> None:
    write_fleet(sandbox_in_home, "t", [npa_cluster("alpha", "fa", "ready", sandbox_in_home)])
    assert set(npa_entries("t")) == {("alpha", "fa")}
    assert npa_owner("t", "alpha", "fa") is True
    assert npa_owner("other", "alpha", "fa") is False  # no marker of that fleet
    marker = sandbox_in_home / "fleet/t/alpha/fa/.npa-backend-owner.json"
    marker.write_text(json.dumps({"fleet_name": "t", "project_key": "alpha", "cluster_name": "fa"}))
    assert npa_owner("t", "alpha", "fa") is False  # npa reads no backend as mk8s
    marker.write_text(json.dumps({"fleet_name": "u", "backend": "soperator"}))
    assert npa_owner("t", "alpha", "fa") is False


@pytest.mark.terraform
@pytest.mark.slow
def test_a_deploy_keeps_its_records_beside_npas_and_status_is_live(
    sandbox_in_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = sandbox_in_home
    npa_state = write_fleet(home, "t", [npa_cluster("beta", "fc", "ready", home)])
    before = npa_state.read_bytes()
    path = tmp_path / "fleet.yaml"
    path.write_text(fleet_text())
    argv = ["fleet", "deploy", "--file", str(path), "--sandbox", "--yes", "-o", "json"]
    code, report = cli(capsys, *argv, "--only-clusters", "fa", "--no-preflight")
    assert code == 0, report
    assert npa_state.read_bytes() == before  # npa's aggregate untouched
    ours = json.loads((home / "fleet/t/fleet-state.npa-sop.json").read_text())
    assert set(ours["targets"]) == {"alpha/fa"}

    code, table = cli(
        capsys, "fleet", "status", "--file", str(path), "--sandbox", "-o", "json",
        "--only-clusters", "fa",
    )  # fmt: skip
    assert code == 0, table
    (fa,) = table["clusters"]
    assert fa["status"] == "running" and "error" not in fa
