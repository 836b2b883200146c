"""TUI test helpers: an app factory, a sandbox factory and small Pilot utilities."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

CPU_SPEC = """\
apiVersion: npa.soperator/v0.0.1
name: demo
region: eu-north1
control_plane:
  system: {min_size: 3}
  login: {preset: 16vcpu-64gb}
workers:
  - name: cpu
    platform: cpu-d3
    preset: 8vcpu-32gb
    size: 2
"""


async def wait_for(pilot: Any, predicate: Callable[[], bool], timeout: float = 60.0) -> None:
    """Let the app run until `predicate()` holds; fail with a clear message otherwise."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            stack = [type(s).__name__ for s in pilot.app.screen_stack]
            raise AssertionError(
                f"condition not met within {timeout}s: {predicate} (screens: {stack})"
            )
        await pilot.pause(0.1)


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


@pytest.fixture(autouse=True)
def unexpected_errors(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> Any:
    """Every exception the app turned into an error modal; a test fails on any it did not
    provoke on purpose (`@pytest.mark.unexpected_errors_expected`)."""
    from npa_sop_tui.tui.app import NpaSopApp

    seen: list[tuple[str, BaseException]] = []
    original = NpaSopApp.report_unexpected

    def record(self: NpaSopApp, error: BaseException, *, where: str = "") -> None:
        seen.append((where, error))
        original(self, error, where=where)

    monkeypatch.setattr(NpaSopApp, "report_unexpected", record)
    yield seen
    if not request.node.get_closest_marker("unexpected_errors_expected"):
        assert not seen, f"unexpected errors shown in modals: {seen!r}"
