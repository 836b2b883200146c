"""The `npa.fleet/v0.0.1` file as typed models, and the resolved targets it describes.

The shape follows the npa anchor: projects (identity envelope) holding clusters (targets);
a `backend: soperator` target embeds the same cluster spec under `soperator:`, without
identity fields, which come from the project and fleet envelope.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

if TYPE_CHECKING:
    from npa_sop_tui.spec.model import SoperatorSpec

FLEET_API_VERSION = "npa.fleet/v0.0.1"
SPEC_API_VERSION = "npa.soperator/v0.0.1"
IDENTITY_FIELDS = ("tenant_id", "project_id", "region", "subnet_id")

Backend = Literal["soperator", "mk8s"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


def _identifier(value: str | None, info: ValidationInfo) -> str | None:
    """A region, a Nebius ID or a profile name of its shape (`spec.identity`), checked as
    the fleet file is read: the finding names its line before the value is used."""
    from npa_sop_tui.spec.identity import identifier_problem

    problem = identifier_problem(info.field_name or "", value) if value is not None else None
    if problem is not None:
        raise PydanticCustomError("identifier", problem)
    return value


class FleetDefaults(_Strict):
    backend: Backend | None = None
    soperator: dict[str, Any] | None = Field(
        default=None, description="deep-merged under every soperator target's own block"
    )
    mk8s: dict[str, Any] | None = None


class FleetCluster(_Strict):
    name: str | None = None
    backend: Backend | None = None
    labels: dict[str, str] = Field(default_factory=dict)
    soperator: dict[str, Any] | None = None
    mk8s: dict[str, Any] | None = None


class FleetProject(_Strict):
    name: str | None = Field(default=None, description="project key; created as prefix+name")
    project_id: str | None = None
    region: str | None = None
    subnet_id: str | None = Field(
        default=None, description="reuse this subnet instead of a fleet-owned network"
    )
    clusters: list[FleetCluster] | None = None

    _identifiers = field_validator("project_id", "region", "subnet_id")(_identifier)


class FleetFile(_Strict):
    api_version: Literal["npa.fleet/v0.0.1"] = Field(alias="apiVersion")
    name: str
    tenant_id: str | None = None
    region: str | None = None
    project_prefix: str = ""
    ssh_public_key: str | None = Field(default=None, description="mk8s only; unused here")
    profile: str | None = None
    defaults: FleetDefaults = Field(default_factory=FleetDefaults)
    projects: list[FleetProject] = Field(min_length=1)

    _identifiers = field_validator("tenant_id", "region", "profile")(_identifier)


@dataclass
class FleetTarget:
    """One (project, cluster) pair, resolved: where it lives and what it deploys."""

    fleet: str
    project_key: str
    project_index: int
    cluster_index: int
    name: str
    backend: Backend
    labels: dict[str, str]
    region: str | None
    tenant_id: str | None
    project_id: str | None
    subnet_id: str | None
    spec: SoperatorSpec | None = None
    mapping: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.project_key}/{self.name}"

    @property
    def path(self) -> str:
        """The field path of this cluster in the fleet file, for messages."""
        return f"projects[{self.project_index}].clusters[{self.cluster_index}]"


_SLUG_BAD = re.compile(r"[^a-z0-9-]+")


def slugify(text: str) -> str:
    """`My Team_1` → `my-team-1`: the anchor slugs names before using them."""
    return _SLUG_BAD.sub("-", text.strip().lower()).strip("-")


DNS_LABEL = re.compile(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$")


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Mappings merge key by key; anything else (lists included) is replaced."""
    out = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out
