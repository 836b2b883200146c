"""TUI test fixtures: a spec file and a sandbox backend."""

from __future__ import annotations

import re
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


_EMPTY_CELL_RUN = re.compile(r'<rect fill="[^"]*" x="[\d.]+" y="[\d.]+" width="0" [^>]*/>')


@pytest.fixture(autouse=True)
def invisible_runs_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """Snapshots leave out zero-width background runs: a table's line ends with one or not
    depending on when its cache was filled, which no eye can see and a picture must not
    depend on."""
    import textual._doc

    take = textual._doc.take_svg_screenshot

    def taken(*args: Any, **kwargs: Any) -> str:
        return _EMPTY_CELL_RUN.sub("", take(*args, **kwargs))

    monkeypatch.setattr(textual._doc, "take_svg_screenshot", taken)
