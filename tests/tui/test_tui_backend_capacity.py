"""The app's deploys take reservation IDs at run time, like the CLI, never from cluster.yaml."""

from __future__ import annotations

import pytest

from npa_sop_tui.errors import UsageError
from npa_sop_tui.lifecycle.steps import environment_of
from npa_sop_tui.tui.backend import Backend, sandbox_backend


def test_app_deploy_options_carry_capacity_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("NPA_CAPACITY_BLOCK_GROUPS", "gpu=capacityblockgroup-abc123")
    for backend in (Backend(), sandbox_backend(sleep_seconds=0)):
        environment = environment_of(backend.lifecycle_options())
        assert environment.settings.capacity == {"gpu": "capacityblockgroup-abc123"}
        assert environment.settings.source("capacity") == "env NPA_CAPACITY_BLOCK_GROUPS"


def test_malformed_capacity_environment_is_a_usage_error_naming_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("NPA_CAPACITY_BLOCK_GROUPS", "no-equals-sign")
    with pytest.raises(UsageError) as caught:
        Backend().lifecycle_options()
    assert "NPA_CAPACITY_BLOCK_GROUPS" in caught.value.render()
