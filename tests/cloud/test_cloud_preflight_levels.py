"""Preflight breadth: tenant and project quotas with their level and state, region-keyed
rows, capacity allowances per project, the GPU quota the platform names, and reserved pools
that need a fresh availability entry. Against the local Nebius server (real gRPC)."""

from __future__ import annotations

from dataclasses import replace

from npa_sop_tui.cloud.client import CloudClient
from npa_sop_tui.cloud.model import CapacityAllowance, Quota
from npa_sop_tui.cloud.report_text import render_text
from npa_sop_tui.sandbox.fake_cloud_state import FakeCloudState

from .conftest import PROJECT, REGION
from .test_cloud_preflight import GROUP_ID, gpu_spec, group, preflight

GPU = "compute.instance.gpu.h100"


def rows_of(report: object, resource: str) -> dict[str, object]:
    return {r.level: r for r in report.rows if r.resource == resource}  # type: ignore[attr-defined]


async def test_tenant_and_project_quotas_both_shown_with_their_level(
    cloud: CloudClient, cloud_state: FakeCloudState
) -> None:
    cloud_state.project_quotas = [
        replace(q, limit=12, usage=0) if q.name == GPU else q for q in cloud_state.project_quotas
    ]
    report = (await preflight(cloud, gpu_spec())).report
    gpu = rows_of(report, GPU)
    assert set(gpu) == {"tenant", "project"}
    assert gpu["tenant"].verdict == "ok" and gpu["tenant"].limit == 512  # type: ignore[attr-defined]
    assert gpu["project"].verdict == "short by 4"  # type: ignore[attr-defined]
    assert any(f"project quota {GPU} in {REGION} is short by 4" in w for w in report.warnings)
    text = render_text(report)
    assert "LEVEL" in text and "project" in text and "1 failed" in text
    calls = [m for m, _ in cloud_state.calls if m.endswith("QuotaAllowanceService/List")]
    assert len(calls) == 2  # the tenant's and the project's


async def test_a_frozen_quota_is_a_failed_row(
    cloud: CloudClient, cloud_state: FakeCloudState
) -> None:
    cloud_state.project_quotas = [
        replace(q, state="frozen") if q.name == "compute.instance.count" else q
        for q in cloud_state.project_quotas
    ]
    report = (await preflight(cloud, gpu_spec())).report
    row = rows_of(report, "compute.instance.count")["project"]
    assert row.verdict == "frozen" and row.failed  # type: ignore[attr-defined]
    assert any("project quota compute.instance.count" in w and "frozen" in w
               for w in report.warnings)  # fmt: skip
    assert "1 failed" in report.summary()


async def test_quotas_of_another_region_do_not_count(
    cloud: CloudClient, cloud_state: FakeCloudState
) -> None:
    """Rows are keyed by name and region: the same name elsewhere is another allowance."""
    cloud_state.quotas = [q for q in cloud_state.quotas if q.name != GPU] + [
        Quota(GPU, "us-central1", 1000, 0, "active"),
    ]
    cloud_state.project_quotas = [q for q in cloud_state.project_quotas if q.name != GPU]
    report = (await preflight(cloud, gpu_spec())).report
    assert rows_of(report, GPU)["tenant"].verdict == "unknown"  # type: ignore[attr-defined]


async def test_gpu_quota_name_comes_from_the_platform(
    cloud: CloudClient, cloud_state: FakeCloudState
) -> None:
    named = "compute.instance.gpu.h100-sxm-special"
    cloud_state.platforms = [
        replace(p, gpu_quota=named) if p.name == "gpu-h100-sxm" else p
        for p in cloud_state.platforms
    ]
    cloud_state.quotas.append(Quota(named, REGION, 64, 0, "active"))
    report = (await preflight(cloud, gpu_spec())).report
    assert rows_of(report, named)["tenant"].needed == 16  # type: ignore[attr-defined]
    assert not rows_of(report, GPU)


def reserved_state(cloud_state: FakeCloudState, **allowance: object) -> None:
    cloud_state.groups = [group()]
    base = dict(id="capacityallowance-1", project_id=PROJECT, group_id=GROUP_ID, limit=16,
                usage=0, state="active")  # fmt: skip
    cloud_state.allowances = [CapacityAllowance(**{**base, **allowance})]  # type: ignore[arg-type]


async def test_capacity_allowances_are_shown_per_project(
    cloud: CloudClient, cloud_state: FakeCloudState
) -> None:
    reserved_state(cloud_state)
    report = (await preflight(cloud, gpu_spec(capacity_block_group_name="h100-res"))).report
    assert not report.blocked, report.problems
    (row,) = report.allowances
    assert (row.pool, row.group, row.limit, row.gpus_needed, row.verdict) == (
        "gpu", "h100-res", 16, 16, "ok",
    )  # fmt: skip
    assert "Capacity allowances" in render_text(report) and GROUP_ID not in render_text(report)


async def test_a_short_or_inactive_allowance_blocks(
    cloud: CloudClient, cloud_state: FakeCloudState
) -> None:
    reserved_state(cloud_state, usage=8)
    report = (await preflight(cloud, gpu_spec(capacity_block_group_name="h100-res"))).report
    assert report.blocked and report.allowances[0].verdict == "short"
    assert "may use 8 GPU(s) of group 'h100-res'" in report.problems[0].message
    reserved_state(cloud_state, state="provisioning")
    report = (await preflight(cloud, gpu_spec(capacity_block_group_name="h100-res"))).report
    assert report.blocked and report.allowances[0].verdict == "provisioning"


async def test_reserved_pool_without_a_fresh_availability_entry_fails_closed(
    cloud: CloudClient, cloud_state: FakeCloudState
) -> None:
    reserved_state(cloud_state)
    cloud_state.advice = [
        replace(a, reserved=replace(a.reserved, data_state="stale"))  # type: ignore[arg-type]
        if a.platform == "gpu-h100-sxm" and a.reserved is not None else a
        for a in cloud_state.advice
    ]  # fmt: skip
    report = (await preflight(cloud, gpu_spec(capacity_block_group_name="h100-res"))).report
    assert report.blocked
    (problem,) = report.problems
    assert "cannot be confirmed" in problem.message and "none fresh" in problem.message
    assert "resource-advice list" in problem.hint
    assert report.reservations[0].verdict == "no fresh availability"
