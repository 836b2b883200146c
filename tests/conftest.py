"""Fixtures shared by every test area."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def npa_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own npa home; the real ~/.npa is never touched."""
    home = tmp_path / "npa-home"
    home.mkdir()
    monkeypatch.setenv("NPA_HOME", str(home))
    return home
