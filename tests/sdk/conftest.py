"""Fixtures for the SDK / tools / workflow tests."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture
def identity() -> Any:
    from npa_sop_tui.config import Identity

    return Identity(
        region="eu-north1",
        tenant_id="tenant-e00sdk",
        project_id="project-e00sdk",
        subnet_id="vpcsubnet-e00sdk",
    )
