"""What the cloud client returns: small frozen records, independent of the SDK's messages.

The SDK's message classes stay inside `nebius_sdk.py`; everything else (preflight, destroy
verification, the sandbox, tests) reads these records. Enum states are lower-case names
without their prefix (`STATE_ACTIVE` → `active`), so they print well and compare simply.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal


@dataclass(frozen=True)
class Quota:
    """One quota allowance in one region (`compute.instance.count` in `eu-north1`)."""

    name: str
    region: str
    limit: int | None  # None: the allowance sets no limit
    usage: int | None  # None: the service could not say (usage state unknown)
    state: str = "active"  # active, provisioning, frozen, deleted (frozen: usable no more)
    unit: str = ""
    level: str = "tenant"  # tenant or project: the container the allowance belongs to


@dataclass(frozen=True)
class CapacityBlockGroup:
    """A reservation: `limit` and `usage` count GPUs of its platform in its fabric."""

    id: str
    name: str
    region: str
    platform: str
    fabric: str
    state: str  # active, inactive, allocating, shutting, unspecified
    limit: int
    usage: int

    @property
    def free(self) -> int:
        return max(self.limit - self.usage, 0)


@dataclass(frozen=True)
class CapacityAllowance:
    """A project's share of a capacity block group (CapacityAllowanceService): at most
    `limit` GPUs of the group (None: no per-project cap), `usage` of them in use."""

    id: str
    project_id: str
    group_id: str
    limit: int | None
    usage: int | None  # None: the service could not say
    state: str  # provisioning, active, container_deleted, unspecified


@dataclass(frozen=True)
class Availability:
    """How many instances of one preset can be allocated now (ResourceAdvice)."""

    data_state: str  # fresh, stale, unknown, unspecified
    available: int
    limit: int
    level: str  # high, medium, low, limit_reached, unknown, unspecified


@dataclass(frozen=True)
class ResourceAdvice:
    region: str
    fabric: str
    platform: str
    preset: str
    gpus: int
    reserved: Availability | None = None
    on_demand: Availability | None = None
    preemptible: Availability | None = None


@dataclass(frozen=True)
class PresetOffer:
    name: str
    vcpu: int
    memory_gib: int
    gpus: int = 0
    gpu_clustering: bool = False


@dataclass(frozen=True)
class PlatformOffer:
    """A platform the project's region offers, with its presets (PlatformService)."""

    name: str
    presets: tuple[PresetOffer, ...] = ()
    preemptible_allowed: bool = False
    gpu_quota: str = ""  # spec.gpu_count_quota_type: the quota its GPUs count against

    def preset(self, name: str) -> PresetOffer | None:
        return next((p for p in self.presets if p.name == name), None)


@dataclass(frozen=True)
class Mk8sCluster:
    id: str
    name: str
    parent_id: str
    state: str  # provisioning, running, deleting, unspecified


@dataclass(frozen=True)
class NodeGroup:
    id: str
    name: str
    cluster_id: str
    state: str
    target_nodes: int = 0
    ready_nodes: int = 0


@dataclass(frozen=True)
class Filesystem:
    id: str
    name: str
    parent_id: str
    state: str  # creating, ready, updating, deleting, error


@dataclass(frozen=True)
class CloudResource:
    """Something else a cluster's Terraform state owned (destroy verification): a VPC
    allocation, a GPU cluster, a bucket."""

    kind: str  # "VPC allocation", "GPU cluster", "bucket"
    id: str
    name: str
    state: str  # the service's state, lower-case ("allocated", "active"; "" when it has none)


@dataclass(frozen=True)
class PriceRequest:
    """One instance shape to price; `count` instances of it."""

    key: str  # what the caller calls it: a pool name, `system`, `login` …
    platform: str
    preset: str
    count: int
    preemptible: bool = False
    kind: str = "instance"  # instance, disk or filesystem (then `platform`/`preset` are "")
    size_gib: int = 0  # disks and filesystems
    storage_type: str = ""  # NETWORK_SSD, … (the DiskSpec / FilesystemSpec type name)


@dataclass(frozen=True)
class PriceQuote:
    """Hourly cost per request key (for all `count` instances) and in total."""

    hourly: dict[str, Decimal] = field(default_factory=dict)
    total_hourly: Decimal = Decimal(0)
    currency: str = "usd"

    @property
    def total_daily(self) -> Decimal:
        return self.total_hourly * 24


@dataclass(frozen=True)
class Subnet:
    id: str
    name: str


@dataclass(frozen=True)
class WhoAmI:
    kind: str  # user, service_account, anonymous
    id: str
    name: str = ""
