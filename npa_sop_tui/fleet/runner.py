"""Fleet operations: every target runs the same lifecycle functions as `npa soperator …`.

What the fleet adds around them: identity from the project/fleet envelope, one shared
network per project, ownership markers, at most N targets at once, per-target outcomes
(a partial failure never hides the targets that succeeded) and the fleet state file.
Everything that can fail without touching Terraform is checked for every selected target
before the first one starts.
"""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from npa_sop_tui.errors import NpaError, UsageError
from npa_sop_tui.events import Event
from npa_sop_tui.fleet import network as net
from npa_sop_tui.fleet.aggregate import aggregate, cluster_entry, plan_projects
from npa_sop_tui.fleet.loader import LoadedFleet
from npa_sop_tui.fleet.model import FleetTarget
from npa_sop_tui.fleet.outcomes import (
    FleetReport,
    Operation,
    TargetOutcome,
    error_extra,
    target_outcome,
    unexpected_error,
)
from npa_sop_tui.fleet.ownership import (
    check_owned,
    deployed_in_project,
    require_soperator,
    target_dir,
    target_identity,
    write_marker,
)
from npa_sop_tui.fleet.state import TargetRecord, TargetState, fleet_lock, load_state, save_state
from npa_sop_tui.home import inventory

if TYPE_CHECKING:
    from npa_sop_tui.environment import Environment

__all__ = ["FleetReport", "FleetRunOptions", "FleetRunner", "TargetOutcome"]

FleetEventSink = Callable[[FleetTarget, Event], None]


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
    preflight: bool = True  # --preflight/--no-preflight: each target's cloud preflight
    project_prefix: str | None = None  # --project-prefix: else the fleet file's


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
        from npa_sop_tui.lifecycle.api import LifecycleOptions

        extra: dict[str, Any] = {}
        if self.options.timeout_minutes is not None:
            extra["timeout_minutes"] = self.options.timeout_minutes
        profile = self.options.profile or self.loaded.file.profile
        if profile:
            extra["profile"] = profile
        if not self.options.preflight:
            extra["preflight"] = False
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

    def _checked(self, check: Callable[[FleetTarget], Any]) -> dict[str, NpaError]:
        """`check` of every target before any runs. A bad fleet file (a name another
        cluster holds) refuses the whole command; a target whose cluster record is damaged
        becomes that target's own failure, and the others run."""
        refused: dict[str, NpaError] = {}
        for target in self.targets:
            try:
                check(target)
            except inventory.InventoryDamaged as exc:
                refused[target.key] = exc
        return refused

    async def _run_all(
        self,
        operation: Operation,
        work: Callable[[FleetTarget], Any],
        refused: dict[str, NpaError] | None = None,
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
                    outcomes[target.key] = target_outcome(
                        target, "not-run", "not started: an earlier target failed (--fail-fast)"
                    )
                    return
                started = time.time()
                try:
                    if refused and target.key in refused:
                        raise refused[target.key]  # its own failure, recorded like any other
                    outcome = await work(target)
                except asyncio.CancelledError:
                    outcomes[target.key] = target_outcome(
                        target, "interrupted", "interrupted", started=started
                    )
                    self._record(outcomes[target.key], operation, target)
                    raise
                except NpaError as exc:
                    outcome = target_outcome(
                        target,
                        "destroy-incomplete" if operation == "destroy" else "failed",
                        exc.message,
                        started=started,
                        error={**exc.to_dict(), **error_extra(exc)},
                    )
                except Exception as exc:  # one target's surprise is its own entry, not the run's
                    outcome = target_outcome(
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
        prefix = self.options.project_prefix
        planned = (
            plan_projects(
                self.loaded,
                self.targets,
                clusters,
                self.loaded.file.project_prefix if prefix is None else prefix,
            )
            if operation == "plan"
            else {}
        )
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
            **aggregate(self.loaded, clusters, prefix),
            **planned,
        )

    # -- operations ----------------------------------------------------------------------

    async def plan(self) -> FleetReport:
        from npa_sop_tui.lifecycle import api as lifecycle

        require_soperator(self.targets, "plan")
        settings = self.environment.settings
        provider = self._provider()
        identities = {
            t.key: target_identity(
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
            return target_outcome(
                target,
                "planned",
                f"{c.add} to add, {c.change} to change, {c.remove} to destroy",
                result=result.model_dump(mode="json"),
                subnet_id=identity.subnet_id,
            )

        return await self._run_all("plan", work)

    async def deploy(self) -> FleetReport:
        from npa_sop_tui.lifecycle import api as lifecycle

        require_soperator(self.targets, "deploy")
        settings = self.environment.settings
        provider = self._provider()
        refused = self._checked(check_owned)  # per target: its own failure, if any
        for target in self.targets:  # everything checkable, before anything runs
            target_identity(
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
                identity = target_identity(target, settings, subnet)
                write_marker(target, subnet)
                result = await lifecycle.deploy(
                    target.spec,
                    options=self._lifecycle_options(identity),
                    on_event=self._sink(target),
                    allow_destructive=self.options.allow_destructive,
                )
                return target_outcome(
                    target,
                    "deployed",
                    f"{result.resources} resources",
                    result=result.model_dump(mode="json"),
                    kube_context=result.kube_context,
                    subnet_id=subnet,
                )

            return await self._run_all("deploy", work, refused)

    async def destroy(self) -> FleetReport:
        from npa_sop_tui.lifecycle import api as lifecycle

        require_soperator(self.targets, "destroy")
        refused = self._checked(check_owned)
        provider = self._provider()
        with fleet_lock(self.loaded.name, "destroy"):

            async def work(target: FleetTarget) -> TargetOutcome:
                entry = inventory.get(target.name)
                if entry is None or entry.state == "destroyed":
                    shutil.rmtree(target_dir(target), ignore_errors=True)
                    return target_outcome(target, "absent", "nothing deployed")
                result = await lifecycle.destroy(
                    target.name,
                    options=self._lifecycle_options(None),
                    on_event=self._sink(target),
                )
                shutil.rmtree(target_dir(target), ignore_errors=True)
                return target_outcome(
                    target,
                    "destroyed",
                    f"{result.destroyed} resources removed",
                    result=result.model_dump(mode="json"),
                )

            report = await self._run_all("destroy", work, refused)
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
