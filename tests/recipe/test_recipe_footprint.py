"""What the recipe creates for a spec: a GB300 cluster on a recipe that puts the login pods on
the workers (`slurm_login_on_worker_nodes = true`) has no login node group, so none is
counted against the quotas, priced or planned; every other cluster has one."""

from __future__ import annotations

from typing import Any

from npa_sop_tui.cloud.needs import price_requests, quota_needs
from npa_sop_tui.recipe.footprint import has_login_node_group, node_groups
from npa_sop_tui.spec.model import spec_from_mapping

GB300_POOL = {
    "name": "gb",
    "platform": "gpu-gb300",
    "preset": "4gpu-112vcpu-800gb",
    "fabric": "fabric-3",
    "size": 18,
    "local_nvme_device_count": 4,
    "local_nvme_device_gb": 3840,
}
H200_POOL = {"name": "gpu", "platform": "gpu-h200-sxm", "preset": "8gpu-128vcpu-1600gb",
             "fabric": "fabric-3", "size": 1}  # fmt: skip


def spec(version: str, pool: dict[str, Any]) -> Any:
    data = {"name": "fp", "region": "eu-north1", "slurm_operator_version": version,
            "use_default_apparmor_profile": True, "workers": [pool]}  # fmt: skip
    return spec_from_mapping(data)


def test_gb300_on_4_1_13_has_no_login_node_group_to_count_price_or_plan() -> None:
    gb300 = spec("4.1.13", GB300_POOL)
    assert not has_login_node_group(gb300)
    assert [g.role for g in node_groups(gb300)] == ["system", "controller", "worker"]
    assert not [r for r in price_requests(gb300) if r.key.startswith("control-plane/login")]
    instances = next(n for n in quota_needs(gb300) if n.resource == "compute.instance.count")
    assert "login" not in instances.why
    # system (min size) + controller + the 18 GB300 workers
    assert instances.amount == gb300.control_plane.system.min_size + 1 + 18


def test_other_clusters_keep_their_login_node_group() -> None:
    for other in (spec("4.1.13", H200_POOL), spec("4.1.6", H200_POOL)):
        assert has_login_node_group(other)
        assert [g.role for g in node_groups(other)] == ["system", "controller", "login", "worker"]
        priced = {r.key for r in price_requests(other)}
        assert {"control-plane/login", "control-plane/login/disks"} <= priced
        instances = next(n for n in quota_needs(other) if n.resource == "compute.instance.count")
        assert "login ×1" in instances.why
