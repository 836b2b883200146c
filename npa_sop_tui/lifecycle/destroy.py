"""`destroy`: terraform destroy of an inventoried cluster; incomplete unless state is empty."""

from __future__ import annotations

import shutil
from pathlib import Path

from npa_sop_tui import inventory
from npa_sop_tui.errors import UsageError
from npa_sop_tui.events import PlanSummary
from npa_sop_tui.lifecycle import steps
from npa_sop_tui.lifecycle.operation import Sink, operation
from npa_sop_tui.lifecycle.results import DestroyIncomplete, DestroyResult, LifecycleOptions
from npa_sop_tui.recipe import source
from npa_sop_tui.redact import Redactor


async def destroy(
    name: str,
    *,
    options: LifecycleOptions | None = None,
    on_event: Sink | None = None,
) -> DestroyResult:
    options = options or LifecycleOptions()
    entry = inventory.require(name)
    if not entry.install_dir or not Path(entry.install_dir).is_dir():
        raise UsageError(
            f"cluster {name!r} has no installation folder ({entry.install_dir or 'none recorded'})",
            hint="it may never have been deployed; remove its inventory folder if it is gone",
        )
    install_dir = Path(entry.install_dir)
    with operation("destroy", name, on_event, Redactor(options.capacity.values())) as op:
        environment = steps.environment_of(options)
        # The recipe the cluster was deployed with, unless told otherwise.
        recorded = entry.recipe.path if entry.recipe is not None else None
        terraform_dir = environment.settings.terraform_dir or recorded
        ctx = await steps.context_for(op, environment, options, terraform_dir=terraform_dir)
        install = source.existing_installation(ctx.recipe, install_dir, name)
        ctx.env = {**install.read_env(), **ctx.env}
        op.observe(await environment.observer(name, None))
        ctx.announce(install_dir)
        assert op.entry is not None
        op.entry.state = "destroying"
        op.save_entry()
        await steps.init(ctx, install)
        before = await steps.state_list(ctx, install)
        op.emit(
            PlanSummary(operation_id=op.id, phase="destroy", add=0, change=0, remove=len(before))
        )
        op.phase("destroy", f"Destroying {len(before)} resources")
        run = await steps.destroy(ctx, install)
        remaining = await steps.state_list(ctx, install)
        if remaining or not run.ok:
            reason = run.error_text() if not run.ok else "resources are still in state"
            raise DestroyIncomplete(name, remaining, reason)
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
