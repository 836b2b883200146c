"""A project's tenant through IAM v2; IAM v1 only as a fallback before its sunset day, judged
by the client's clock (injected here)."""

from __future__ import annotations

import datetime as dt

import pytest

from npa_sop_tui.cloud.client import CloudClient
from npa_sop_tui.cloud.iam_projects import V1_SUNSET, v1_fallback_open
from npa_sop_tui.cloud.nebius_calls import ServiceMissing
from npa_sop_tui.sandbox.fake_cloud_state import FakeCloudState
from npa_sop_tui.sandbox.fake_nebius import FakeNebius

from .conftest import PROJECT, TENANT


def _iam_calls(state: FakeCloudState) -> list[str]:
    return [m for m, _ in state.calls if "ProjectService" in m]


async def test_the_tenant_is_read_through_iam_v2(
    cloud: CloudClient, cloud_state: FakeCloudState
) -> None:
    assert await cloud.project_tenant(PROJECT) == TENANT
    assert await cloud.project_tenant("project-nobody") is None  # NOT_FOUND: no such project
    assert _iam_calls(cloud_state) == ["iam.v2.ProjectService/Get"] * 2


def test_the_fallback_is_open_until_the_day_before_the_sunset() -> None:
    assert dt.date(2026, 12, 16) == V1_SUNSET
    assert v1_fallback_open(dt.date(2026, 12, 15))
    assert not v1_fallback_open(dt.date(2026, 12, 16))
    assert not v1_fallback_open(dt.date(2027, 1, 1))


async def test_an_address_without_v2_is_asked_through_v1_before_the_sunset(
    cloud: CloudClient, cloud_state: FakeCloudState
) -> None:
    cloud_state.iam_v2 = False
    cloud.today = lambda: dt.date(2026, 12, 15)  # type: ignore[attr-defined]
    assert await cloud.project_tenant(PROJECT) == TENANT
    assert _iam_calls(cloud_state) == ["iam.v2.ProjectService/Get", "iam.v1.ProjectService/Get"]


@pytest.mark.parametrize("today", [dt.date(2026, 12, 16), dt.date(2027, 3, 1)])
async def test_from_the_sunset_on_v1_is_never_called_and_the_failure_is_said(
    today: dt.date, cloud: CloudClient, cloud_state: FakeCloudState, fake_nebius: FakeNebius
) -> None:
    cloud_state.iam_v2 = False
    cloud.today = lambda: today  # type: ignore[attr-defined]
    with pytest.raises(ServiceMissing) as info:
        await cloud.project_tenant(PROJECT)
    message = info.value.message
    assert f"at {fake_nebius.addresses['cpl.iam']} failed: UNIMPLEMENTED" in message
    assert "retired on 2026-12-16" in message and "token in NEBIUS_IAM_TOKEN" in message
    assert info.value.hint and "set tenant_id" in info.value.hint
    assert _iam_calls(cloud_state) == ["iam.v2.ProjectService/Get"]
