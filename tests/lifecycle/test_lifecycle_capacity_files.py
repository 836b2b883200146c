"""Capacity block group secrets and rollbacks, with real Terraform on the stand-in recipe
through the headless CLI:

- a capacity block group ID reaches only the 0600 `terraform.tfvars.json`; Terraform's state
  and backups (which hold every variable value with the real recipe) are 0600 too;
- `plan` and a refused `deploy` leave the installation's variables and the deployed spec as
  they were;
- `plan` takes `--capacity-block-group`, and `deploy` honours `NPA_CAPACITY_BLOCK_GROUPS`.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from npa_sop_tui.cli.entry import main

pytestmark = [
    pytest.mark.terraform,
    pytest.mark.slow,
    pytest.mark.usefixtures("sandbox_in_home"),
]

ROOT_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEdXlFusLvYjeeK1rVVinKzN6pzzcRQunPAvc+y2YBhJ test"
SECRET = "capacityblockgroup-REVIEWsecret42"

SPEC = f"""\
apiVersion: npa.soperator/v0.0.1
name: rsec
region: us-central1
root_login_ssh_public_key: "{ROOT_KEY}"
workers:
  - name: gpu
    platform: gpu-b200-sxm
    preset: 8gpu-160vcpu-1792gb
    size: 1
    fabric: us-central1-b
  - name: cpu
    platform: cpu-d3
    preset: 8vcpu-32gb
"""


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_capacity_secret_files_and_rollback(
    npa_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("TF_VAR_standin_sleep_seconds", "0")
    spec = tmp_path / "cluster.yaml"
    spec.write_text(SPEC)
    cap = ["--capacity-block-group", f"gpu={SECRET}"]

    code, out, err = _cli(
        ["soperator", "deploy", "--spec", str(spec), "--sandbox", "--yes", "-o", "json", *cap],
        capsys,
    )
    assert code == 0, err
    assert SECRET not in out and SECRET not in err
    assert json.loads(out.splitlines()[-1])["ok"] is True

    cluster = npa_home / "soperator" / "rsec"
    install = Path(json.loads(out.splitlines()[-1])["result"]["install_dir"])
    tfvars = install / "terraform.tfvars.json"
    holders = sorted(
        p for p in npa_home.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()
    )
    assert holders == [tfvars]
    assert _mode(tfvars) == 0o600
    state_files = [install / "terraform.tfstate", install / "terraform.tfstate.backup"]
    private = [
        *state_files,
        install / ".npa-env.json",
        cluster / "inventory.json",
        cluster / "spec.yaml",
        *(cluster / "operations").glob("*.ndjson"),
    ]
    for path in private:
        assert path.is_file(), path
        assert _mode(path) & 0o077 == 0, f"{path} is {oct(_mode(path))}"

    tfvars_before = tfvars.read_bytes()
    spec_before = (cluster / "spec.yaml").read_bytes()

    # `plan` of a different spec (and without the reservation) changes no local file.
    changed = tmp_path / "changed.yaml"
    changed.write_text(SPEC.replace("preset: 8vcpu-32gb", "preset: 16vcpu-64gb"))
    code, out, err = _cli(["soperator", "plan", "--spec", str(changed), "--sandbox"], capsys)
    assert code == 0, err
    assert "cpu: replace" in out
    assert tfvars.read_bytes() == tfvars_before
    assert (cluster / "spec.yaml").read_bytes() == spec_before

    # A deploy refused as destructive applied nothing, so it leaves the files as they were.
    code, out, err = _cli(
        ["soperator", "deploy", "--spec", str(changed), "--sandbox", "--yes", *cap], capsys
    )
    assert code == 1 and "replace" in err
    assert tfvars.read_bytes() == tfvars_before
    assert (cluster / "spec.yaml").read_bytes() == spec_before
    assert _mode(tfvars) == 0o600

    # State left world-readable by an older version is made private on the next run, and
    # `plan` accepts the run-time reservation (same plan as deploy: nothing to change but
    # the kube-context step the recipe replaces on every apply).
    for path in state_files:
        path.chmod(0o644)
    code, out, err = _cli(
        ["soperator", "plan", "--spec", str(spec), "--sandbox", "-o", "json", *cap], capsys
    )
    assert code == 0, err
    changes = json.loads(out.splitlines()[-1])["result"]["changes"]
    assert (changes["add"], changes["change"], changes["remove"]) == (1, 0, 1)
    assert changes["destructive"] == []
    for path in state_files:
        assert _mode(path) == 0o600, path

    # NPA_CAPACITY_BLOCK_GROUPS is a run-time source for deploy too: without it the GPU node
    # group would lose its reservation (a replacement, refused); with it nothing changes.
    monkeypatch.setenv("NPA_CAPACITY_BLOCK_GROUPS", f"gpu={SECRET}")
    code, out, err = _cli(
        ["soperator", "deploy", "--spec", str(spec), "--sandbox", "--yes"], capsys
    )
    assert code == 0, err
    assert SECRET not in out and SECRET not in err
    assert SECRET.encode() in tfvars.read_bytes()
