"""The stand-in's one resource type, `nebius_compute_v1_filesystem`: schema, plan and apply.

Attributes are those the recipe's filestore module sets (nebius-solutions-library `soperator/`:
`parent_id`, `name`, `type`, `size_bytes`, `block_size_bytes`), `size_gibibytes` (the
provider's other way to give the size, used by other Nebius solutions), `labels`, and the
computed `id`. Changing where it lives, its name, type or block size replaces a filesystem;
its size grows in place, as Nebius filesystems do.

The cloud behind it is `FilesystemCloud`: by default the sandbox's naming rule, an ID derived
from project and name (`filesystem_id`), the same rule the sandbox's fake Nebius uses for the
filesystems it holds, so what Terraform records is what the fake cloud later reports.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Protocol

from npa_sop_tui.sandbox.nebius_provider.values import UNKNOWN

TYPE_NAME = "nebius_compute_v1_filesystem"
SCHEMA_VERSION = 0


@dataclass(frozen=True)
class Attr:
    name: str
    type: Any  # cty type constraint as JSON
    required: bool = False
    optional: bool = False
    computed: bool = False
    description: str = ""


ATTRIBUTES = (
    Attr("id", "string", computed=True, description="computefilesystem-… ID"),
    Attr("parent_id", "string", required=True, description="project ID"),
    Attr("name", "string", required=True),
    Attr("type", "string", required=True, description="NETWORK_SSD, NETWORK_HDD, WEKA, …"),
    Attr("size_bytes", "number", optional=True),
    Attr("size_gibibytes", "number", optional=True),
    Attr("block_size_bytes", "number", optional=True),
    Attr("labels", ["map", "string"], optional=True),
)
NAMES = tuple(a.name for a in ATTRIBUTES)
REPLACE_ON_CHANGE = ("parent_id", "name", "type", "block_size_bytes")
PROVIDER_ATTRIBUTES = (Attr("domain", "string", optional=True, description="API endpoint"),)


def filesystem_id(parent_id: str, name: str) -> str:
    """The ID the sandbox's cloud gives the filesystem `name` in project `parent_id`."""
    return "computefilesystem-" + hashlib.sha256(f"{parent_id}/{name}".encode()).hexdigest()[:16]


class FilesystemCloud(Protocol):
    def create(self, state: dict[str, Any]) -> str: ...
    def delete(self, fs_id: str) -> None: ...


class DerivedCloud:
    """The filesystem's ID by the sandbox's naming rule; delete always succeeds (what the
    fake cloud then still holds is its own business, as with a real cloud)."""

    def create(self, state: dict[str, Any]) -> str:
        return filesystem_id(state["parent_id"], state["name"])

    def delete(self, fs_id: str) -> None:
        return None


def validate(config: dict[str, Any] | None) -> list[str]:
    """Configuration errors (unknown values are checked at apply time)."""
    if not config:
        return []
    sizes = [k for k in ("size_bytes", "size_gibibytes") if config.get(k) is not None]
    if not sizes and UNKNOWN not in (config.get("size_bytes"), config.get("size_gibibytes")):
        return ["one of size_bytes or size_gibibytes must be set"]
    if len(sizes) > 1:
        return ["size_bytes and size_gibibytes are mutually exclusive: set one"]
    return []


def plan(
    prior: dict[str, Any] | None, proposed: dict[str, Any] | None
) -> tuple[dict[str, Any] | None, list[str]]:
    """The planned state and the attributes whose change forces a replacement."""
    if proposed is None:
        return None, []  # destroy
    planned = dict(proposed)
    if prior is None:
        planned["id"] = UNKNOWN
        return planned, []
    replace = [k for k in REPLACE_ON_CHANGE if prior.get(k) != proposed.get(k)]
    planned["id"] = UNKNOWN if replace else prior.get("id")
    return planned, replace


def apply(
    prior: dict[str, Any] | None, planned: dict[str, Any] | None, cloud: FilesystemCloud
) -> dict[str, Any] | None:
    """The new state after create, update or delete (None once deleted)."""
    if planned is None:
        if prior is not None and prior.get("id"):
            cloud.delete(prior["id"])
        return None
    new = dict(planned)
    if new.get("id") is UNKNOWN or new.get("id") is None:
        new["id"] = cloud.create(new)
    return new


def upgrade(raw_json: bytes) -> dict[str, Any]:
    """A stored state (JSON, any earlier shape) as this schema's object."""
    stored = json.loads(raw_json) if raw_json else {}
    return {name: stored.get(name) for name in NAMES}


def imported(fs_id: str) -> dict[str, Any]:
    return {name: (fs_id if name == "id" else None) for name in NAMES}
