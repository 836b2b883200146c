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
    # Commands run in-process may enter the sandbox home; set-then-delete makes monkeypatch
    # restore the variable's original state (usually absent) after the test.
    monkeypatch.setenv("NPA_SANDBOX_HOME", "")
    monkeypatch.delenv("NPA_SANDBOX_HOME")
    return home


@pytest.fixture
def sandbox_in_home(npa_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`--sandbox` commands keep their state in the test's npa home itself.

    Normally the sandbox has its own home (`<home>/sandbox`); tests that look at the files a
    sandbox run leaves behind use this to find them where they always were.
    """
    monkeypatch.setenv("NPA_SANDBOX_HOME", str(npa_home))
    return npa_home
