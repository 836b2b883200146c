"""One shared network per fleet project, owned by the fleet.

Every soperator target of a project deploys into the same subnet. The fleet either reuses
the project's `subnet_id` (recorded as not owned: destroy leaves it alone) or creates one
through a `NetworkProvider` and records ownership in
`npa_home()/fleet/<fleet>/<project>/.npa-fleet-network.json`, so destroy reclaims exactly
what the fleet made, and only once no target of that project remains.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, ValidationError

from npa_sop_tui.errors import UsageError
from npa_sop_tui.fleet.records import damage, fleet_root
from npa_sop_tui.home.fsutil import SECRET_MODE, atomic_write_text

NETWORK_FILE = ".npa-fleet-network.json"


class NetworkRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    fleet: str
    project_key: str
    project_id: str | None
    subnet_id: str
    owned: bool
    provider: Literal["existing", "sandbox"]
    created: float


class NetworkProvider(Protocol):
    kind: Literal["sandbox"]

    def preview(self, fleet: str, project_key: str, project_id: str | None) -> str:
        """The id `create` would return, without creating anything (for plan)."""
        ...

    def create(self, fleet: str, project_key: str, project_id: str | None) -> str: ...

    def delete(self, subnet_id: str) -> None: ...


class SandboxNetworks:
    """The stand-in recipe has no VPC: the subnet is an id the null resources carry."""

    kind: Literal["sandbox"] = "sandbox"

    def preview(self, fleet: str, project_key: str, project_id: str | None) -> str:
        # The identity rules want the real id shape (vpcsubnet-…).
        return f"vpcsubnet-sandbox-{fleet}-{project_key}"

    def create(self, fleet: str, project_key: str, project_id: str | None) -> str:
        return self.preview(fleet, project_key, project_id)

    def delete(self, subnet_id: str) -> None:
        return None


def project_root(fleet: str, project_key: str) -> Path:
    return fleet_root(fleet) / project_key


def record_path(fleet: str, project_key: str) -> Path:
    return project_root(fleet, project_key) / NETWORK_FILE


def read_record(fleet: str, project_key: str) -> NetworkRecord | None:
    path = record_path(fleet, project_key)
    try:
        return NetworkRecord.model_validate_json(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError, ValidationError) as exc:
        raise UsageError(
            f"{path}: the fleet network record is damaged: {damage(exc)}",
            hint="restore it or remove it after checking the project's networks by hand",
        ) from None


def planned_subnet(
    fleet: str,
    project_key: str,
    project_id: str | None,
    existing_subnet: str | None,
    provider: NetworkProvider | None,
) -> str:
    """The subnet a deploy would use, without recording or creating anything."""
    record = read_record(fleet, project_key)
    if record is not None:
        return record.subnet_id
    if existing_subnet:
        return existing_subnet
    if provider is None:
        raise _no_network(project_key)
    return provider.preview(fleet, project_key, project_id)


def _no_network(project_key: str) -> UsageError:
    return UsageError(
        f"project {project_key!r} has no subnet_id and this tool cannot create Nebius "
        "VPC networks yet",
        hint="set projects[].subnet_id to an existing subnet of that project "
        "(or run the fleet against the sandbox stand-in with --sandbox)",
    )


def ensure_network(
    fleet: str,
    project_key: str,
    project_id: str | None,
    existing_subnet: str | None,
    provider: NetworkProvider | None,
) -> NetworkRecord:
    """The project's network record, creating (and recording) one on first use."""
    record = read_record(fleet, project_key)
    if record is not None:
        if existing_subnet and record.subnet_id != existing_subnet:
            raise UsageError(
                f"project {project_key!r} of fleet {fleet!r} already uses subnet "
                f"{record.subnet_id!r}, but the fleet file now says {existing_subnet!r}",
                hint="restore the original subnet_id; moving deployed clusters is not supported",
            )
        return record
    if existing_subnet:
        record = NetworkRecord(
            fleet=fleet,
            project_key=project_key,
            project_id=project_id,
            subnet_id=existing_subnet,
            owned=False,
            provider="existing",
            created=time.time(),
        )
    elif provider is None:
        raise _no_network(project_key)
    else:
        record = NetworkRecord(
            fleet=fleet,
            project_key=project_key,
            project_id=project_id,
            subnet_id=provider.create(fleet, project_key, project_id),
            owned=True,
            provider=provider.kind,
            created=time.time(),
        )
    atomic_write_text(
        record_path(fleet, project_key), record.model_dump_json(indent=2) + "\n", mode=SECRET_MODE
    )
    return record


def release_network(fleet: str, project_key: str, provider: NetworkProvider | None) -> bool:
    """Drop the project's network once nothing uses it; True when a record was removed."""
    record = read_record(fleet, project_key)
    if record is None:
        return False
    if record.owned and provider is not None:
        provider.delete(record.subnet_id)
    elif record.owned:
        # Keep the record: the fleet still owns a network it cannot delete from here.
        return False
    record_path(fleet, project_key).unlink(missing_ok=True)
    return True
