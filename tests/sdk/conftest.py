"""Fixtures for the SDK / tools / workflow / fleet tests."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No ambient identity, keys or Terraform config; the stand-in never sleeps."""
    for var in (
        "NPA_SOPERATOR_ROOT_LOGIN_SSH_PUBLIC_KEY",
        "NPA_SOPERATOR_ROOT_LOGIN_SSH_PUBLIC_KEY_FILE",
        "NPA_SSH_PUBLIC_KEY",
        "NPA_REGION",
        "NPA_TENANT_ID",
        "NPA_PROJECT_ID",
        "NPA_SUBNET_ID",
    ):
        monkeypatch.delenv(var, raising=False)
    home = tmp_path / "user-home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("TF_VAR_standin_sleep_seconds", "0")


@pytest.fixture(autouse=True)
def _sandbox_state_in_home(sandbox_in_home: Path) -> Path:
    """Sandbox calls keep their state in the test's npa home, where the tests look."""
    return sandbox_in_home


@pytest.fixture
def identity() -> Any:
    from npa_sop_tui.config import Identity

    return Identity(
        region="eu-north1",
        tenant_id="tenant-e00sdk",
        project_id="project-e00sdk",
        subnet_id="vpcsubnet-e00sdk",
    )
