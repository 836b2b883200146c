"""The existing npa's fleet contract, in the sandbox: `--spec`/`--yes`/`--output json`, one
target's unexpected error isolated, npa's aggregate beside ours, live `fleet status
--sandbox` with `status-error`, exit codes, selection flags, network release decided by the
inventory, and `npa.sdk.fleet`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from npa_sop_tui.cli.entry import main
from npa_sop_tui.fleet.network import project_root, read_record
from npa_sop_tui.home import inventory

from testkit.fleets import fleet_text

pytestmark = pytest.mark.usefixtures("sandbox_in_home", "fast_standin")


def _cli_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main(list(argv))
    out = capsys.readouterr().out
    return code, json.loads(out)  # one JSON document: json.loads fails on anything else


def test_help_lists_only_real_commands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["fleet", "--help"])
    out = capsys.readouterr().out
    assert "watch" not in out
    for command in ("plan", "deploy", "status", "destroy"):
        assert command in out
    with pytest.raises(SystemExit):
        main(["fleet", "deploy", "--help"])
    deploy_help = capsys.readouterr().out
    for flag in ("--spec", "--yes", "--only-projects", "--only-clusters", "--timeout", "--profile"):
        assert flag in deploy_help, flag
    with pytest.raises(SystemExit):
        main(["fleet", "destroy", "--help"])
    assert "--force" in capsys.readouterr().out


@pytest.mark.terraform
@pytest.mark.slow
def test_unexpected_error_is_isolated_and_status_is_live(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "fleet.yaml"
    path.write_text(fleet_text(name="iso", a="ia", b="ib", c="ic"))
    # A damaged file in one target's folder: its marker path is a folder, so writing it
    # raises IsADirectoryError, not one of our errors.
    (project_root("iso", "alpha") / "ib" / "target.json").mkdir(parents=True)
    code, report = _cli_json(
        capsys, "fleet", "deploy", "--spec", str(path), "--yes", "--sandbox", "-j", "2",
        "--timeout", "30", "--output", "json",
    )  # fmt: skip
    assert code == 1
    by_key = {t["key"]: t for t in report["targets"]}
    assert [by_key[k]["status"] for k in ("alpha/ia", "alpha/ib", "beta/ic")] == [
        "deployed",
        "failed",
        "deployed",
    ]
    assert by_key["alpha/ib"]["error"]["type"] == "IsADirectoryError"
    # npa's aggregate, beside ours; a soperator success counts as deployed (npa's own code
    # counted its `ready` as failed)
    assert (report["name"], report["region"], report["tenant_id"]) == (
        "iso",
        "eu-north1",
        "tenant-e00fleet",
    )
    assert (report["deployed"], report["failed"]) == (2, 1)
    assert report["backend_counts"] == {"mk8s": 0, "soperator": 3}
    clusters = {c["cluster_name"]: c for c in report["clusters"]}
    assert clusters["ia"]["status"] == "deployed" and clusters["ia"]["cluster_status"] == "ready"
    assert clusters["ia"]["backend"] == "soperator" and clusters["ia"]["project_key"] == "alpha"
    assert clusters["ia"]["project_id"] == "project-e00alpha"
    assert clusters["ia"]["backend_state_root"]
    assert clusters["ib"]["status"] == "error" and "IsADirectoryError" in clusters["ib"]["error"]

    code, status = _cli_json(
        capsys, "fleet", "status", "--spec", str(path), "--sandbox", "--output", "json"
    )
    assert code == 1  # one target failed: documented exit 1
    rows = {r["key"]: r for r in status["targets"]}
    assert rows["alpha/ia"]["live_state"] == "running", rows
    assert rows["beta/ic"]["live_state"] == "running", rows["beta/ic"]["message"]
    assert rows["alpha/ib"]["cluster_state"] == "absent" and rows["alpha/ib"]["live_state"] is None

    # A target whose live status cannot be read is that target's status-error.
    from npa_sop_tui.fleet import live

    real = live._snapshot

    async def broken(name: str, **kw: Any) -> Any:
        if name == "ic":
            raise RuntimeError("kube API exploded")
        return await real(name, **kw)

    monkeypatch.setattr(live, "_snapshot", broken)
    code, status = _cli_json(
        capsys, "fleet", "status", "--spec", str(path), "--sandbox", "--only-clusters", "ia,ic",
        "--output", "json",
    )  # fmt: skip
    monkeypatch.setattr(live, "_snapshot", real)
    rows = {r["key"]: r for r in status["targets"]}
    assert code == 1 and set(rows) == {"alpha/ia", "beta/ic"}
    assert rows["beta/ic"]["live_state"] == "status-error"
    assert "kube API exploded" in rows["beta/ic"]["message"]
    assert rows["alpha/ia"]["live_state"] == "running"

    # Network release: drop ia from the file, destroy the rest: alpha's network stays,
    # because the inventory still holds ia (the file no longer names it).
    (project_root("iso", "alpha") / "ib" / "target.json").rmdir()
    path.write_text(fleet_text(name="iso", a="ib", b="ib2", c="ic"))
    code, destroyed = _cli_json(
        capsys, "fleet", "destroy", "--spec", str(path), "--sandbox", "--force", "--output", "json"
    )
    assert code == 0, destroyed
    assert read_record("iso", "beta") is None  # nothing left in beta
    alpha = read_record("iso", "alpha")
    assert alpha is not None, "released while ia is still deployed"
    assert inventory.require("ia").state == "deployed"
    # Once ia is gone too (destroyed by name), the next fleet destroy releases alpha.
    assert main(["soperator", "destroy", "--name", "ia", "--sandbox", "--yes"]) == 0
    capsys.readouterr()
    code, _ = _cli_json(
        capsys, "fleet", "destroy", "--spec", str(path), "--sandbox", "--yes", "--output", "json"
    )
    assert code == 0 and read_record("iso", "alpha") is None


@pytest.mark.terraform
def test_sdk_fleet_and_selection_flags(tmp_path: Path) -> None:
    from npa.sdk import fleet

    path = tmp_path / "fleet.yaml"
    path.write_text(fleet_text(name="sdkf", a="sa", b="sb", c="sc"))
    report = fleet.deploy(path, sandbox=True, only_projects=["beta"], timeout=20)
    assert [t.key for t in report.targets] == ["beta/sc"] and report.ok
    assert report.model_dump(mode="json")["clusters"][0]["cluster_name"] == "sc"
    table = fleet.status(path, sandbox=True)
    rows = {r.key: r for r in table.targets}
    assert rows["beta/sc"].live_state == "running"
    assert rows["alpha/sa"].cluster_state == "absent" and table.ok
    planned = fleet.plan(path, sandbox=True, only_clusters=["sa"])
    assert [t.status for t in planned.targets] == ["planned"]
    gone = fleet.destroy(path, sandbox=True, only_clusters=["sc"])
    assert gone.ok and gone.targets[0].status == "destroyed"
