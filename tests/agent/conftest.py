"""Fixtures for the agent tools, MCP and workflow tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _sandbox_state_in_home(sandbox_in_home: Path) -> Path:
    """Sandbox calls keep their state in the test's npa home, where the tests look."""
    return sandbox_in_home
