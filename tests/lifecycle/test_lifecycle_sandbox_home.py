"""`--sandbox` on the command line: one sandbox home shared with the app, apart from real ones."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from npa_sop_tui import paths
from npa_sop_tui.cli import main

ROOT = Path(__file__).resolve().parents[2]


def test_entering_the_sandbox_home_is_idempotent(npa_home: Path) -> None:
    first = paths.enter_sandbox_home()
    again = paths.enter_sandbox_home()
    assert first == again == npa_home / "sandbox"
    assert os.environ["NPA_HOME"] == str(first)


def test_app_sandbox_backend_does_not_nest_inside_an_entered_sandbox(npa_home: Path) -> None:
    from npa_sop_tui.environment import open_environment

    paths.enter_sandbox_home()
    environment = open_environment(sandbox=True)
    assert environment.home == npa_home / "sandbox"  # type: ignore[attr-defined]


@pytest.mark.integration
def test_cli_sandbox_deploy_is_listed_and_watched_only_in_the_sandbox(
    npa_home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TF_VAR_standin_sleep_seconds", "0")
    spec = str(ROOT / "assets" / "cpu-minimal.yaml")
    assert main(["soperator", "deploy", "--spec", spec, "--sandbox", "--yes", "-o", "json"]) == 0
    name = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["result"]["name"]
    # Back to the real home: the real inventory does not see the sandbox cluster.
    monkeypatch.setenv("NPA_HOME", str(npa_home))
    monkeypatch.delenv("NPA_SANDBOX_HOME")
    assert main(["soperator", "list", "-o", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["clusters"] == []

    assert main(["soperator", "list", "--sandbox", "-o", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)["clusters"]
    assert [c["name"] for c in listed] == [name]

    assert main(["soperator", "status", "--name", name, "--sandbox", "-o", "json"]) == 0
    snapshot = json.loads(capsys.readouterr().out)
    assert snapshot["verdict"]["state"] == "ready"
    assert snapshot["slurm"]["partitions"][0]["name"] == "main"
    assert all(n["state"] == "idle" for n in snapshot["slurm"]["nodes"])
    assert snapshot["slurm"]["nodes"]  # every worker of the spec is there

    assert main(["soperator", "destroy", "--name", name, "--sandbox", "--yes", "-o", "json"]) == 0
