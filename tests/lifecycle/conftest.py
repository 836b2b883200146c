"""Helpers for the lifecycle tests: a sandbox identity, specs, and an event recorder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from npa_sop_tui.home.config import Identity

from testkit.lifecycle import IDENTITY, ROOT_KEY, Recorder, make_spec, options

__all__ = ["IDENTITY", "ROOT_KEY", "Recorder", "make_spec", "options"]


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    yield Recorder()


@pytest.fixture(name="make_spec")
def make_spec_fixture() -> Any:
    return make_spec


@pytest.fixture(name="sandbox_options")
def sandbox_options_fixture(sandbox_in_home: Path) -> Any:
    """`options(...)`; sandbox operations keep their state in the test's npa home itself."""
    return options


@pytest.fixture(name="identity")
def identity_fixture() -> Identity:
    return IDENTITY
