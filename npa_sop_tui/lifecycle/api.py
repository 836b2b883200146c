"""The lifecycle's public calls: plan, deploy, destroy, list. Front doors import this module."""

from __future__ import annotations

import asyncio

from npa_sop_tui.errors import OperationError
from npa_sop_tui.home import inventory
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
    """Clusters in the inventory (with region, context, last operation and result)."""
    return inventory.list_clusters()


async def cluster_resources(name: str, options: LifecycleOptions | None = None) -> list[str]:
    """The resource addresses in a cluster's Terraform state, as Terraform lists them (a
    stand-in's read back as the real recipe's)."""
    from pathlib import Path

    from npa_sop_tui.lifecycle import steps

    options = options or LifecycleOptions()
    environment = steps.environment_of(options)
    store = environment.state_store()
    entry = inventory.require(name, store=store)
    if not entry.install_dir:
        return []
    if not Path(entry.install_dir).is_dir() and store.shared:
        # deployed from another machine: read the state in the team's bucket
        return store.resource_addresses(name) or []
    recorded = entry.recipe.path if entry.recipe is not None else None
    recipe = await environment.recipe(Path(recorded) if recorded else None)
    setup = await environment.terraform(recipe)
    from npa_sop_tui.terraform.runner import TerraformRunner

    keys = await asyncio.to_thread(store.terraform_env)  # the bucket's key, if minted
    runner = TerraformRunner(
        setup.binary.path, operation_id="query", on_event=lambda e: None, env={**setup.env, **keys}
    )
    code, out, err = await runner.capture(["state", "list"], cwd=Path(entry.install_dir))
    if code != 0:
        if "No state file" in err:
            return []
        raise OperationError(f"terraform state list failed: {err.strip()[-400:]}")
    from npa_sop_tui.terraform.standin_addresses import real_address

    # a stand-in's resources at the real recipe's addresses, its in-place parts not apart
    return sorted({real_address(line.strip())[0] for line in out.splitlines() if line.strip()})
