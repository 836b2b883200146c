"""The sandbox's simulated cloud: everything passes by default; each scenario breaks one
thing, read through the real client over the real gRPC protocol."""

from __future__ import annotations

import pytest

from npa_sop_tui.cloud.client import CloudReads
from npa_sop_tui.cloud.preflight import run_preflight
from npa_sop_tui.home.config import Identity
from npa_sop_tui.sandbox.cloud import simulated_cloud
from npa_sop_tui.spec.model import spec_from_mapping

IDENTITY = Identity(region="eu-north1", tenant_id="tenant-s", project_id="project-s")
SPEC = spec_from_mapping(
    {"apiVersion": "npa.soperator/v0.0.1", "name": "scn",
     "workers": [{"name": "gpu", "platform": "gpu-h100-sxm", "preset": "8gpu-128vcpu-1600gb",
                  "fabric": "fabric-3", "size": 2, "capacity_block_group_name": "h100-res"},
                 {"name": "spot", "platform": "gpu-h100-sxm", "preset": "8gpu-128vcpu-1600gb",
                  "fabric": "fabric-3", "size": 1, "preemptible": True}]}
)  # fmt: skip


async def preflight() -> object:
    reads = CloudReads(spec=SPEC, identity=IDENTITY)
    async with simulated_cloud(reads) as client:
        return (
            await run_preflight(
                SPEC, client, tenant_id="tenant-s", project_id="project-s", region="eu-north1"
            )
        ).report


async def test_default_sandbox_cloud_passes_everything() -> None:
    report = await preflight()
    assert not report.blocked and report.warnings == []  # type: ignore[attr-defined]
    assert report.reservations[0].verdict == "ok"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("scenario", "blocked", "expect"),
    [
        ("quota-short", False, "compute.instance.gpu.h100 in eu-north1 is short by"),
        ("quota-hidden", False, "compute.instance.count in eu-north1: its limit is not visible"),
        ("capacity-block-missing", True, "does not exist in tenant tenant-s"),
    ],
)
async def test_scenarios_break_one_thing(
    scenario: str, blocked: bool, expect: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NPA_SANDBOX_SCENARIO", scenario)
    report = await preflight()
    assert report.blocked is blocked  # type: ignore[attr-defined]
    said = [*report.warnings, *(p.message for p in report.problems)]  # type: ignore[attr-defined]
    assert any(expect in line for line in said), said
