"""The steps operations are made of: prepare an installation, then Terraform init/plan/apply.

`prepare` resolves everything an operation needs once — settings, recipe, Terraform, identity,
root key, capacity, the rendered variables and the installation folder — through the
operation's `Environment`, and returns a `Context` the Terraform steps run in.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from npa_sop_tui.environment import Environment
from npa_sop_tui.errors import OperationError, UsageError
from npa_sop_tui.events import Diagnostic, PlanSummary, RecipeResolved
from npa_sop_tui.home.inventory import RecipeInfo
from npa_sop_tui.lifecycle import recovery
from npa_sop_tui.lifecycle.operation import Operation
from npa_sop_tui.lifecycle.results import DestructivePlanError, LifecycleOptions, TerraformFailed
from npa_sop_tui.recipe.compat import check_recipe_for_spec
from npa_sop_tui.recipe.installation import Installation
from npa_sop_tui.recipe.source import Recipe
from npa_sop_tui.redact import sensitive_variables
from npa_sop_tui.state import backend as state_backend
from npa_sop_tui.terraform.plan_reading import PlanChanges, summarize_plan
from npa_sop_tui.terraform.runner import RunResult, TerraformBinary, TerraformRunner

if TYPE_CHECKING:
    from npa_sop_tui.home.settings import Settings
    from npa_sop_tui.recipe.render import Rendered
    from npa_sop_tui.spec.model import SoperatorSpec
    from npa_sop_tui.state.store import StateStore


def environment_of(options: LifecycleOptions) -> Environment:
    """The operation's environment, with the call's explicit settings applied once."""
    env = options.environment or Environment()
    flags = options.flags()
    return env.with_settings(env.settings.with_values(**flags)) if flags else env


def store_of(options: LifecycleOptions) -> StateStore:
    """Where the operation keeps its records, lock and Terraform state (local or a bucket)."""
    return environment_of(options).state_store()


@dataclass
class Context:
    op: Operation
    environment: Environment
    recipe: Recipe
    binary: TerraformBinary
    env: dict[str, str]
    parallelism: int | None
    timeout_minutes: float | None = None  # --timeout, per plan/apply/destroy

    @property
    def settings(self) -> Settings:
        return self.environment.settings

    def runner(self, extra_env: Mapping[str, str] | None = None) -> TerraformRunner:
        return TerraformRunner(
            self.binary.path,
            operation_id=self.op.id,
            on_event=self.op.emit,
            env={**self.env, **(extra_env or {})},
            text_filter=self.op.redactor.text,
            lock=self.op.lock,  # a Terraform that outlives npa keeps the cluster locked
        )

    def mask_environment(self) -> None:
        """Secrets in Terraform's environment are masked in every sink from now on."""
        self.op.redactor.add_environment(self.env, sensitive_variables(self.recipe.example_dir))

    def recipe_info(self) -> RecipeInfo:
        return RecipeInfo(
            origin=self.recipe.origin,
            path=str(self.recipe.root),
            ref=self.recipe.ref,
            version=self.recipe.version,
        )

    def announce(self, install_dir: Path) -> None:
        self.op.emit(
            RecipeResolved(
                operation_id=self.op.id,
                origin=self.recipe.origin,
                path=str(self.recipe.root),
                ref=self.recipe.ref,
                version=self.recipe.version,
                install_dir=str(install_dir),
                terraform_bin=self.binary.path,
                terraform_version=self.binary.version,
            )
        )


async def context_for(
    op: Operation,
    environment: Environment,
    options: LifecycleOptions,
    *,
    terraform_dir: Any,
    spec_version: str | None = None,
) -> Context:
    """Recipe and Terraform from the environment; Terraform's environment assembled once."""
    recipe = await environment.recipe(
        Path(terraform_dir) if terraform_dir else None, spec_version=spec_version
    )
    setup = await environment.terraform(recipe)
    env = {**setup.env, **environment.terraform_env(), **options.env}
    return Context(
        op=op,
        environment=environment,
        recipe=recipe,
        binary=setup.binary,
        env=env,
        parallelism=environment.settings.parallelism,
        timeout_minutes=options.timeout_minutes,
    )


def check_spec(spec: SoperatorSpec) -> None:
    from npa_sop_tui.spec.findings import errors_of
    from npa_sop_tui.spec.model import SpecError
    from npa_sop_tui.spec.validate import validate_spec

    findings = validate_spec(spec)
    if errors_of(findings):
        raise SpecError(findings, source=f"spec {spec.name!r}")


def capacity_of(spec: SoperatorSpec, capacity: dict[str, str]) -> dict[str, str]:
    pools = {w.name for w in spec.workers}
    unknown = sorted(set(capacity) - pools)
    if unknown:
        raise UsageError(
            f"capacity block groups given for unknown worker pool(s): {', '.join(unknown)}",
            hint=f"pools in this spec: {', '.join(sorted(pools))}",
        )
    return capacity


def identity_preflight(spec: SoperatorSpec, options: LifecycleOptions) -> None:
    """Say what identity is missing before the operation takes the lock or writes its log,
    so a mistake in the input leaves nothing behind (where the environment can tell without
    resolving the recipe; otherwise `prepare` checks once it is resolved)."""
    if options.identity is not None:
        return
    from npa_sop_tui.home import inventory

    entry = inventory.get(spec.name, store=store_of(options))
    if entry is not None and entry.adoption is not None:
        return  # pinned where it was deployed (adopted_steps.checked_identity)
    environment_of(options).identity_before_recipe(spec, cloud_timeout=options.cloud_timeout)


async def prepare(
    op: Operation, spec: SoperatorSpec, options: LifecycleOptions
) -> tuple[Context, Installation, Rendered]:
    """Everything up to a ready installation folder (no Terraform run yet)."""
    from npa_sop_tui.home import inventory
    from npa_sop_tui.home.paths import cluster_dir
    from npa_sop_tui.recipe import installation

    environment = environment_of(options)
    if options.preflight and options.cloud is None:
        from npa_sop_tui.cloud.client import warm_up

        warm_up()  # the SDK's import overlaps with the recipe and Terraform discovery
    ctx = await context_for(
        op, environment, options, terraform_dir=None, spec_version=spec.slurm_operator_version
    )
    # The recipe must ship the spec's version and allow this Terraform (exit 2 otherwise);
    # its commit decides the variables' contract.
    recipe_ref = check_recipe_for_spec(ctx.recipe, spec, ctx.binary)
    from npa_sop_tui.lifecycle.flags import with_project

    identity = options.identity or await asyncio.to_thread(
        environment.identity, spec, ctx.recipe, cloud_timeout=options.cloud_timeout
    )  # a lookup waits on the cloud: never on the event loop (the app's)
    identity = with_project(identity, spec, options.project)
    capacity, rendered = await render_for(op, spec, identity, options, ctx, recipe_ref)
    op.redactor.add(*rendered.secrets, *capacity.values())
    ctx.env = {**rendered.env, **ctx.env}
    ctx.mask_environment()
    target = installation.installation_dir(ctx.recipe, spec.name)
    op.rollback.keep(
        target / "terraform.tfvars.json",
        target / ".npa-env.json",
        cluster_dir(spec.name) / inventory.SPEC_FILE,
    )
    install = await asyncio.to_thread(
        installation.prepare_installation, ctx.recipe, spec.name, rendered.tfvars, rendered.env
    )
    use_state_backend(ctx, install)
    op.observe(await environment.observer(spec.name, spec))
    ctx.announce(install.dir)
    return ctx, install, rendered


async def render_for(
    op: Operation,
    spec: SoperatorSpec,
    identity: Any,
    options: LifecycleOptions,
    ctx: Context,
    recipe_ref: str | None,
) -> tuple[dict[str, str], Rendered]:
    """The run-time capacity (resolved by the cloud preflight of a plan or deploy; a destroy
    rebuilding its installation needs none) and the variables rendered with it."""
    from npa_sop_tui.lifecycle import cloud_steps
    from npa_sop_tui.recipe.render import render

    environment = ctx.environment
    capacity = capacity_of(spec, environment.settings.capacity)
    if op.kind in ("plan", "deploy"):
        capacity, op.preflight = await cloud_steps.preflight(
            op, spec, identity, capacity, options, environment, ctx.recipe
        )
    key = environment.root_login_key(spec, ctx.recipe)
    op.note(f"root login key {key.describe()}")
    rendered = render(
        spec,
        identity=identity,
        recipe_version=options.recipe_version,
        recipe_ref=recipe_ref,
        capacity=capacity or None,
        root_login_key=key,
        validate=op.kind != "destroy",  # the spec as deployed, under the rules of its day
    )
    return capacity, rendered


# ---------------------------------------------------------------------------------------------
# Terraform steps


def use_state_backend(ctx: Context, install: Installation) -> None:
    """Point the installation's Terraform at the configured state backend (local or s3);
    an adopted installation keeps the backend it was set up with (its own, or the team's
    bucket `state migrate` moved it to), and gets the bucket's key like any other."""
    store = ctx.op.store
    if not install.adopted:
        state_backend.configure_installation(install.dir, store, install.name, ctx.binary.version)
    if store.shared:  # Terraform reads the same access key from its environment
        minted = store.terraform_env()  # a key minted from the Nebius profile, if that is it
        ctx.env.update(minted)
        secrets = [os.environ.get("AWS_SECRET_ACCESS_KEY"), minted.get("AWS_SECRET_ACCESS_KEY")]
        ctx.op.redactor.add(*filter(None, secrets))


async def init(ctx: Context, install: Installation) -> None:
    ctx.op.phase("init", "Preparing Terraform (init)")
    if not ctx.op.store.shared:  # a local state cut short by a full disk (recovery.py)
        recovery.restore_state_file(install.dir, ctx.op.warn)
    if install.adopted:
        return await _init_adopted(ctx, install)
    backend_args = state_backend.init_args(install.dir, ctx.op.store, install.name)
    from npa_sop_tui.terraform import init_seed, plugin_cache

    cache = plugin_cache.cache_dir(ctx.environment.settings["plugin_cache_dir"])
    async with plugin_cache.guarded_init(cache) as cache_env:
        ctx.env.update(cache_env)  # plan/apply read the providers init linked from it
        run = await init_seed.init_with_cache(
            install.dir,
            cache,
            ctx.binary.version,
            f"{ctx.recipe.root}@{ctx.recipe.ref}",
            ["-input=false", "-no-color", *backend_args],
            {**os.environ, **ctx.env},
            lambda args, cwd, extra: ctx.runner(extra).run(args, cwd=cwd, json_ui=False),
            lambda run: run.ok,
            ctx.op.note,
        )
        if run is None:
            ctx.op.note("terraform init skipped: nothing it depends on changed since the last one")
    # Name the recipe on failure: init fails on its providers and module sources.
    if run is not None and not run.ok:
        bucket_down = state_backend.explain_failure(install.dir, ctx.op.store, "init")
        if bucket_down:
            raise bucket_down
        raise TerraformFailed(
            f"init (recipe {ctx.recipe.root}, ref {ctx.recipe.ref})", run, install.dir
        )
    # State Terraform could not save last time goes back before anything else: into the
    # team's bucket (state/backend.py), or, for local state, after a full disk (recovery.py).
    if ctx.op.store.shared:
        await state_backend.push_errored(ctx.runner(), install.dir, ctx.op.store, ctx.op.note)
    else:
        await recovery.push_errored_state(ctx.runner().capture, install.dir, ctx.op.warn)


async def _init_adopted(ctx: Context, install: Installation) -> None:
    """An adopted installation's init: plain `terraform init` with its own backend and
    lock file (no shared provider cache linked into its `.terraform`, no record of ours)."""
    run = await ctx.runner().run(
        ["init", "-input=false", "-no-color"], cwd=install.dir, json_ui=False
    )
    if not run.ok:
        raise TerraformFailed(f"init (adopted installation {install.dir})", run, install.dir)


def _plan_dir(install: Installation) -> Path:
    from npa_sop_tui.home.files import ensure_dir

    # 0700 (through the home's owner): saved plans hold variable values, secrets included
    return ensure_dir(install.files_dir / ".npa-plan")


def _parallelism(ctx: Context) -> list[str]:
    return [f"-parallelism={ctx.parallelism}"] if ctx.parallelism else []


async def plan(
    ctx: Context, install: Installation, phase: str, label: str, targets: list[str]
) -> tuple[Path, PlanChanges]:
    ctx.op.phase(phase, label)
    plan_file = _plan_dir(install) / f"{phase.replace(':', '-')}.tfplan"
    args = ["plan", "-input=false", "-json", f"-out={plan_file}", *install.var_file_args()]
    args += [f"-target={t}" for t in targets]
    runner = ctx.runner()
    run = await within(
        ctx, runner.run([*args, *_parallelism(ctx)], cwd=install.dir), f"plan ({phase})"
    )
    if not run.ok:
        bucket_down = state_backend.explain_failure(install.dir, ctx.op.store, "plan")
        if bucket_down:
            raise bucket_down
        raise TerraformFailed("plan", run, install.dir)
    code, out, err = await runner.capture(["show", "-json", str(plan_file)], cwd=install.dir)
    if code != 0:
        raise OperationError(f"terraform show of the saved plan failed: {err.strip()[-400:]}")
    changes = summarize_plan(json.loads(out))
    ctx.op.emit(PlanSummary(operation_id=ctx.op.id, phase=phase, **changes.model_dump()))
    return plan_file, changes


async def apply(
    ctx: Context, install: Installation, plan_file: Path, phase: str, label: str
) -> RunResult:
    ctx.op.phase(phase, label)
    ctx.op.applied = True
    args = ["apply", "-input=false", "-json", "-auto-approve", *_parallelism(ctx)]
    try:
        run = await within(
            ctx, ctx.runner().run([*args, str(plan_file)], cwd=install.dir), f"apply ({phase})"
        )
    finally:
        plan_file.unlink(missing_ok=True)
    if not run.ok:
        bucket_down = state_backend.explain_failure(install.dir, ctx.op.store, "apply")
        if bucket_down:
            raise bucket_down
        raise TerraformFailed("apply", run, install.dir)
    return run


async def destroy(ctx: Context, install: Installation) -> RunResult:
    args = ["destroy", "-input=false", "-json", "-auto-approve", *_parallelism(ctx)]
    args += install.var_file_args()
    return await within(ctx, ctx.runner().run(args, cwd=install.dir), "destroy")


async def within(ctx: Context, run: Any, what: str) -> RunResult:
    """`run` bounded by `--timeout` (a graceful stop, then `TerraformTimeout` saying where)."""
    from npa_sop_tui.lifecycle.flags import bounded

    return await bounded(run, ctx.timeout_minutes, what=what, in_flight=ctx.op.in_flight)


async def state_list(ctx: Context, install: Installation) -> list[str]:
    code, out, err = await ctx.runner().capture(["state", "list"], cwd=install.dir)
    if code != 0:
        if "No state file" in err or "does not have any resources" in err:
            return []
        raise OperationError(f"terraform state list failed: {err.strip()[-400:]}")
    return [line for line in out.splitlines() if line.strip()]


async def outputs(ctx: Context, install: Installation) -> dict[str, Any]:
    code, out, _ = await ctx.runner().capture(["output", "-json"], cwd=install.dir)
    if code != 0:
        return {}
    try:
        data = json.loads(out or "{}")
    except ValueError:
        return {}
    return {k: v.get("value") for k, v in data.items()}


def guard(changes: PlanChanges, allow_destructive: bool, phase: str, op: Operation) -> None:
    """Refuse a plan that deletes or replaces anything, unless allowed (then say so)."""
    if not changes.destructive:
        return
    if not allow_destructive:
        raise DestructivePlanError(changes.destructive, phase)
    op.emit(
        Diagnostic(
            operation_id=op.id,
            severity="warning",
            summary=f"applying a plan that deletes or replaces {len(changes.destructive)} "
            "resource(s) (destructive changes allowed)",
            detail="\n".join(changes.destructive),
        )
    )
