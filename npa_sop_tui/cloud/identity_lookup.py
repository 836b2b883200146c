"""Identity npa can find by itself when the settings lack it, as the Nebius CLI and the
recipe's `.envrc` do:

- the project (or tenant) from the Nebius CLI profile's `parent-id`;
- the tenant from the project (IAM ProjectService: a project's parent is its tenant);
- the subnet from the project (VPC SubnetService): one subnet is used; several are listed
  and the user picks one (`subnet_id`), since guessing would put the cluster on the wrong
  network; none is an error.

Runs the reads on their own event loop in a helper thread (callers are synchronous and may
sit inside a loop), each bounded by the client's cloud timeout. A read that fails or times out
is an error naming what was looked up, where and why (the client's message), never a silent
"not set": the user learns whether to fix the network or set the value.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from typing import TYPE_CHECKING, Any

from npa_sop_tui.cloud.connection import CloudError
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


def needs_cloud(identity: Identity, *, subnet: bool = True) -> bool:
    """Whether the cloud can add anything: a project is known and the tenant (or, with
    `subnet`, the subnet) is not."""
    if not identity.project_id:
        return False
    return not identity.tenant_id or (subnet and not identity.subnet_id)


def _failed(what: str, project: str, exc: CloudError) -> CloudError:
    fix = (
        f"or set {what} (NPA_{what.upper()}, the npa config or the spec) so npa need not look it up"
    )
    return type(exc)(
        f"looking up the {what.replace('_id', '')} of project {project} failed: {exc.message}",
        hint=f"{exc.hint}; {fix}" if exc.hint else fix,
    )


async def _lookup(identity: Identity, client: Any, subnet: bool) -> dict[str, str]:
    project = identity.project_id
    assert project
    found: dict[str, str] = {}
    try:
        if not identity.tenant_id:
            try:
                tenant = await client.project_tenant(project)
            except CloudError as exc:
                raise _failed("tenant_id", project, exc) from None
            if tenant:
                found["tenant_id"] = tenant
        if subnet and not identity.subnet_id:
            try:
                subnets = await client.subnets(project)
            except CloudError as exc:
                raise _failed("subnet_id", project, exc) from None
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
    if not needs_cloud(identity, subnet=subnet):
        return identity
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="npa-identity") as pool:
        found = pool.submit(lambda: asyncio.run(_lookup(identity, client, subnet))).result()
    return identity.model_copy(update=found) if found else identity
