"""What the simulated Nebius cloud holds: quotas, reservations, platforms, prices, clusters.

`fake_nebius.FakeNebius` serves this state over the real gRPC protocol. `default_state()`
answers every call so that every preflight check passes; `seed_for_spec()` adds the
reservations a spec's reserved pools name; `apply_scenario()` breaks one thing on purpose so
a newcomer can see each failure path in the sandbox:

    NPA_SANDBOX_SCENARIO=quota-short,quota-hidden,capacity-block-missing,gpu-check-fail,
                         destroy-leftover

Prices are invented (deterministic, per vCPU and GPU); they are labelled as the sandbox's.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

from npa_sop_tui.cloud.model import (
    Availability,
    CapacityAllowance,
    CapacityBlockGroup,
    CloudResource,
    Filesystem,
    Mk8sCluster,
    NodeGroup,
    PlatformOffer,
    Quota,
    ResourceAdvice,
    WhoAmI,
)
from npa_sop_tui.sandbox.fake_access_keys import FakeAccessKeys
from npa_sop_tui.sandbox.nebius_provider.filesystem import filesystem_id

SCENARIO_ENV = "NPA_SANDBOX_SCENARIO"
SCENARIOS = (
    "quota-short",
    "quota-hidden",
    "capacity-block-missing",
    "gpu-check-fail",
    "destroy-leftover",
)
GIB = 1024**3
# Quota names the preflight reads (see cloud/needs.py), with generous sandbox limits.
_DEFAULT_LIMITS = {
    "compute.instance.count": 500,
    "compute.instance.non-gpu.vcpu": 20_000,
    "compute.disk.count": 2_000,
    "compute.disk.size.network-ssd": 500_000 * GIB,
    "compute.disk.size.network-ssd-io-m3": 500_000 * GIB,
    "compute.disk.size.network-ssd-non-replicated": 500_000 * GIB,
    "compute.filesystem.count": 50,
    "compute.filesystem.size.network-ssd": 200_000 * GIB,
    "compute.gpucluster.count": 20,
    "mk8s.cluster.count": 10,
    "vpc.allocation.count": 2_000,
}
_DEFAULT_GPU_LIMIT = 512
_USD_PER_VCPU_HOUR = Decimal("0.012")
_USD_PER_GPU_HOUR = Decimal("2.95")
_PREEMPTIBLE_FACTOR = Decimal("0.45")
_USD_PER_GIB_HOUR = Decimal("0.0001")


def scenario_from_env(env: Mapping[str, str] | None = None) -> frozenset[str]:
    """The sandbox scenario switches in `$NPA_SANDBOX_SCENARIO` (unknown names are ignored
    with a note in the docs; a typo must not break the sandbox)."""
    env = os.environ if env is None else env
    raw = env.get(SCENARIO_ENV, "")
    return frozenset(p.strip() for p in raw.split(",") if p.strip() in SCENARIOS)


@dataclass
class FakeCloudState:
    tenant_id: str
    project_id: str
    region: str
    quotas: list[Quota] = field(default_factory=list)  # the tenant's allowances
    # The project's own allowances (a share of the tenant's; Nebius lists them under the
    # project's ID): by default the tenant's with the same names and lower limits.
    project_quotas: list[Quota] = field(default_factory=list)
    groups: list[CapacityBlockGroup] = field(default_factory=list)
    allowances: list[CapacityAllowance] = field(default_factory=list)
    subnets: list[tuple[str, str]] = field(default_factory=list)  # (id, name) in the project
    advice: list[ResourceAdvice] = field(default_factory=list)
    platforms: list[PlatformOffer] = field(default_factory=list)
    clusters: dict[str, Mk8sCluster] = field(default_factory=dict)
    node_groups: list[NodeGroup] = field(default_factory=list)
    filesystems: dict[str, Filesystem] = field(default_factory=dict)
    # the spec the API keeps per filesystem ID (fake_filesystems.py); one without a spec
    # reads as a NETWORK_SSD of unknown size
    filesystem_specs: dict[str, dict[str, Any]] = field(default_factory=dict)
    # VPC allocations, GPU clusters and buckets by ID (destroy verification reads them)
    others: dict[str, CloudResource] = field(default_factory=dict)
    profile: WhoAmI = field(default_factory=lambda: WhoAmI("user", "useraccount-sandbox"))
    # Behaviour for tests: seconds to stall a method, a status code to fail it with, the
    # bearer token to require (None accepts any), the largest page a listing returns.
    delays: dict[str, float] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    token: str | None = None
    max_page: int = 1000
    iam_v2: bool = True  # False: the IAM address predates v2 (answers UNIMPLEMENTED)
    # Sign-in: service-account public keys (kid → (account id, PEM)) the token exchange
    # verifies JWTs against; access tokens it issued (→ expiry, epoch seconds); tokens the
    # services refuse as expired.
    public_keys: dict[str, tuple[str, str]] = field(default_factory=dict)
    issued_tokens: dict[str, float] = field(default_factory=dict)
    expired_tokens: set[str] = field(default_factory=set)
    # Operations: seconds before one finishes, and methods whose operation ends in an error.
    operation_seconds: float = 0.0
    price_unit: str = "month"  # what billing answers when the request asks for no unit
    price_extra_units: tuple[str, ...] = ()  # more costs per resource, in these units
    price_reversed: bool = False  # costs answered in the reverse order of the requests
    failing_operations: dict[str, str] = field(default_factory=dict)
    scenario: frozenset[str] = frozenset()
    calls: list[tuple[str, str]] = field(default_factory=list)  # (method, authorization)
    access_keys: FakeAccessKeys = field(default_factory=FakeAccessKeys)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    # --- prices ------------------------------------------------------------------------

    def hourly_price(self, platform: str, preset: str, *, preemptible: bool) -> Decimal | None:
        offer = next((p for p in self.platforms if p.name == platform), None)
        found = offer.preset(preset) if offer is not None else None
        if found is None:
            return None
        price = found.vcpu * _USD_PER_VCPU_HOUR + found.gpus * _USD_PER_GPU_HOUR
        if preemptible:
            price *= _PREEMPTIBLE_FACTOR
        return price.quantize(Decimal("0.000001"))

    def storage_price(self, size_gib: int) -> Decimal:
        """Disks and filesystems: per GiB and hour, whatever the type (invented)."""
        return (size_gib * _USD_PER_GIB_HOUR).quantize(Decimal("0.000001"))

    # --- the sandbox cluster's own resources ---------------------------------------------

    def create_cluster(self, name: str) -> Mk8sCluster:
        """The mk8s cluster (and its filesystems) a sandbox deploy of `name` creates."""
        with self.lock:
            cluster_id = "mk8scluster-" + _short(f"{self.project_id}/{name}")
            cluster = Mk8sCluster(cluster_id, f"soperator-{name}", self.project_id, "running")
            self.clusters[cluster_id] = cluster
            for role in ("jail", "controller-spool"):
                fs_name = f"soperator-{name}-{role}"
                fs_id = filesystem_id(self.project_id, fs_name)  # as the stand-in provider
                self.filesystems[fs_id] = Filesystem(fs_id, fs_name, self.project_id, "ready")
            return cluster

    def delete_cluster(self, name: str) -> None:
        if "destroy-leftover" in self.scenario:
            return  # the sandbox's way to show a teardown that left something behind
        with self.lock:
            for cluster_id, cluster in list(self.clusters.items()):
                if cluster.name == f"soperator-{name}":
                    del self.clusters[cluster_id]
            for fs_id, fs in list(self.filesystems.items()):
                if fs.name.startswith(f"soperator-{name}-"):
                    del self.filesystems[fs_id]


def _short(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def default_state(
    *,
    region: str = "eu-north1",
    tenant_id: str = "tenant-sandbox",
    project_id: str = "project-sandbox",
) -> FakeCloudState:
    """A cloud where every preflight read answers and every check passes."""
    from npa_sop_tui.cloud.catalog_cache import catalog_platforms
    from npa_sop_tui.cloud.needs import gpu_quota_name
    from npa_sop_tui.spec.catalog import load_catalog

    platforms = catalog_platforms(region)
    platforms = [
        replace(p, gpu_quota=gpu_quota_name(p.name)) if p.name.startswith("gpu-") else p
        for p in platforms
    ]
    quotas = [Quota(name, region, limit, 0, "active") for name, limit in _DEFAULT_LIMITS.items()]
    gpu_quotas = {p.gpu_quota for p in platforms if p.gpu_quota}
    quotas += [Quota(n, region, _DEFAULT_GPU_LIMIT, 0, "active") for n in sorted(gpu_quotas)]
    project_quotas = [replace(q, limit=(q.limit or 0) // 2, level="project") for q in quotas]
    fabrics = load_catalog().fabrics_for(region) or [f"{region}-a"]
    advice = []
    for offer in platforms:
        for preset in offer.presets:
            if not preset.gpus:
                continue
            ample = Availability("fresh", 64, 64, "high")
            for fabric in fabrics:
                advice.append(
                    ResourceAdvice(
                        region, fabric, offer.name, preset.name, preset.gpus, ample, ample, ample
                    )
                )
    return FakeCloudState(
        tenant_id=tenant_id,
        project_id=project_id,
        region=region,
        quotas=quotas,
        project_quotas=project_quotas,
        advice=advice,
        platforms=platforms,
        subnets=[(f"vpcsubnet-{_short(project_id)}", "default-subnet")],
    )


def seed_for_spec(state: FakeCloudState, spec: Any, capacity: Mapping[str, str]) -> None:
    """Reservations for the spec's reserved pools (unless the scenario says they are missing),
    and short quotas when the scenario asks for them."""
    if "capacity-block-missing" not in state.scenario:
        for pool in spec.workers:
            if pool.capacity_mode(dict(capacity)) != "reserved":
                continue
            group_id = capacity.get(pool.name) or pool.capacity_block_group_id
            name = pool.capacity_block_group_name or f"sandbox-{pool.name}"
            if not group_id:
                group_id = "capacityblockgroup-" + _short(f"{state.tenant_id}/{name}")
            if any(g.id == group_id for g in state.groups):
                continue
            gpus = pool.size * pool.gpus_per_node
            state.groups.append(
                CapacityBlockGroup(
                    id=group_id,
                    name=name,
                    region=spec.region or state.region,
                    platform=pool.platform,
                    fabric=pool.fabric or "",
                    state="active",
                    limit=max(gpus * 2, 8),
                    usage=0,
                )
            )
            state.allowances.append(
                CapacityAllowance(
                    id="capacityallowance-" + _short(f"{state.project_id}/{group_id}"),
                    project_id=state.project_id,
                    group_id=group_id,
                    limit=None,
                    usage=0,
                    state="active",
                )
            )
    if "quota-hidden" in state.scenario:  # credentials that may read usage but not limits
        hidden = "compute.instance.count"
        state.quotas = [replace(q, limit=None) if q.name == hidden else q for q in state.quotas]
        state.project_quotas = [
            replace(q, limit=None) if q.name == hidden else q for q in state.project_quotas
        ]
    if "quota-short" in state.scenario:
        from npa_sop_tui.cloud.needs import gpu_quota_name

        short = {"compute.instance.count"}
        short |= {gpu_quota_name(p.platform) for p in spec.workers if p.is_gpu()}
        state.quotas = [
            replace(q, limit=1, usage=1) if q.name in short else q for q in state.quotas
        ]
        state.project_quotas = [
            replace(q, limit=1, usage=1) if q.name in short else q for q in state.project_quotas
        ]
