"""Fixtures for the cloud tests: the local Nebius gRPC server and a client connected to it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from npa_sop_tui.cloud.client import CloudClient, CloudSettings, connect
from npa_sop_tui.sandbox.fake_cloud_state import FakeCloudState, default_state
from npa_sop_tui.sandbox.fake_nebius import FakeNebius

TENANT = "tenant-e2e"
PROJECT = "project-e2e"
REGION = "eu-north1"
TOKEN = "test-token-not-a-secret"


@pytest.fixture
def cloud_state() -> FakeCloudState:
    state = default_state(region=REGION, tenant_id=TENANT, project_id=PROJECT)
    state.token = TOKEN
    return state


@pytest.fixture
def fake_nebius(cloud_state: FakeCloudState) -> Iterator[FakeNebius]:
    with FakeNebius(cloud_state) as server:
        yield server


@pytest.fixture
def cloud_settings(fake_nebius: FakeNebius, monkeypatch: pytest.MonkeyPatch) -> CloudSettings:
    monkeypatch.setenv("NEBIUS_IAM_TOKEN", TOKEN)
    return CloudSettings(endpoint=fake_nebius.endpoint, timeout=10)


@pytest.fixture
async def cloud(cloud_settings: CloudSettings) -> AsyncIterator[CloudClient]:
    client = connect(cloud_settings)
    try:
        yield client
    finally:
        await client.close()
