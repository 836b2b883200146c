"""`destroy`: terraform destroy of an inventoried cluster; incomplete unless state is empty."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from npa_sop_tui.errors import UsageError
from npa_sop_tui.events import PlanSummary
from npa_sop_tui.home import inventory
from npa_sop_tui.home.inventory import InventoryEntry
from npa_sop_tui.lifecycle import steps
from npa_sop_tui.lifecycle.operation import Operation, Sink, operation
from npa_sop_tui.lifecycle.results import DestroyIncomplete, DestroyResult, LifecycleOptions
from npa_sop_tui.recipe import source
from npa_sop_tui.recipe.source import Installation
from npa_sop_tui.redact import Redactor
from npa_sop_tui.state.backend import explain_failure

if TYPE_CHECKING:
    from npa_sop_tui.spec.model import SoperatorSpec
    from npa_sop_tui.state.store import StateStore


async def destroy(
    name: str,
    *,
    options: LifecycleOptions | None = None,
    on_event: Sink | None = None,
) -> DestroyResult:
    options = options or LifecycleOptions()
    store = steps.store_of(options)
    entry = inventory.require(name, store=store)
    recorded_dir = Path(entry.install_dir) if entry.install_dir else None
    here = recorded_dir is not None and recorded_dir.is_dir()
    if not here and not store.shared:
        raise UsageError(
            f"cluster {name!r} has no installation folder ({entry.install_dir or 'none recorded'})",
            hint="it may never have been deployed; remove its inventory folder if it is gone",
        )
    if options.source_preflight_only:
        from npa_sop_tui.lifecycle.source_check import source_preflight_destroy

        return await source_preflight_destroy(entry, recorded_dir if here else None, options)
    redactor = Redactor(options.capacity.values())
    with operation("destroy", name, on_event, redactor, store) as op:
        if here:
            assert recorded_dir is not None
            ctx, install = await _existing(op, name, recorded_dir, entry, options)
        else:
            # Deployed from another machine: its state is in the team's bucket; build this
            # machine's installation from the spec as deployed, kept beside it.
            ctx, install, _ = await steps.prepare(op, deployed_spec(store, name), options)
        install_dir = install.dir
        assert op.entry is not None
        op.entry.install_dir = str(install_dir)
        op.entry.state = "destroying"
        op.save_entry()
        await steps.init(ctx, install)
        before = await steps.state_list(ctx, install)
        op.emit(
            PlanSummary(operation_id=op.id, phase="destroy", add=0, change=0, remove=len(before))
        )
        op.phase("destroy", f"Destroying {len(before)} resources")
        from npa_sop_tui.lifecycle import cloud_steps

        owned = cloud_steps.owned_resources(op.store, name, install_dir)
        run = await steps.destroy(ctx, install)
        bucket_down = None if run.ok else explain_failure(install_dir, op.store, "destroy")
        if bucket_down:
            raise bucket_down
        remaining = await steps.state_list(ctx, install)
        if remaining or not run.ok:
            reason = run.error_text() if not run.ok else "resources are still in state"
            raise DestroyIncomplete(name, remaining, reason)
        leftovers = await cloud_steps.verify_destroyed(
            op, name, cloud_steps.identity_from_env(ctx.env, options), owned, options,
            ctx.environment, ctx.recipe,
        )  # fmt: skip
        if leftovers:
            raise DestroyIncomplete(name, leftovers, "still present in Nebius after destroy")
        op.entry.state = "destroyed"
        op.entry.outputs = {}
        shutil.rmtree(install_dir / ".npa-plan", ignore_errors=True)
        op.message = f"destroyed {name!r}: {len(before)} resources removed"
        return DestroyResult(
            operation_id=op.id,
            name=name,
            duration=op.duration,
            log=op.log_path,
            install_dir=str(install_dir),
            destroyed=len(before),
        )


async def _existing(
    op: Operation, name: str, install_dir: Path, entry: InventoryEntry, options: LifecycleOptions
) -> tuple[steps.Context, Installation]:
    environment = steps.environment_of(options)
    # The recipe the cluster was deployed with, unless told otherwise.
    recorded = entry.recipe.path if entry.recipe is not None else None
    terraform_dir = environment.settings.terraform_dir or recorded
    ctx = await steps.context_for(op, environment, options, terraform_dir=terraform_dir)
    install = source.existing_installation(ctx.recipe, install_dir, name)
    ctx.env = {**install.read_env(), **ctx.env}
    ctx.mask_environment()
    steps.use_state_backend(ctx, install)
    op.observe(await environment.observer(name, None))
    ctx.announce(install_dir)
    return ctx, install


def deployed_spec(store: StateStore, name: str) -> SoperatorSpec:
    from npa_sop_tui.spec.model import load_spec

    path = store.spec_file(name)
    if path is None:
        raise UsageError(
            f"cluster {name!r} has no spec as deployed in {store.describe()}, so its "
            "installation cannot be rebuilt on this machine",
            hint="destroy it from the machine that deployed it",
        )
    return load_spec(path, validate=False).spec
