"""Reserved pools against their capacity block groups (cloud/reservations.py), through the
preflight on the local server speaking Nebius's gRPC protocol."""

from __future__ import annotations

from typing import Any

from npa_sop_tui.cloud.client import CloudClient
from npa_sop_tui.cloud.model import Availability, CapacityBlockGroup
from npa_sop_tui.cloud.preflight import run_preflight
from npa_sop_tui.sandbox.fake_cloud_state import FakeCloudState
from npa_sop_tui.spec.model import SoperatorSpec, spec_from_mapping

from .conftest import PROJECT, REGION, TENANT

GROUP_ID = "capacityblockgroup-e2e0000000007"


def _spec() -> SoperatorSpec:
    gpu = {"name": "gpu", "platform": "gpu-h100-sxm", "preset": "8gpu-128vcpu-1600gb",
           "fabric": "fabric-3", "size": 2, "capacity_block_group": GROUP_ID}  # fmt: skip
    return spec_from_mapping(
        {"apiVersion": "npa.soperator/v0.0.1", "name": "held", "region": REGION,
         "workers": [gpu, {"name": "cpu", "size": 1}]}
    )  # fmt: skip


def _full_group(cloud_state: FakeCloudState) -> None:
    """A 16-GPU group whose 16 GPUs are in use, with a fresh availability entry that
    still shows the two nodes (they are this cluster's own)."""
    cloud_state.groups = [
        CapacityBlockGroup(
            id=GROUP_ID,
            name="h100-res",
            region=REGION,
            platform="gpu-h100-sxm",
            fabric="fabric-3",
            state="active",
            limit=16,
            usage=16,
        )
    ]
    held = Availability("fresh", 2, 8, "high")
    cloud_state.advice = [
        a.__class__(**{**a.__dict__, "reserved": held}) if a.platform == "gpu-h100-sxm" else a
        for a in cloud_state.advice
    ]


async def _preflight(cloud: CloudClient, **kw: Any) -> Any:
    return await run_preflight(
        _spec(), cloud, tenant_id=TENANT, project_id=PROJECT, region=REGION, **kw
    )


async def test_a_full_group_is_short_for_a_new_cluster(
    cloud: CloudClient, cloud_state: FakeCloudState
) -> None:
    _full_group(cloud_state)
    report = (await _preflight(cloud)).report
    assert report.reservations[0].verdict == "short"
    assert any("0 free GPU(s)" in p.message for p in report.problems)


async def test_redeploy_credits_the_gpus_the_cluster_already_holds(
    cloud: CloudClient, cloud_state: FakeCloudState
) -> None:
    """Protects the `in_use` credit: re-deploying a cluster whose own nodes fill its group
    must not be refused for lack of the GPUs it already has."""
    _full_group(cloud_state)
    report = (await _preflight(cloud, in_use={"gpu": 16})).report
    assert report.reservations[0].verdict == "ok", report.problems
    assert not report.problems
    # the credit is the cluster's own holding, no more: growing the pool is still short
    partly = (await _preflight(cloud, in_use={"gpu": 8})).report
    assert partly.reservations[0].verdict == "short"
