"""What a spec means beyond its fields, written once for two kinds of objects.

The pydantic models in `model.py` inherit these mixins, and so do the plain objects the lean
validator (`lean.py`) builds with pydantic-core alone, which is how a cold `npa soperator
validate` skips pydantic's model machinery. Nothing here imports pydantic; the mixins only
read the fields the models declare (`self.name`, `self.workers`, …).
"""

from __future__ import annotations

import re
from typing import Any, Literal

from npa_sop_tui.spec.catalog import SUPPORTED_VERSIONS

API_VERSION = "npa.soperator/v0.0.1"
DEFAULT_OPERATOR_VERSION = "4.1.6"
# Per recipe generation: the k8s / node-group versions of upstream's example tfvars
# (`installations/example/terraform.tfvars`).
DEFAULT_K8S_VERSION = {"4.1.6": "1.34", "4.1.12": "1.36"}
DEFAULT_NODE_GROUP_VERSION = {"4.1.6": "72", "4.1.12": "75"}
VERSION_FIELDS = ("slurm_operator_version", "k8s_version", "node_group_version")
# Fields whose values are secrets (reservation IDs): never echoed in a message, whatever
# type the value has, and never written into cluster.yaml.
SECRET_FIELDS = frozenset({"capacity_block_group"})

CapacityMode = Literal["reserved", "preemptible", "on-demand"]
SelectorKind = Literal["id", "name", ""]


# --- field validators (the models' and the lean validator's) ---------------------------------


def blank_to_none(value: str | None) -> str | None:
    """`"  "` and `""` mean "not set"; surrounding blanks are dropped."""
    if value is None:
        return None
    value = value.strip()
    return value or None


def strip_secret(value: Any) -> Any:
    """`blank_to_none` for a secret given as text or as a secret object (pydantic's
    `SecretStr`, or `LeanSecret`); anything else is left for the field's type to reject."""
    reveal = getattr(value, "get_secret_value", None)
    if callable(reveal):
        value = reveal()
    return blank_to_none(value) if isinstance(value, str) or value is None else value


class LeanSecret:
    """Stands in for pydantic's `SecretStr` in the lean validator: the value is masked in
    repr and str, and read with `get_secret_value()`."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def get_secret_value(self) -> str:
        return self._value

    def __len__(self) -> int:
        return len(self._value)

    def __eq__(self, other: object) -> bool:
        reveal = getattr(other, "get_secret_value", None)
        return callable(reveal) and reveal() == self._value

    def __hash__(self) -> int:
        return hash(self._value)

    def __str__(self) -> str:
        return "**********" if self._value else ""

    def __repr__(self) -> str:
        return f"LeanSecret('{self}')"


# --- plain functions of a few values ---------------------------------------------------------


def kube_context(name: str) -> str:
    """The kube context the recipe writes: `nebius-<name>-slurm`."""
    return f"nebius-{name.lower().replace(' ', '-')}-slurm"


def recipe_generation(version: str) -> str | None:
    """Which variable shapes a Soperator version uses, or None: 4.1.6 and 4.1.7 share one,
    4.1.12 and 4.1.13 another."""
    return SUPPORTED_VERSIONS.get(version)


def capacity_mode_of(*, reserved: bool, preemptible: bool) -> CapacityMode:
    """How a pool's nodes are obtained: a reservation wins over preemptible."""
    if reserved:
        return "reserved"
    return "preemptible" if preemptible else "on-demand"


# --- mixins: derived values of SystemSpec, WorkerPoolSpec and SoperatorSpec ------------------
# (No field annotations here: pydantic must see the fields only where the models declare them.)


class SystemFacts:
    @property
    def effective_max_size(self: Any) -> int:
        return self.max_size if self.max_size is not None else max(self.min_size, 24)


class PoolFacts:
    @property
    def capacity_block_group_id(self: Any) -> str | None:
        """The reservation ID itself (render only; never show it)."""
        cbg = self.capacity_block_group
        return cbg.get_secret_value() if cbg is not None else None

    def is_gpu(self: Any) -> bool:
        """A GPU pool (platform `gpu-…`); a method, as in the existing npa's SDK."""
        return bool(self.platform.startswith("gpu-"))

    @property
    def gpus_per_node(self: Any) -> int:
        """GPU count from the preset name (`8gpu-…` → 8); 0 for CPU pools."""
        match = re.match(r"^(\d+)gpu-", self.preset)
        return int(match.group(1)) if self.is_gpu() and match else 0

    def capacity_mode(self: Any, capacity: dict[str, str] | None = None) -> CapacityMode:
        return capacity_mode_of(
            reserved=bool(self.reservation_selector_kind(capacity)), preemptible=self.preemptible
        )

    def reservation_selector_kind(
        self: Any, capacity: dict[str, str] | None = None
    ) -> SelectorKind:
        """`id`, `name` or "": the kind only, never the value (which must not be shown)."""
        if (capacity and self.name in capacity) or self.capacity_block_group:
            return "id"
        return "name" if self.capacity_block_group_name else ""

    def summary(self: Any, capacity: dict[str, str] | None = None) -> dict[str, Any]:
        return {
            "name": self.name,
            "platform": self.platform,
            "preset": self.preset,
            "size": self.size,
            "gpus_per_node": self.gpus_per_node,
            "preemptible": self.preemptible,
            "docker_cache": self.docker_cache,
            "capacity_mode": self.capacity_mode(capacity),
            "reservation_selector": self.reservation_selector_kind(capacity) or None,
        }


class SpecFacts:
    @property
    def kube_context(self: Any) -> str:
        return kube_context(self.name)

    @property
    def worker_count(self: Any) -> int:
        """Sum of pool sizes: what the recipe's sizing tier counts."""
        return sum(max(pool.size, 0) for pool in self.workers)

    @property
    def sizing_tier(self: Any) -> str:
        from npa_sop_tui.spec.catalog import load_catalog

        return load_catalog().sizing_tier(self.worker_count).name

    @property
    def rest_enabled(self: Any) -> bool:
        return bool(self.accounting if self.slurm_rest_enabled is None else self.slurm_rest_enabled)

    @property
    def has_gpu(self: Any) -> bool:
        return any(pool.is_gpu() for pool in self.workers)

    @property
    def recipe_generation(self: Any) -> str:
        """`4.1.6` for 4.1.6/4.1.7 variable shapes, `4.1.12` for 4.1.12+ (else unknown)."""
        return recipe_generation(self.slurm_operator_version) or "unknown"

    @property
    def effective_k8s_version(self: Any) -> str:
        return self.k8s_version or DEFAULT_K8S_VERSION.get(self.recipe_generation, "1.34")

    @property
    def effective_node_group_version(self: Any) -> str:
        return self.node_group_version or DEFAULT_NODE_GROUP_VERSION.get(
            self.recipe_generation, "72"
        )

    def pool(self: Any, name: str) -> Any:
        """The worker pool called `name`, or None."""
        return next((p for p in self.workers if p.name == name), None)

    def summary(self: Any, capacity: dict[str, str] | None = None) -> dict[str, Any]:
        """A stable, secret-free description for plan output and `validate --output json`."""
        system = self.control_plane.system
        return {
            "name": self.name,
            "region": self.region,
            "kube_context": self.kube_context,
            "sizing_tier": self.sizing_tier,
            "worker_count": self.worker_count,
            "slurm_operator_version": self.slurm_operator_version,
            "k8s_version": self.effective_k8s_version,
            "node_group_version": self.effective_node_group_version,
            "accounting": self.accounting,
            "slurm_rest_enabled": self.rest_enabled,
            "telemetry": self.telemetry,
            "control_plane": {
                "system_min_size": system.min_size,
                "system_max_size": system.effective_max_size,
                "system_preset": system.preset,
                "controller_preset": self.control_plane.controller.preset,
                "login_preset": self.control_plane.login.preset,
                "accounting_preset": self.control_plane.accounting.preset,
            },
            "workers": [pool.summary(capacity) for pool in self.workers],
        }


# What the lean validator may put where the models' schema names a function or a class: the
# schema export (`lean_export.py`) refuses anything not listed here.
LEAN_FUNCTIONS: dict[str, Any] = {"blank_to_none": blank_to_none, "strip_secret": strip_secret}
LEAN_MIXINS: dict[str, type] = {
    "SystemFacts": SystemFacts,
    "PoolFacts": PoolFacts,
    "SpecFacts": SpecFacts,
}
