"""Fixtures for the SDK tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(autouse=True)
def _sandbox_state_in_home(sandbox_in_home: Path) -> Path:
    """Sandbox calls keep their state in the test's npa home, where the tests look."""
    return sandbox_in_home


@pytest.fixture
def identity() -> Any:
    from npa_sop_tui.home.config import Identity

    return Identity(
        region="eu-north1",
        tenant_id="tenant-e00sdk",
        project_id="project-e00sdk",
        subnet_id="vpcsubnet-e00sdk",
    )
