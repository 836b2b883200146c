"""The stand-in's filesystem: the resource and the data source `nebius_compute_v1_filesystem`.

Attributes are those the recipe's filestore module sets (nebius-solutions-library `soperator/`:
`parent_id`, `name`, `type`, `size_bytes`, `block_size_bytes`, `forbid_deletion`),
`size_gibibytes` (the provider's other way to give the size), `labels`, and the computed `id`
and `status` (`state`, `size_bytes`, `reconciling`: the recipe reads `status.size_bytes`). As
the API does: changing where it lives, its name, type or block size replaces a filesystem; its
size grows in place and never shrinks (a smaller size is refused at plan, naming both sizes);
one with `forbid_deletion` set is not deleted. The data source reads an existing filesystem by
`id`, as the recipe does for filesystems it did not create.

The cloud behind it is a `FilesystemCloud`: by default the sandbox's naming rule, an ID
derived from project and name (`filesystem_id`), the same rule the sandbox's fake Nebius uses
for the filesystems it holds, so what Terraform records is what the fake cloud later reports;
with an API (sdk_cloud.py) reads also notice a filesystem deleted outside Terraform.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Protocol

from npa_sop_tui.sandbox.nebius_provider.values import UNKNOWN

TYPE_NAME = "nebius_compute_v1_filesystem"
SCHEMA_VERSION = 0
GIB = 1024**3
STATUS_TYPE = ["object", {"state": "string", "size_bytes": "number", "reconciling": "bool"}]


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
    Attr("forbid_deletion", "bool", optional=True),
    Attr("labels", ["map", "string"], optional=True),
    Attr("status", STATUS_TYPE, computed=True, description="state, size_bytes, reconciling"),
)
NAMES = tuple(a.name for a in ATTRIBUTES)
# The data source: an existing filesystem by ID, everything else read from the cloud.
DATA_ATTRIBUTES = tuple(
    Attr(a.name, a.type, required=a.name == "id", computed=a.name != "id",
         description=a.description)
    for a in ATTRIBUTES
)  # fmt: skip
REPLACE_ON_CHANGE = ("parent_id", "name", "type", "block_size_bytes")
CANNOT_TELL: Any = object()  # what a cloud without an API answers a read
PROVIDER_ATTRIBUTES = (Attr("domain", "string", optional=True, description="API endpoint"),)


def filesystem_id(parent_id: str, name: str) -> str:
    """The ID the sandbox's cloud gives the filesystem `name` in project `parent_id`."""
    return "computefilesystem-" + hashlib.sha256(f"{parent_id}/{name}".encode()).hexdigest()[:16]


class FilesystemCloud(Protocol):
    def create(self, state: dict[str, Any]) -> str: ...
    def delete(self, fs_id: str) -> None: ...
    def resize(self, fs_id: str, size_bytes: int) -> None: ...

    def get(self, fs_id: str) -> Any:
        """The filesystem as the resource's attributes, None when it is gone, or
        `CANNOT_TELL` (a cloud without an API behind it)."""


class DerivedCloud:
    """The filesystem's ID by the sandbox's naming rule; every call succeeds (what the fake
    cloud then holds is its own business, as with a real cloud), and reads cannot tell."""

    def create(self, state: dict[str, Any]) -> str:
        return filesystem_id(state["parent_id"], state["name"])

    def delete(self, fs_id: str) -> None:
        return None

    def resize(self, fs_id: str, size_bytes: int) -> None:
        return None

    def get(self, fs_id: str) -> Any:
        return CANNOT_TELL


def size_of(state: dict[str, Any]) -> Any:
    """Bytes, from `size_bytes` or `size_gibibytes` (UNKNOWN or None when not known yet)."""
    if state.get("size_bytes") is not None:
        return state["size_bytes"]
    gib = state.get("size_gibibytes")
    return gib * GIB if isinstance(gib, int | float) else gib


def status(state: str, size: Any) -> dict[str, Any]:
    return {"state": state, "size_bytes": size, "reconciling": False}


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


def validate_data(config: dict[str, Any] | None) -> list[str]:
    if config and config.get("id") is None:
        return ["id must be set: the ID of an existing filesystem"]
    return []


def plan(
    prior: dict[str, Any] | None, proposed: dict[str, Any] | None
) -> tuple[dict[str, Any] | None, list[str], list[str]]:
    """The planned state, the attributes whose change forces a replacement, and errors."""
    if proposed is None:
        return None, [], []  # destroy
    planned = dict(proposed)
    if prior is None:
        planned["id"] = planned["status"] = UNKNOWN
        return planned, [], []
    replace = [k for k in REPLACE_ON_CHANGE if prior.get(k) != proposed.get(k)]
    if replace:
        planned["id"] = planned["status"] = UNKNOWN
        return planned, replace, []
    planned["id"], planned["status"] = prior.get("id"), prior.get("status")
    before, after = size_of(prior), size_of(proposed)
    if UNKNOWN in (before, after) or None in (before, after) or before == after:
        if after is UNKNOWN:
            planned["status"] = UNKNOWN
        return planned, [], []
    if after < before:
        return None, [], [
            f"filesystem {prior.get('name')!r} cannot shrink from {before} to {after} bytes: "
            "Nebius filesystems only grow; a smaller one is a new filesystem (change its name "
            "to replace it)"
        ]  # fmt: skip
    planned["status"] = UNKNOWN  # grows in place
    return planned, [], []


def apply(
    prior: dict[str, Any] | None, planned: dict[str, Any] | None, cloud: FilesystemCloud
) -> dict[str, Any] | None:
    """The new state after create, update or delete (None once deleted)."""
    if planned is None:
        if prior is not None and prior.get("id"):
            if prior.get("forbid_deletion"):
                raise RuntimeError(
                    f"filesystem {prior.get('name')!r} has forbid_deletion set: unset it first"
                )
            cloud.delete(prior["id"])
        return None
    new = dict(planned)
    if new.get("id") is UNKNOWN or new.get("id") is None:
        new["id"] = cloud.create(new)
    elif prior is not None and size_of(prior) != size_of(new):
        cloud.resize(new["id"], int(size_of(new)))
    read = cloud.get(new["id"])
    new["status"] = status("READY", size_of(new)) if not isinstance(read, dict) else read["status"]
    return new


def refresh(current: dict[str, Any] | None, cloud: FilesystemCloud) -> dict[str, Any] | None:
    """The state after a read: None when the cloud no longer has it (deleted outside
    Terraform: Terraform then plans to create it again), else its status as the cloud says."""
    if current is None or not current.get("id"):
        return current
    read = cloud.get(current["id"])
    if read is CANNOT_TELL:
        return current  # no API to ask: the state stands
    if read is None:
        return None
    return {**current, "status": read["status"]}


def read_data(config: dict[str, Any], cloud: FilesystemCloud) -> tuple[dict[str, Any] | None, str]:
    """The data source's state, or an error."""
    fs_id = config.get("id")
    read = cloud.get(str(fs_id))
    if read is CANNOT_TELL:
        return None, f"filesystem {fs_id}: this stand-in has no Nebius API to read it from"
    if read is None:
        return None, f"filesystem {fs_id} not found"
    return {name: read.get(name) for name in NAMES}, ""


def upgrade(raw_json: bytes) -> dict[str, Any]:
    """A stored state (JSON, any earlier shape) as this schema's object."""
    stored = json.loads(raw_json) if raw_json else {}
    return {name: stored.get(name) for name in NAMES}


def imported(fs_id: str) -> dict[str, Any]:
    return {name: (fs_id if name == "id" else None) for name in NAMES}
