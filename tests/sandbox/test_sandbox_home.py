"""`--sandbox` on the command line: one sandbox home shared with the app, apart from real ones."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from npa_sop_tui.cli.entry import main
from npa_sop_tui.home import files as home_files
from npa_sop_tui.home import paths

ROOT = Path(__file__).resolve().parents[2]


def test_entering_the_sandbox_home_is_idempotent(npa_home: Path) -> None:
    first = home_files.enter_sandbox_home()
    again = home_files.enter_sandbox_home()
    assert first == again == npa_home / "sandbox"
    assert os.environ["NPA_HOME"] == str(first)


def test_app_sandbox_backend_does_not_nest_inside_an_entered_sandbox(npa_home: Path) -> None:
    from npa_sop_tui.environment_choice import open_environment

    home_files.enter_sandbox_home()
    environment = open_environment(sandbox=True)
    assert environment.home == npa_home / "sandbox"  # type: ignore[attr-defined]


@pytest.mark.terraform
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
    # npa's capacity view comes from the installation's state, never "applied" with no pools
    assert snapshot["capacity_status"] == "applied"
    assert snapshot["workers"] == [
        {"name": "cpu", "capacity_mode": "on-demand", "node_groups": 1, "nodes": 2}
    ]

    assert main(["soperator", "destroy", "--name", name, "--sandbox", "--yes", "-o", "json"]) == 0


def test_a_relative_npa_home_is_made_absolute_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NPA_HOME", "rel-home")
    assert paths.npa_home() == tmp_path / "rel-home"
    assert os.environ["NPA_HOME"] == str(tmp_path / "rel-home")  # child processes agree
    monkeypatch.chdir("/")
    assert paths.npa_home() == tmp_path / "rel-home"  # a later chdir does not move it


@pytest.mark.terraform
@pytest.mark.terraform
def test_sandbox_plan_works_with_a_relative_npa_home(tmp_path: Path) -> None:
    import subprocess
    import sys

    env = {**os.environ, "NPA_HOME": "rel-home", "TF_VAR_standin_sleep_seconds": "0"}
    env.pop("NPA_SANDBOX_HOME", None)
    npa = [
        sys.executable,
        "-c",
        "import sys; from npa_sop_tui.cli.entry import main; sys.exit(main())",
    ]
    done = subprocess.run(
        [
            *npa,
            "soperator",
            "plan",
            "--sandbox",
            "--spec",
            str(ROOT / "assets" / "cpu-minimal.yaml"),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "rel-home" / "sandbox" / "soperator" / "cpu-min").is_dir()
