"""Plan, deploy and destroy of an adopted cluster (lifecycle/adopt.py), where it is.

Terraform runs in the cluster's own installation folder and recipe, with the identity the
cluster is pinned to (the existing npa's sidecar, re-read every time, or what adoption
recorded): a spec or `--project` naming another region, tenant, project or subnet is
refused, as npa refuses it, because Terraform would replace the whole cluster. The variables
are the ones it was deployed with, with the spec's fields on top (recipe/adopted.py); they
and the environment go to our own folder (`<npa home>/soperator/<name>/adopted/`) and reach
Terraform as `-var-file`, so the installation's files stay as their owner left them.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from npa_sop_tui.errors import UsageError
from npa_sop_tui.home import npa_installs
from npa_sop_tui.home.config import Identity
from npa_sop_tui.lifecycle import adopt_read

if TYPE_CHECKING:
    from npa_sop_tui.home.inventory import InventoryEntry
    from npa_sop_tui.home.settings import Settings
    from npa_sop_tui.lifecycle.operation import Operation
    from npa_sop_tui.lifecycle.results import LifecycleOptions
    from npa_sop_tui.lifecycle.steps import Context
    from npa_sop_tui.recipe.installation import Installation
    from npa_sop_tui.recipe.render import Rendered
    from npa_sop_tui.spec.model import SoperatorSpec

OWN_DIR = "adopted"


def own_dir(name: str) -> Path:
    from npa_sop_tui.home.paths import cluster_dir

    return cluster_dir(name) / OWN_DIR


def pinned(entry: InventoryEntry) -> dict[str, str]:
    """The identity an adopted cluster is pinned to (npa's sidecar is authoritative)."""
    assert entry.adoption is not None
    if entry.adoption.origin != "npa" or not entry.install_dir:
        return dict(entry.adoption.identity)
    install = npa_installs.install_at(Path(entry.install_dir))
    if install.problem is not None:
        raise UsageError(
            f"the existing npa's installation of {entry.name!r} cannot be used: {install.problem}",
            hint="npa refuses to act on it too; restore the sidecar from a backup",
        )
    return install.identity()


def tf_environment(entry: InventoryEntry) -> dict[str, str]:
    """The TF_VAR_* an adopted cluster runs with (as its deployer set them)."""
    assert entry.adoption is not None
    identity = pinned(entry)  # refuses a sidecar npa would refuse
    if entry.adoption.origin == "npa":
        return adopt_read.npa_environment(npa_installs.install_at(Path(str(entry.install_dir))))
    return {**adopt_read.identity_env(identity), **entry.adoption.env}


def checked_identity(
    entry: InventoryEntry, spec: SoperatorSpec | None, settings: Settings, project: str | None
) -> Identity:
    """The pinned identity, refusing a spec or `--project` that would move the cluster."""
    identity = pinned(entry)
    for field in adopt_read.IDENTITY_FIELDS:
        requested = getattr(spec, field, None) if spec is not None else None
        if requested and requested != identity.get(field):
            raise UsageError(
                f"existing installation {entry.name!r} is pinned to its persisted {field}; "
                "refusing a provider-replacement deploy. Restore the original value or deploy "
                "a distinct cluster name",
                hint=f"its {field} is {identity.get(field)!r} ({entry.install_dir})",
            )
    if project:
        from npa_sop_tui.home import npa_config

        if npa_config.is_alias(settings.config, project):
            section = npa_config.chosen_section(settings.config, project)
            requested_values = section.values if section is not None else {}
        else:
            requested_values = {"project_id": project}
        for field, requested in requested_values.items():
            if requested != identity.get(field):
                raise UsageError(
                    f"project {project!r} does not match the persisted {field} for existing "
                    f"installation {entry.name!r}; refusing a provider-replacement deploy",
                    hint=f"its {field} is {identity.get(field)!r}; drop --project",
                )
    return Identity(**{k: identity.get(k) for k in adopt_read.IDENTITY_FIELDS})


async def prepare_any(
    op: Operation, spec: SoperatorSpec, options: LifecycleOptions
) -> tuple[Context, Installation, Rendered]:
    """`steps.prepare`, or for an adopted cluster `prepare` (plan and deploy call this)."""
    from npa_sop_tui.lifecycle import steps

    if op.entry is not None and op.entry.adoption is not None:
        return await prepare(op, spec, options, op.entry)
    return await steps.prepare(op, spec, options)


async def prepare(
    op: Operation, spec: SoperatorSpec, options: LifecycleOptions, entry: InventoryEntry
) -> tuple[Context, Installation, Rendered]:
    """`steps.prepare` for an adopted cluster: its recipe, its pinned identity, its
    variables as deployed under the spec's."""
    from npa_sop_tui.home import inventory
    from npa_sop_tui.home import recorded_paths as recorded
    from npa_sop_tui.home.paths import cluster_dir
    from npa_sop_tui.lifecycle import steps
    from npa_sop_tui.lifecycle.adopt import read_adopted_variables
    from npa_sop_tui.recipe import adopted, installation
    from npa_sop_tui.recipe.compat import check_recipe_for_spec
    from npa_sop_tui.redact import declared_variables, sensitive_variables

    assert entry.adoption is not None and entry.install_dir and entry.recipe is not None
    environment = steps.environment_of(options)
    # the record's folders are data: used inside the home, or where the user names them
    install_dir = recorded.install_dir(entry, environment.settings, shared=False)
    assert install_dir is not None
    terraform_dir = recorded.recipe_dir(entry, environment.settings)
    ctx = await steps.context_for(op, environment, options, terraform_dir=terraform_dir)
    recipe_ref = check_recipe_for_spec(ctx.recipe, spec, ctx.binary)
    identity = checked_identity(entry, spec, environment.settings, options.project)
    capacity, rendered = await steps.render_for(op, spec, identity, options, ctx, recipe_ref)
    declared = set(declared_variables(install_dir))
    deployed = read_adopted_variables(spec.name)
    tfvars = adopted.merge(
        deployed,
        {k: v for k, v in rendered.tfvars.items() if k in declared},
        kept=set(entry.adoption.kept),
        reserved=set(capacity),
    )
    secret = sensitive_variables(install_dir)
    op.redactor.add(*rendered.secrets, *capacity.values(), *_strings(tfvars, secret))
    env = tf_environment(entry)
    ctx.env = {**env, **ctx.env}
    ctx.mask_environment()
    own = own_dir(spec.name)
    op.rollback.keep(
        own / "terraform.tfvars.json",
        own / ".npa-env.json",
        cluster_dir(spec.name) / inventory.SPEC_FILE,
    )
    install = await asyncio.to_thread(
        installation.prepare_adopted, ctx.recipe, install_dir, spec.name, tfvars, env, own
    )
    steps.use_state_backend(ctx, install)
    op.observe(await environment.observer(spec.name, spec))
    ctx.announce(install.dir)
    return ctx, install, rendered


def _strings(tfvars: dict[str, Any], names: set[str]) -> list[str]:
    """The values of sensitive variables (masked in every sink)."""
    return [v for k, v in tfvars.items() if k in names and isinstance(v, str) and v]


async def existing(
    op: Operation, entry: InventoryEntry, install_dir: Path, options: LifecycleOptions
) -> tuple[Context, Installation]:
    """`destroy`'s installation of an adopted cluster: its folder (`install_dir`, the record's
    when it may be used), its recipe, its variables (the last ones we applied, else its own)
    and its pinned environment."""
    from npa_sop_tui.home import recorded_paths as recorded
    from npa_sop_tui.lifecycle import steps
    from npa_sop_tui.recipe import installation

    assert entry.adoption is not None and entry.recipe is not None
    environment = steps.environment_of(options)
    terraform_dir = recorded.recipe_dir(entry, environment.settings)
    ctx = await steps.context_for(op, environment, options, terraform_dir=terraform_dir)
    install = installation.existing_installation(
        ctx.recipe, install_dir, entry.name, own_dir=own_dir(entry.name)
    )
    ctx.env = {**tf_environment(entry), **ctx.env}
    ctx.mask_environment()
    steps.use_state_backend(ctx, install)
    op.observe(await environment.observer(entry.name, None))
    ctx.announce(install.dir)
    return ctx, install
