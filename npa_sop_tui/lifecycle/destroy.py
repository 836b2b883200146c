"""`destroy`: terraform destroy of an inventoried cluster; incomplete unless state is empty."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from npa_sop_tui.errors import UsageError
from npa_sop_tui.events import PlanSummary
from npa_sop_tui.home import recorded_paths as recorded
from npa_sop_tui.home.inventory import InventoryEntry
from npa_sop_tui.lifecycle import steps
from npa_sop_tui.lifecycle.operation import Operation, Sink, operation
from npa_sop_tui.lifecycle.results import DestroyIncomplete, DestroyResult, LifecycleOptions
from npa_sop_tui.recipe import installation
from npa_sop_tui.recipe.installation import Installation
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
    from npa_sop_tui.lifecycle.adopt import arequire_cluster

    options = options or LifecycleOptions()
    store = steps.store_of(options)
    entry = await arequire_cluster(name, store=store, options=options)
    settings = steps.environment_of(options).settings
    # a record's paths are data: used inside this home, or where the settings point
    recorded_dir = recorded.install_dir(entry, settings, shared=store.shared)
    if options.project:
        _check_project(entry, recorded_dir, options)
    here = recorded_dir is not None and recorded_dir.is_dir()
    if here:
        recorded.recipe_dir(entry, settings)  # refused here, before the lock and the log
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
        if here and entry.adoption is not None:
            from npa_sop_tui.lifecycle import adopted_steps

            assert recorded_dir is not None
            ctx, install = await adopted_steps.existing(op, entry, recorded_dir, options)
        elif here:
            assert recorded_dir is not None
            ctx, install = await _existing(op, name, recorded_dir, entry, options)
        else:
            # Deployed from another machine: its state is in the team's bucket; build this
            # machine's installation from the spec as deployed, kept beside it.
            ctx, install, _ = await steps.prepare(op, _deployed_spec(store, name), options)
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
        shutil.rmtree(install.files_dir / ".npa-plan", ignore_errors=True)
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
    terraform_dir = recorded.recipe_dir(entry, environment.settings)
    ctx = await steps.context_for(op, environment, options, terraform_dir=terraform_dir)
    install = installation.existing_installation(ctx.recipe, install_dir, name)
    ctx.env = {**install.read_env(), **ctx.env}
    ctx.mask_environment()
    steps.use_state_backend(ctx, install)
    op.observe(await environment.observer(name, None))
    ctx.announce(install_dir)
    return ctx, install


def _check_project(
    entry: InventoryEntry, install_dir: Path | None, options: LifecycleOptions
) -> None:
    """npa's `destroy --project`: the cluster's recorded project decides; a different one
    named here is refused, never followed."""
    environment = steps.environment_of(options)
    if entry.adoption is not None:
        from npa_sop_tui.lifecycle.adopted_steps import checked_identity

        checked_identity(entry, None, environment.settings, options.project)
        return
    recorded = None
    if install_dir is not None:
        recorded = installation.recorded_env(install_dir).get("TF_VAR_iam_project_id")
    wanted = environment.settings["project_id"]
    if recorded and wanted and wanted != recorded:
        raise UsageError(
            f"project {options.project!r} does not match the persisted project_id for "
            f"existing installation {entry.name!r}; refusing to destroy",
            hint=f"its project is {recorded!r}; drop --project",
        )


def _deployed_spec(store: StateStore, name: str) -> SoperatorSpec:
    from npa_sop_tui.spec.model import load_spec

    path = store.spec_file(name)
    if path is None:
        raise UsageError(
            f"cluster {name!r} has no spec as deployed in {store.describe()}, so its "
            "installation cannot be rebuilt on this machine",
            hint="destroy it from the machine that deployed it",
        )
    return load_spec(path, validate=False).spec
