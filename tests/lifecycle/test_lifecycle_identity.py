"""Deploy-time identity: missing values are named before anything is fetched or run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from npa_sop_tui.errors import NpaError, UsageError
from npa_sop_tui.lifecycle import api as lifecycle


async def test_missing_identity_is_reported_before_cloning_the_recipe(
    make_spec: Any, npa_home: Path
) -> None:
    with pytest.raises(UsageError) as caught:
        await lifecycle.deploy(make_spec("noid"), options=lifecycle.LifecycleOptions())
    text = caught.value.render()
    for field in ("tenant_id", "project_id", "subnet_id"):
        assert field in text
    # Nothing was cloned, installed, locked or logged for a run that could never succeed.
    assert not (npa_home / "soperator").exists()


async def test_identity_from_env_passes_the_precheck(
    make_spec: Any, monkeypatch: pytest.MonkeyPatch, npa_home: Path
) -> None:
    monkeypatch.setenv("NPA_REGION", "eu-north1")
    monkeypatch.setenv("NPA_TENANT_ID", "tenant-x")
    monkeypatch.setenv("NPA_PROJECT_ID", "project-x")
    monkeypatch.setenv("NPA_SUBNET_ID", "vpcsubnet-x")
    # With identity complete, the next step is fetching the recipe; point it at a git URL
    # that cannot exist so the test stays offline and shows the precheck let it through.
    (npa_home / "config.yaml").write_text(f"recipe:\n  url: {npa_home / 'no-such-repo'}\n")
    with pytest.raises(NpaError) as caught:
        await lifecycle.deploy(make_spec("envid"), options=lifecycle.LifecycleOptions())
    assert "identity is incomplete" not in caught.value.render()
    assert "could not fetch the recipe" in caught.value.render()


@pytest.mark.parametrize("command", ["plan", "deploy"])
def test_cli_without_identity_suggests_the_sandbox_and_leaves_nothing(
    command: str, npa_home: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from npa_sop_tui.cli.entry import main

    spec = Path(__file__).resolve().parents[2] / "assets" / "cpu-minimal.yaml"
    argv = ["soperator", command, "--spec", str(spec), *(["--yes"] if command == "deploy" else [])]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "tenant_id is not set" in err and "add --sandbox" in err
    assert list(npa_home.iterdir()) == []  # no lock, no event log, no cluster folder
    # a terraform_dir that is a real recipe checkout is checked just as early
    real = tmp_path / "nebius-solutions-library"
    (real / "soperator").mkdir(parents=True)
    assert main([*argv, "--terraform-dir", str(real)]) == 2
    assert list(npa_home.iterdir()) == []
