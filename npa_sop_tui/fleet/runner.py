"""Fleet operations: every target runs the same lifecycle functions as `npa soperator …`.

What the fleet adds around them: identity from the project/fleet envelope, one shared
network per project, ownership markers, at most N targets at once, per-target outcomes
(a partial failure never hides the targets that succeeded) and the fleet state file.
Everything that can fail without touching Terraform is checked for every selected target
before the first one starts.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from npa_sop_tui import inventory
from npa_sop_tui.errors import NpaError, UsageError
from npa_sop_tui.events import Event
from npa_sop_tui.fleet import network as net
from npa_sop_tui.fleet.aggregate import aggregate, cluster_entry
from npa_sop_tui.fleet.loader import LoadedFleet
from npa_sop_tui.fleet.model import FleetTarget
from npa_sop_tui.fleet.state import TargetRecord, TargetState, fleet_lock, load_state, save_state
from npa_sop_tui.fsutil import SECRET_MODE, atomic_write_text
from npa_sop_tui.paths import cluster_dir

if TYPE_CHECKING:
    from npa_sop_tui.environment import Environment
    from npa_sop_tui.settings import Settings

Operation = Literal["plan", "deploy", "destroy"]
Outcome = Literal[
    "planned",
    "deployed",
    "destroyed",
    "absent",
    "failed",
    "interrupted",
    "destroy-incomplete",
    "not-run",
]
SUCCESS: frozenset[str] = frozenset({"planned", "deployed", "destroyed", "absent"})
MARKER = "target.json"

FleetEventSink = Callable[[FleetTarget, Event], None]


class TargetOutcome(BaseModel):
    model_config = ConfigDict(extra="forbid")

    key: str
    project_key: str
    name: str
    backend: str
    status: Outcome
    ok: bool
    message: str = ""
    started: float | None = None
    finished: float | None = None
    kube_context: str | None = None
    subnet_id: str | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


class FleetReport(BaseModel):
    model_config = ConfigDict(extra="forbid")

    fleet: str
    operation: Operation
    source: str
    concurrency: int
    ok: bool
    succeeded: int
    failed: int
    not_run: int
    targets: list[TargetOutcome]
    networks: list[net.NetworkRecord] = Field(default_factory=list)
    # npa's aggregate (fleet/aggregate.py); `failed` above is shared with it.
    name: str = ""
    tenant_id: str = ""
    region: str = ""
    project_prefix: str = ""
    profile: str = ""
    clusters: list[dict[str, Any]] = Field(default_factory=list)
    deployed: int = 0
    backend_counts: dict[str, int] = Field(default_factory=dict)


@dataclass
class FleetRunOptions:
    """How to run a fleet. `environment` is where its targets run; without one, the front
    door's choice `sandbox` opens the sandbox's or the real cloud's."""

    concurrency: int = 1
    fail_fast: bool = False
    sandbox: bool = False
    environment: Environment | None = None
    terraform_dir: str | Path | None = None
    env: dict[str, str] = field(default_factory=dict)
    parallelism: int | None = None
    allow_destructive: bool = False
    network_provider: net.NetworkProvider | None = None
    timeout_minutes: float | None = None  # --timeout: each Terraform plan/apply (None: 90)
    profile: str | None = None  # --profile: Nebius CLI profile (else the fleet file's)


def target_dir(target: FleetTarget) -> Path:
    return net.project_root(target.fleet, target.project_key) / target.name


def read_marker(target: FleetTarget) -> dict[str, Any] | None:
    try:
        data = json.loads((target_dir(target) / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):  # missing or damaged: not a marker this fleet can trust
        return None
    return data if isinstance(data, dict) else None


def _write_marker(target: FleetTarget, subnet_id: str | None) -> None:
    data = {
        "fleet": target.fleet,
        "project_key": target.project_key,
        "name": target.name,
        "backend": target.backend,
        "subnet_id": subnet_id,
        "inventory": str(cluster_dir(target.name)),
        "created": time.time(),
    }
    atomic_write_text(
        target_dir(target) / MARKER, json.dumps(data, indent=2) + "\n", mode=SECRET_MODE
    )


def _check_owned(target: FleetTarget) -> None:
    """A cluster of the same name that this fleet target did not create is not ours."""
    entry = inventory.get(target.name)
    if entry is None or entry.state == "destroyed":
        return  # the name is free
    marker = read_marker(target)
    if marker is None or marker.get("fleet") != target.fleet:
        raise UsageError(
            f"{target.key}: a cluster named {target.name!r} already exists in the local "
            "inventory and was not created by this fleet target",
            hint="soperator names (and kube contexts) are global; rename the target or "
            "destroy the other cluster first",
        )


def _require_soperator(targets: Sequence[FleetTarget], operation: str) -> None:
    other = [t for t in targets if t.backend != "soperator"]
    if other:
        listed = ", ".join(f"{t.key} (backend {t.backend}, {t.path})" for t in other)
        raise UsageError(
            f"cannot {operation} {listed}: npa-sop-tui runs soperator targets only",
            hint="narrow the selection with --select backend=soperator, or use the mk8s "
            "fleet tool for those targets",
        )


def _identity(target: FleetTarget, settings: Settings, subnet_id: str | None) -> Any:
    """Identity from the fleet envelope; settings fill tenant/region only (never project)."""
    from npa_sop_tui.config import IDENTITY_PREFIX, Identity

    values = {
        "tenant_id": target.tenant_id or settings["tenant_id"],
        "region": target.region or settings["region"],
        "project_id": target.project_id,
        "subnet_id": subnet_id,
    }
    where = {
        "tenant_id": "the fleet's tenant_id (or tenant_id in ~/.npa/config.yaml)",
        "region": f"projects[{target.project_index}].region or the fleet's region",
        "project_id": f"projects[{target.project_index}].project_id "
        "(this tool does not create projects)",
        "subnet_id": f"projects[{target.project_index}].subnet_id",
    }
    problems = [f"{k} is not set: add {where[k]}" for k, v in values.items() if not v]
    problems += [
        f"{k} {values[k]!r} must start with {prefix!r}"
        for k, prefix in IDENTITY_PREFIX.items()
        if values.get(k) and not str(values[k]).startswith(prefix)
    ]
    if problems:
        raise UsageError(
            f"{target.key}: identity is incomplete:\n  " + "\n  ".join(problems),
            hint="identity of fleet targets comes from the project and fleet envelope",
        )
    return Identity(**values)


class FleetRunner:
    def __init__(
        self,
        loaded: LoadedFleet,
        targets: Sequence[FleetTarget],
        options: FleetRunOptions | None = None,
        on_event: FleetEventSink | None = None,
    ) -> None:
        self.loaded = loaded
        self.targets = list(targets)
        self.options = options or FleetRunOptions()
        self.on_event = on_event
        from npa_sop_tui.environment_choice import open_environment

        self.environment = self.options.environment or open_environment(
            sandbox=self.options.sandbox
        )
        if self.options.concurrency < 1:
            raise UsageError("--concurrency must be at least 1")

    def force(self) -> None:
        """Cancel the running targets once more: the lifecycle then kills Terraform
        instead of waiting for its graceful stop (the second Ctrl-C)."""
        for task in getattr(self, "_tasks", []):
            if not task.done():
                task.cancel()

    # -- shared --------------------------------------------------------------------------

    def _lifecycle_options(self, identity: Any) -> Any:
        from npa_sop_tui.lifecycle import LifecycleOptions

        extra: dict[str, Any] = {}
        if self.options.timeout_minutes is not None:
            extra["timeout_minutes"] = self.options.timeout_minutes
        profile = self.options.profile or self.loaded.file.profile
        if profile:
            extra["profile"] = profile
        return LifecycleOptions(
            environment=self.environment,
            terraform_dir=self.options.terraform_dir,
            identity=identity,
            env=dict(self.options.env),
            parallelism=self.options.parallelism,
            **extra,
        )

    def _provider(self) -> net.NetworkProvider | None:
        if self.options.network_provider is not None:
            return self.options.network_provider
        return net.SandboxNetworks() if self.environment.is_sandbox else None

    def _sink(self, target: FleetTarget) -> Callable[[Event], None] | None:
        if self.on_event is None:
            return None
        on_event = self.on_event
        return lambda event: on_event(target, event)

    def _record(self, outcome: TargetOutcome, operation: Operation, target: FleetTarget) -> None:
        state = load_state(self.loaded.name)
        state.source = self.loaded.source
        mapped: dict[str, TargetState] = {
            "planned": "planned",
            "deployed": "deployed",
            "destroyed": "destroyed",
            "absent": "destroyed",
            "failed": "failed",
            "interrupted": "interrupted",
            "destroy-incomplete": "destroy-incomplete",
            "not-run": "skipped",
        }
        previous = state.targets.get(target.key)
        if operation == "plan" and previous is not None:
            return  # a plan says nothing new about what exists
        state.targets[target.key] = TargetRecord(
            key=target.key,
            project_key=target.project_key,
            name=target.name,
            backend=target.backend,
            region=target.region,
            project_id=target.project_id,
            subnet_id=outcome.subnet_id or (previous.subnet_id if previous else None),
            kube_context=outcome.kube_context,
            state=mapped[outcome.status],
            operation=operation,
            message=outcome.message[:500],
        )
        save_state(state)

    async def _run_all(
        self,
        operation: Operation,
        work: Callable[[FleetTarget], Any],
    ) -> FleetReport:
        # Shared setup once, before targets run side by side (the sandbox's offline plugin
        # mirror is written by the first caller; concurrent first calls would race on it).
        await self.environment.warm_up()
        # Records the run will update are read now: a damaged one stops the command before
        # any target runs, not after a cluster was deployed (nor as a TaskGroup traceback).
        load_state(self.loaded.name)
        for project_key in sorted({t.project_key for t in self.targets}):
            net.read_record(self.loaded.name, project_key)
        semaphore = asyncio.Semaphore(self.options.concurrency)
        stop = asyncio.Event()
        outcomes: dict[str, TargetOutcome] = {}

        async def one(target: FleetTarget) -> None:
            async with semaphore:
                if stop.is_set():
                    outcomes[target.key] = self._outcome(
                        target, "not-run", "not started: an earlier target failed (--fail-fast)"
                    )
                    return
                started = time.time()
                try:
                    outcome = await work(target)
                except asyncio.CancelledError:
                    outcomes[target.key] = self._outcome(
                        target, "interrupted", "interrupted", started=started
                    )
                    self._record(outcomes[target.key], operation, target)
                    raise
                except NpaError as exc:
                    outcome = self._outcome(
                        target,
                        "destroy-incomplete" if operation == "destroy" else "failed",
                        exc.message,
                        started=started,
                        error={**exc.to_dict(), **_extra(exc)},
                    )
                except Exception as exc:  # one target's surprise is its own entry, not the run's
                    outcome = self._outcome(
                        target,
                        "destroy-incomplete" if operation == "destroy" else "failed",
                        f"unexpected error: {type(exc).__name__}: {exc}",
                        started=started,
                        error=unexpected_error(exc),
                    )
                outcome.started = started
                outcome.finished = time.time()
                outcomes[target.key] = outcome
                if not outcome.ok and self.options.fail_fast:
                    stop.set()
                try:
                    self._record(outcome, operation, target)
                except Exception as exc:  # the report still names the target and its outcome
                    outcome.message += f" (its fleet record could not be written: {exc})"

        # A TaskGroup (unlike gather) waits for every target to finish its graceful
        # Terraform shutdown on cancel, so no target outlives the fleet command.
        async with asyncio.TaskGroup() as group:
            self._tasks = [group.create_task(one(target)) for target in self.targets]
        ordered = [outcomes[t.key] for t in self.targets]
        failed = sum(1 for o in ordered if not o.ok and o.status != "not-run")
        not_run = sum(1 for o in ordered if o.status == "not-run")
        networks = [
            r
            for r in (
                net.read_record(self.loaded.name, pk)
                for pk in sorted({t.project_key for t in self.targets})
            )
            if r is not None
        ]
        clusters = [
            cluster_entry(t, o, str(target_dir(t)))
            for t, o in zip(self.targets, ordered, strict=True)
        ]
        return FleetReport(
            fleet=self.loaded.name,
            operation=operation,
            source=self.loaded.source,
            concurrency=self.options.concurrency,
            ok=failed == 0 and not_run == 0,
            succeeded=sum(1 for o in ordered if o.ok),
            failed=failed,
            not_run=not_run,
            targets=ordered,
            networks=networks,
            **aggregate(self.loaded, clusters),
        )

    @staticmethod
    def _outcome(
        target: FleetTarget,
        status: Outcome,
        message: str,
        *,
        started: float | None = None,
        error: dict[str, Any] | None = None,
        result: dict[str, Any] | None = None,
        kube_context: str | None = None,
        subnet_id: str | None = None,
    ) -> TargetOutcome:
        return TargetOutcome(
            key=target.key,
            project_key=target.project_key,
            name=target.name,
            backend=target.backend,
            status=status,
            ok=status in SUCCESS,
            message=message,
            started=started,
            finished=time.time() if started is not None else None,
            kube_context=kube_context,
            subnet_id=subnet_id,
            result=result,
            error=error,
        )

    # -- operations ----------------------------------------------------------------------

    async def plan(self) -> FleetReport:
        from npa_sop_tui import lifecycle

        _require_soperator(self.targets, "plan")
        settings = self.environment.settings
        provider = self._provider()
        identities = {
            t.key: _identity(
                t,
                settings,
                net.planned_subnet(t.fleet, t.project_key, t.project_id, t.subnet_id, provider),
            )
            for t in self.targets
        }

        async def work(target: FleetTarget) -> TargetOutcome:
            assert target.spec is not None
            identity = identities[target.key]
            result = await lifecycle.plan(
                target.spec,
                options=self._lifecycle_options(identity),
                on_event=self._sink(target),
            )
            c = result.changes
            return self._outcome(
                target,
                "planned",
                f"{c.add} to add, {c.change} to change, {c.remove} to destroy",
                result=result.model_dump(mode="json"),
                subnet_id=identity.subnet_id,
            )

        return await self._run_all("plan", work)

    async def deploy(self) -> FleetReport:
        from npa_sop_tui import lifecycle

        _require_soperator(self.targets, "deploy")
        settings = self.environment.settings
        provider = self._provider()
        for target in self.targets:  # everything checkable, before anything runs
            _check_owned(target)
            _identity(
                target,
                settings,
                net.planned_subnet(
                    target.fleet, target.project_key, target.project_id, target.subnet_id, provider
                ),
            )
        with fleet_lock(self.loaded.name, "deploy"):
            records = {}
            for target in self.targets:
                if target.project_key not in records:
                    records[target.project_key] = net.ensure_network(
                        target.fleet,
                        target.project_key,
                        target.project_id,
                        target.subnet_id,
                        provider,
                    )

            async def work(target: FleetTarget) -> TargetOutcome:
                assert target.spec is not None
                subnet = records[target.project_key].subnet_id
                identity = _identity(target, settings, subnet)
                _write_marker(target, subnet)
                result = await lifecycle.deploy(
                    target.spec,
                    options=self._lifecycle_options(identity),
                    on_event=self._sink(target),
                    allow_destructive=self.options.allow_destructive,
                )
                return self._outcome(
                    target,
                    "deployed",
                    f"{result.resources} resources",
                    result=result.model_dump(mode="json"),
                    kube_context=result.kube_context,
                    subnet_id=subnet,
                )

            return await self._run_all("deploy", work)

    async def destroy(self) -> FleetReport:
        from npa_sop_tui import lifecycle

        _require_soperator(self.targets, "destroy")
        for target in self.targets:
            _check_owned(target)
        provider = self._provider()
        with fleet_lock(self.loaded.name, "destroy"):

            async def work(target: FleetTarget) -> TargetOutcome:
                entry = inventory.get(target.name)
                if entry is None or entry.state == "destroyed":
                    shutil.rmtree(target_dir(target), ignore_errors=True)
                    return self._outcome(target, "absent", "nothing deployed")
                result = await lifecycle.destroy(
                    target.name,
                    options=self._lifecycle_options(None),
                    on_event=self._sink(target),
                )
                shutil.rmtree(target_dir(target), ignore_errors=True)
                return self._outcome(
                    target,
                    "destroyed",
                    f"{result.destroyed} resources removed",
                    result=result.model_dump(mode="json"),
                )

            report = await self._run_all("destroy", work)
            # Reclaim a project's network once no cluster of the fleet is deployed in it:
            # the inventory decides, over every target the fleet ever ran there (its state
            # records and target folders), including targets since removed from the file.
            for project_key in sorted({t.project_key for t in self.targets}):
                if not deployed_in_project(self.loaded.name, project_key):
                    net.release_network(self.loaded.name, project_key, provider)
            report.networks = [
                r
                for r in (
                    net.read_record(self.loaded.name, pk)
                    for pk in sorted({t.project_key for t in self.targets})
                )
                if r is not None
            ]
            return report


def deployed_in_project(fleet: str, project_key: str) -> list[str]:
    """Cluster names the fleet ran in `project_key` that the inventory still holds (in any
    state but destroyed): a network is only released when this is empty."""
    names = {
        record.name
        for record in load_state(fleet).targets.values()
        if record.project_key == project_key
    }
    root = net.project_root(fleet, project_key)
    if root.is_dir():
        names |= {marker.parent.name for marker in root.glob(f"*/{MARKER}")}
    remaining = []
    for name in sorted(names):
        try:
            entry = inventory.get(name)
        except Exception:  # an unreadable record may still be a deployed cluster: keep the net
            remaining.append(name)
            continue
        if entry is not None and entry.state != "destroyed":
            remaining.append(name)
    return remaining


def unexpected_error(exc: BaseException) -> dict[str, Any]:
    """The `error` entry for an exception we did not foresee (no traceback, no secrets
    beyond what its message says)."""
    return {"error": "unexpected", "type": type(exc).__name__, "message": str(exc)}


def _extra(exc: NpaError) -> dict[str, Any]:
    extra = getattr(exc, "json_extra", None)
    return extra() if callable(extra) else {}
