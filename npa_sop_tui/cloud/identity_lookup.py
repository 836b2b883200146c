"""Identity npa can find by itself when the settings lack it, as the Nebius CLI and the
recipe's `.envrc` do:

- the project (or tenant) from the Nebius CLI profile's `parent-id`;
- the tenant from the project (IAM ProjectService: a project's parent is its tenant);
- the subnet from the project (VPC SubnetService): one subnet is used; several are listed
  and the user picks one (`subnet_id`), since guessing would put the cluster on the wrong
  network; none is an error.

Runs the reads on their own event loop in a helper thread (callers are synchronous and may
sit inside a loop), bounded by the cloud timeout.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from typing import TYPE_CHECKING, Any

from npa_sop_tui.errors import UsageError

if TYPE_CHECKING:
    from npa_sop_tui.home.config import Identity


def from_profile(identity: Identity, profile: str | None) -> Identity:
    """Fill the project or tenant from the CLI profile's parent ID (a file read, no call)."""
    from npa_sop_tui.cloud.signin import profile_parent_id

    if identity.project_id and identity.tenant_id:
        return identity
    parent = profile_parent_id(profile)
    if not parent:
        return identity
    if parent.startswith("project-") and not identity.project_id:
        return identity.model_copy(update={"project_id": parent})
    if parent.startswith("tenant-") and not identity.tenant_id:
        return identity.model_copy(update={"tenant_id": parent})
    return identity


async def _lookup(identity: Identity, client: Any, subnet: bool) -> dict[str, str]:
    project = identity.project_id
    assert project
    found: dict[str, str] = {}
    try:
        if not identity.tenant_id:
            tenant = await client.project_tenant(project)
            if tenant:
                found["tenant_id"] = tenant
        if subnet and not identity.subnet_id:
            subnets = await client.subnets(project)
            if not subnets:
                raise UsageError(
                    f"no VPC subnet found in project {project}",
                    hint="create one (`nebius vpc subnet create`) or set subnet_id",
                )
            if len(subnets) > 1:
                listed = "\n  ".join(f"{s.id}  {s.name}" for s in subnets)
                raise UsageError(
                    f"project {project} has {len(subnets)} VPC subnets; npa does not guess "
                    f"which one the cluster should use:\n  {listed}",
                    hint="pick one: put `subnet_id: <id>` in the spec or the npa config, or "
                    "export NPA_SUBNET_ID=<id>",
                )
            found["subnet_id"] = subnets[0].id
    finally:
        await client.close()
    return found


def from_cloud(identity: Identity, client: Any, *, subnet: bool = True) -> Identity:
    """Fill the tenant (and, with `subnet`, the subnet) from the project through `client`
    (closed afterwards)."""
    if not identity.project_id or (identity.tenant_id and (identity.subnet_id or not subnet)):
        return identity
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="npa-identity") as pool:
        found = pool.submit(lambda: asyncio.run(_lookup(identity, client, subnet))).result()
    return identity.model_copy(update=found) if found else identity
