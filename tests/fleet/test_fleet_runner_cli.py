"""The fleet commands end to end (real Terraform on the stand-in recipe): one damaged target
is that target's failure, never the whole fleet's; npa's plan document beside ours."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from npa_sop_tui.cli.entry import main
from npa_sop_tui.home import inventory
from npa_sop_tui.home.paths import cluster_dir

from testkit.fleets import fleet_text

pytestmark = pytest.mark.usefixtures("sandbox_in_home", "fast_standin")


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main(list(argv))
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.terraform
@pytest.mark.slow
def test_a_damaged_target_fails_alone_in_deploy_and_destroy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "fleet.yaml"
    path.write_text(fleet_text(name="dmg", a="da", b="db", c="dc"))
    folder = cluster_dir("db")
    folder.mkdir(parents=True)
    (folder / "inventory.json").write_text("garbage {")
    base = ["--file", str(path), "--sandbox", "--yes", "-o", "json", "-j", "2"]

    code, report = cli(capsys, "fleet", "deploy", *base)
    assert code == 1  # a partial failure; the report is still the one document
    status = {t["key"]: t["status"] for t in report["targets"]}
    assert status == {"alpha/da": "deployed", "alpha/db": "failed", "beta/dc": "deployed"}
    damaged = next(t for t in report["targets"] if t["key"] == "alpha/db")
    assert damaged["error"]["error"] == "InventoryDamaged"
    assert "inventory record is damaged" in damaged["message"]
    npa_view = {c["cluster_name"]: c for c in report["clusters"]}
    assert npa_view["db"]["status"] == "error" and npa_view["db"]["error"]
    assert report["deployed"] == 2 and report["failed"] == 1

    (folder / "inventory.json").unlink()
    folder.rmdir()
    folder.write_text("a file where the cluster's folder should be")
    code, report = cli(capsys, "fleet", "destroy", *base)
    assert code == 1
    status = {t["key"]: t["status"] for t in report["targets"]}
    assert status["alpha/da"] == "destroyed" and status["beta/dc"] == "destroyed"
    assert status["alpha/db"] == "destroy-incomplete"
    assert inventory.get("da").state == "destroyed"  # type: ignore[union-attr]


@pytest.mark.terraform
def test_fleet_plan_json_is_npas_plan_beside_ours(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "fleet.yaml"
    path.write_text(fleet_text(name="pl", a="pa", b="pb", c="pc"))
    code, plan = cli(
        capsys, "fleet", "plan", "--file", str(path), "--sandbox", "-o", "json",
        "--project-prefix", "team-", "--select", "name=pa,pc", "-j", "2",
    )  # fmt: skip
    assert code == 0, plan
    assert plan["deployed"] == 0  # a plan deploys nothing
    assert (plan["project_count"], plan["cluster_count"]) == (2, 3)
    assert plan["project_prefix"] == "team-"
    alpha, beta = plan["projects"]
    assert alpha["display_name"] == "team-alpha" and alpha["project_id"] == "project-e00alpha"
    assert alpha["will_create"] is False
    (pa,) = alpha["clusters"]
    assert pa["backend"] == "soperator" and pa["name"] == "pa"
    assert pa["provider_mutation"] is False and pa["reservation_preflight"] == "not-required"
    assert pa["workers"][0]["name"] == "cpu"
    assert [c["name"] for c in beta["clusters"]] == ["pc"]
