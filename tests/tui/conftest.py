"""TUI test fixtures: a spec file and a sandbox backend."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from testkit.tui import CPU_SPEC


@pytest.fixture
def spec_file(tmp_path: Path) -> Path:
    path = tmp_path / "cluster.yaml"
    path.write_text(CPU_SPEC)
    return path


@pytest.fixture
def sandbox_backend(npa_home: Path) -> Any:
    """A sandbox backend under the test's NPA_HOME, with zero-second stand-in resources."""
    from npa_sop_tui.tui.backend import sandbox_backend

    return sandbox_backend(sleep_seconds=0)
