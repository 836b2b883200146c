"""The lifecycle's public calls: plan, deploy, destroy, list. Front doors import this module."""

from __future__ import annotations

import asyncio

from npa_sop_tui.errors import OperationError
from npa_sop_tui.home.inventory import InventoryEntry
from npa_sop_tui.lifecycle.deploy import deploy
from npa_sop_tui.lifecycle.destroy import destroy
from npa_sop_tui.lifecycle.plan import plan
from npa_sop_tui.lifecycle.results import (
    DeployResult,
    DestroyIncomplete,
    DestroyResult,
    DestructivePlanError,
    LifecycleOptions,
    PlanResult,
    TerraformFailed,
)

__all__ = [
    "DeployResult",
    "DestroyIncomplete",
    "DestroyResult",
    "DestructivePlanError",
    "LifecycleOptions",
    "PlanResult",
    "TerraformFailed",
    "cluster_resources",
    "deploy",
    "destroy",
    "list_clusters",
    "plan",
]


def list_clusters() -> list[InventoryEntry]:
    """Clusters in the inventory (with region, context, last operation and result), then the
    ones the existing npa deployed in this home that are not adopted yet (their `adoption`
    says so with `adopted == 0`; any operation on them adopts them)."""
    from npa_sop_tui.lifecycle.adopt import listed

    listing = listed()
    return [*listing.entries, *listing.found]


async def cluster_resources(name: str, options: LifecycleOptions | None = None) -> list[str]:
    """The resource addresses in a cluster's Terraform state, as Terraform lists them."""
    from npa_sop_tui.home import recorded_paths as recorded
    from npa_sop_tui.lifecycle import steps
    from npa_sop_tui.lifecycle.adopt import arequire_cluster

    options = options or LifecycleOptions()
    environment = steps.environment_of(options)
    store = environment.state_store()
    entry = await arequire_cluster(name, store=store, options=options)
    if not entry.install_dir:
        return []
    install_dir = recorded.install_dir(entry, environment.settings, shared=store.shared)
    if (install_dir is None or not install_dir.is_dir()) and store.shared:
        # deployed from another machine: read the state in the team's bucket
        return store.resource_addresses(name) or []
    if install_dir is None:
        return []
    recipe = await environment.recipe(recorded.recipe_dir(entry, environment.settings))
    setup = await environment.terraform(recipe)
    from npa_sop_tui.terraform.runner import TerraformRunner

    keys = await asyncio.to_thread(store.terraform_env)  # the bucket's key, if minted
    runner = TerraformRunner(
        setup.binary.path, operation_id="query", on_event=lambda e: None, env={**setup.env, **keys}
    )
    code, out, err = await runner.capture(["state", "list"], cwd=install_dir)
    if code != 0:
        if "No state file" in err:
            return []
        raise OperationError(f"terraform state list failed: {err.strip()[-400:]}")
    return sorted(line for line in out.splitlines() if line.strip())
