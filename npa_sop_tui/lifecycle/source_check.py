"""`--source-preflight-only` for deploy and destroy: resolve and check the recipe source,
then stop — no lock, no log, nothing planned, applied or destroyed (the existing npa's flag)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from npa_sop_tui.spec.model import SoperatorSpec


async def source_preflight(spec: SoperatorSpec, options: Any) -> Any:
    """`--source-preflight-only` for deploy: resolve and check the recipe source, then stop
    (no lock, no log, nothing planned or applied)."""
    import time

    from npa_sop_tui.home.inventory import RecipeInfo
    from npa_sop_tui.lifecycle.results import DeployResult
    from npa_sop_tui.lifecycle.steps import environment_of
    from npa_sop_tui.recipe import installation
    from npa_sop_tui.recipe.compat import check_recipe_for_spec
    from npa_sop_tui.spec.model import kube_context

    started = time.time()
    environment = environment_of(options)
    recipe = await environment.recipe(None, spec_version=spec.slurm_operator_version)
    setup = await environment.terraform(recipe)
    check_recipe_for_spec(recipe, spec, setup.binary)
    return DeployResult(
        operation_id="source-preflight",
        name=spec.name,
        duration=time.time() - started,
        kube_context=kube_context(spec.name),
        outputs={},
        install_dir=str(installation.installation_dir(recipe, spec.name)),
        recipe=RecipeInfo(
            origin=recipe.origin, path=str(recipe.root), ref=recipe.ref, version=recipe.version
        ),
        resources=0,
        phases=[],
        status="source-preflight-passed",
        deployment_status="not-applied",
    )


async def source_preflight_destroy(entry: Any, install_dir: Path | None, options: Any) -> Any:
    """`--source-preflight-only` for destroy: the recipe the cluster was deployed with
    resolves and holds its installation; nothing is destroyed."""
    import time

    from npa_sop_tui.lifecycle.results import DestroyResult
    from npa_sop_tui.lifecycle.steps import environment_of
    from npa_sop_tui.recipe import installation

    started = time.time()
    from npa_sop_tui.home.recorded_paths import recipe_dir

    environment = environment_of(options)
    recipe = await environment.recipe(recipe_dir(entry, environment.settings))
    await environment.terraform(recipe)
    if install_dir is not None:  # else the state is in the team's bucket, built at destroy
        installation.existing_installation(recipe, install_dir, entry.name)
    return DestroyResult(
        operation_id="source-preflight",
        name=entry.name,
        duration=time.time() - started,
        install_dir=str(install_dir or ""),
        destroyed=0,
        status="source-preflight-passed",
    )
