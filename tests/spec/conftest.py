"""Fixtures for the spec-core tests."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture(autouse=True)
def _no_ambient_keys(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Tests never see the machine's ~/.ssh keys or npa variables."""
    for var in (
        "NPA_SOPERATOR_ROOT_LOGIN_SSH_PUBLIC_KEY",
        "NPA_SOPERATOR_ROOT_LOGIN_SSH_PUBLIC_KEY_FILE",
        "NPA_SSH_PUBLIC_KEY",
        "NPA_CAPACITY_BLOCK_GROUPS",
        "NPA_REGION",
        "NPA_TENANT_ID",
        "NPA_PROJECT_ID",
        "NPA_SUBNET_ID",
    ):
        monkeypatch.delenv(var, raising=False)
    home = tmp_path / "user-home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
