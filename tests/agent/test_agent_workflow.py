"""Workflow files: steps call agent tools by toolRef through the registry."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from npa_sop_tui.agent.workflow import WorkflowError, load_workflow
from npa_sop_tui.cli.entry import main
from npa_sop_tui.home import inventory

from testkit.fleets import ROOT_KEY

CLUSTER = f"""\
apiVersion: npa.soperator/v0.0.1
name: wf-test
root_login_ssh_public_key: {ROOT_KEY}
workers:
  - name: cpu
    size: 1
"""

WORKFLOW = """\
apiVersion: npa-sop.workflow/v0.0.1
name: wf
steps:
  - name: check
    toolRef: infra.soperator.validate
    with:
      spec_path: cluster.yaml
  - name: deploy
    toolRef: infra.soperator.deploy
    with:
      spec_path: cluster.yaml
      sandbox: true
  - name: teardown
    toolRef: infra.soperator.destroy
    with: {name: wf-test, confirm: wf-test, sandbox: true}
"""


@pytest.fixture
def workflow_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "cluster.yaml").write_text(CLUSTER)
    (tmp_path / "wf.yaml").write_text(WORKFLOW)
    for var, value in (
        ("NPA_REGION", "eu-north1"),
        ("NPA_TENANT_ID", "tenant-e00wf"),
        ("NPA_PROJECT_ID", "project-e00wf"),
        ("NPA_SUBNET_ID", "vpcsubnet-e00wf"),
    ):
        monkeypatch.setenv(var, value)
    monkeypatch.chdir(tmp_path.parent)  # spec_path is relative to the workflow, not the cwd
    return tmp_path


def test_dry_run_checks_every_step_and_runs_nothing(
    workflow_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["workflow", "run", str(workflow_dir / "wf.yaml"), "--dry-run", "-o", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["dry_run"] is True
    assert [(s["name"], s["status"]) for s in doc["steps"]] == [
        ("check", "would-run"),
        ("deploy", "would-run"),
        ("teardown", "would-run"),
    ]
    assert doc["steps"][1]["output"] == {
        "would_run": "infra.soperator.deploy",
        "cluster": "wf-test",
        "workers": 1,
        "sandbox": True,
        "terraform_dir": None,
    }
    assert inventory.list_clusters() == []


@pytest.mark.terraform
@pytest.mark.usefixtures("fast_standin")
def test_workflow_deploys_and_destroys_the_standin_through_the_registry(
    workflow_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["workflow", "run", str(workflow_dir / "wf.yaml"), "-o", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0, doc
    check, deploy, teardown = doc["steps"]
    assert check["output"]["ok"] is True
    assert deploy["status"] == "ok"
    assert deploy["output"]["kube_context"] == "nebius-wf-test-slurm"
    assert deploy["output"]["resources"] > 0
    assert teardown["output"]["destroyed"] == deploy["output"]["resources"]
    (entry,) = inventory.list_clusters()
    assert [op.kind for op in entry.operations] == ["deploy", "destroy"]
    assert entry.state == "destroyed"


def test_a_failing_step_stops_the_run(
    workflow_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workflow_dir / "cluster.yaml").write_text(CLUSTER.replace("size: 1", "size: 1\n    fabric: x"))
    code = main(["workflow", "run", str(workflow_dir / "wf.yaml"), "-o", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1 and doc["ok"] is False
    assert [s["status"] for s in doc["steps"]] == ["failed", "not-run", "not-run"]
    assert doc["steps"][0]["output"]["findings"][0]["path"] == "workers[0].fabric"
    assert inventory.list_clusters() == []


def test_bad_steps_are_positioned_errors(tmp_path: Path) -> None:
    path = tmp_path / "wf.yaml"
    path.write_text(
        WORKFLOW.replace("infra.soperator.validate", "infra.soperator.validat").replace(
            "      sandbox: true\n", "      sandbox: true\n      colour: red\n"
        )
    )
    with pytest.raises(WorkflowError) as info:
        load_workflow(path)
    by_path = {f.path: f for f in info.value.findings}
    assert by_path["steps[0].toolRef"].line == 5
    assert by_path["steps[0].toolRef"].hint == "did you mean 'infra.soperator.validate'?"
    assert by_path["steps[1].with.colour"].line == 13
    assert info.value.exit_code == 2


def test_missing_workflow_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["workflow", "run", str(tmp_path / "none.yaml")]) == 2
    assert "does not exist" in capsys.readouterr().err
