"""lifecycle/destroy.py through the CLI with real Terraform: a record is data, so a copied
home, a crafted record or a recorded environment cannot steer Terraform."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.terraform, pytest.mark.slow]


SMALL = """\
apiVersion: npa.soperator/v0.0.1
name: {name}
workers:
  - name: cpu
    size: 1
"""


def _deployed(
    name: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> Path:
    """A sandbox cluster `name` deployed through the CLI; returns its installation folder."""
    from testkit.sandbox_cli import deploy_in_sandbox

    deploy_in_sandbox(SMALL.format(name=name), tmp_path, monkeypatch, capsys)
    return Path(json.loads(_read_record(tmp_path / "npa-home", name))["install_dir"])


def _read_record(home: Path, name: str) -> str:
    return (home / "sandbox" / "soperator" / name / "inventory.json").read_text()


def test_a_copied_homes_destroy_leaves_the_original_clusters_state_alone(
    tmp_path: Path, npa_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    """Defect: a copied home's `destroy` destroyed the original home's Terraform state (the
    copy's inventory still names the original's installation folder)."""
    from npa_sop_tui.cli.entry import main

    install = _deployed("orig", tmp_path, monkeypatch, capsys)
    state = install / "terraform.tfstate"
    before = state.read_bytes()
    copy = tmp_path / "copied-home"
    shutil.copytree(npa_home, copy, symlinks=True)
    monkeypatch.setenv("NPA_HOME", str(copy))
    monkeypatch.delenv("NPA_SANDBOX_HOME")  # entered by the deploy, in this process
    code = main(["soperator", "destroy", "--name", "orig", "--sandbox", "--yes"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"its record names the installation folder {install}, which npa does not use" in err
    assert "NPA_HOME" in err or "--terraform-dir" in err
    assert "Traceback" not in err
    assert state.read_bytes() == before  # the original cluster's state, untouched
    assert json.loads(_read_record(npa_home, "orig"))["state"] == "deployed"
    assert json.loads(_read_record(copy, "orig"))["state"] == "deployed"


def test_a_crafted_record_cannot_point_terraform_at_another_folder(
    tmp_path: Path, npa_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    """Defect: a crafted inventory.json could point Terraform at any folder: here one whose
    Terraform would run a command. Refused before anything runs (exit 2)."""
    from npa_sop_tui.cli.entry import main
    from npa_sop_tui.sandbox.local_terraform import STANDIN_RECIPE

    _deployed("craft", tmp_path, monkeypatch, capsys)
    marker = tmp_path / "crafted-code-ran"
    evil = tmp_path / "evil"
    shutil.copytree(STANDIN_RECIPE / "soperator", evil / "soperator")
    target = evil / "soperator" / "installations" / "craft"
    shutil.copytree(evil / "soperator" / "installations" / "example", target)
    (target / "pwn.tf").write_text(
        'resource "null_resource" "pwn" {\n'
        f'  provisioner "local-exec" {{ command = "touch {marker}" }}\n}}\n'
    )
    record = npa_home / "sandbox" / "soperator" / "craft" / "inventory.json"
    doc = json.loads(record.read_text())
    doc["install_dir"] = str(target)
    doc["recipe"]["path"] = str(evil / "soperator")
    record.write_text(json.dumps(doc))
    for command in (["destroy", "--name", "craft", "--sandbox", "--yes"],):
        code = main(["soperator", *command])
        err = capsys.readouterr().err
        assert code == 2, err
        assert f"names the installation folder {target}" in err and "Traceback" not in err
    assert not marker.exists()


WRAPPER = """#!/bin/sh
env > "{dump}/env-$1"
exec {real} "$@"
"""


def test_a_recorded_environment_sets_nothing_but_the_recipes_variables(
    tmp_path: Path, npa_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    """Defect: `.npa-env.json` set any variable for Terraform (`LD_PRELOAD`, `TF_LOG_PATH`
    outside the home): its values were added after the allow-list. A real Terraform destroy
    (through a wrapper that records the environment it was given) sees only the recipe's
    TF_VAR_* names from it, and writes no log where the file said."""
    from npa_sop_tui.cli.entry import main
    from npa_sop_tui.sandbox.local_terraform import terraform_binary

    dump = tmp_path / "env-dumps"
    dump.mkdir()
    wrapper = tmp_path / "terraform"
    wrapper.write_text(WRAPPER.format(dump=dump, real=terraform_binary()))
    wrapper.chmod(0o755)
    install = _deployed("envrec", tmp_path, monkeypatch, capsys)
    outside_log = tmp_path / "outside" / "terraform-trace.log"
    recorded = json.loads((install / ".npa-env.json").read_text())
    recorded.update(
        {
            "TF_LOG": "TRACE",
            "TF_LOG_PATH": str(outside_log),
            "LD_PRELOAD": str(tmp_path / "evil.so"),
            "BASH_ENV": str(tmp_path / "evil.sh"),
            "TF_VAR_undeclared": "x",
        }
    )
    (install / ".npa-env.json").write_text(json.dumps(recorded))
    monkeypatch.setenv("NPA_TERRAFORM_BIN", str(wrapper))
    code = main(["soperator", "destroy", "--name", "envrec", "--sandbox", "--yes"])
    err = capsys.readouterr().err
    assert code == 0, err
    seen = (dump / "env-destroy").read_text()
    for name in ("TF_LOG=", "TF_LOG_PATH=", "LD_PRELOAD=", "BASH_ENV=", "TF_VAR_undeclared="):
        assert f"\n{name}" not in f"\n{seen}", name
    assert not outside_log.exists() and not outside_log.parent.exists()
