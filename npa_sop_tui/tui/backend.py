"""The adapter between the Textual app and the library (harlequin style).

The UI never imports spec/catalog/lifecycle/status modules directly: it calls a `Backend`.
That keeps one place to follow library changes, lets tests drive the app with the real
library in a temp NPA_HOME, and lets the sandbox swap in its local Terraform and fake
Kubernetes API without the screens knowing. The values handed to the UI are small frozen
dataclasses, so a screen can't accidentally depend on a library model's internals.

Library modules are imported lazily inside methods: importing this module is cheap and
does not pull pydantic models, kubernetes or asyncssh into the app's first frame.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from npa_sop_tui.errors import UsageError
from npa_sop_tui.spec.findings import Finding
from npa_sop_tui.tui.catalog_view import CatalogView
from npa_sop_tui.tui.spec_files import SpecFiles

if TYPE_CHECKING:
    from npa_sop_tui.environment import Environment
    from npa_sop_tui.events import EventSink, PlanSummary
    from npa_sop_tui.spec.model import SoperatorSpec


# ---------------------------------------------------------------------------------------
# Values the UI works with


@dataclass(frozen=True, slots=True)
class ClusterRow:
    """One inventory entry as the home screen lists it."""

    name: str
    region: str
    state: str
    last_operation: str
    spec_path: Path | None = None
    kube_context: str = ""


def issue_text(finding: Finding) -> str:
    """A finding as the wizard shows it beside its form: `line N path: message (hint: …)`."""
    where = f"line {finding.line} " if finding.line else ""
    text = f"{where}{finding.path or '(spec)'}: {finding.message}"
    return f"{text} (hint: {finding.hint})" if finding.hint else text


@dataclass(frozen=True, slots=True)
class Totals:
    """What a spec asks for in total; shown on the wizard's review step."""

    nodes: int
    vcpu: int
    gpus: int
    disk_gib: int


@dataclass(frozen=True, slots=True)
class OperationOutcome:
    """How an operation ended, honestly: ok, failed (with why), or interrupted."""

    result: Literal["ok", "failed", "interrupted"]
    message: str = ""
    remaining: tuple[str, ...] = ()


class QuotasUnjudged(UsageError):
    """The preflight could not judge every quota (the cloud did not answer, a limit hidden
    from the credentials or counted in a foreign unit). The user may go on without them, as
    `--allow-unknown` does in the CLI: the app asks, and plans again with `allow_unknown`."""


HostKeyConsent = Callable[[str, int, str], Awaitable[bool]]
"""(host, port, SHA256 fingerprint) → whether the user trusts the key."""


# ---------------------------------------------------------------------------------------
# The adapter


class Backend(SpecFiles):
    """Everything the app asks of the library, in one `Environment` (real or sandbox)."""

    _environment: Environment | None = None

    def __init__(self, environment: Environment | None = None) -> None:
        self._environment = environment

    @property
    def environment(self) -> Environment:
        """Where the app's operations run (the real cloud unless given another)."""
        if self._environment is None:
            from npa_sop_tui.environment_choice import open_environment

            self._environment = open_environment()
        return self._environment

    @property
    def sandbox(self) -> bool:
        # not opened yet means the default, the real cloud: known without reading the
        # config (which imports pydantic), so the first frame does not wait for it
        return self._environment is not None and self._environment.is_sandbox

    # -- identity and inventory ------------------------------------------------------------

    def has_cloud_identity(self) -> bool:
        """True when the settings name a tenant, project and subnet (so a real deploy could
        run; the spec may still set its own region)."""
        if self.sandbox:
            return False
        settings = self.environment.settings
        return bool(settings["tenant_id"] and settings["project_id"] and settings["subnet_id"])

    def cluster_costs(self, names: list[str]) -> dict[str, Any]:
        """Cost so far (history.cost.CostSoFar) of each running cluster with a known price."""
        from npa_sop_tui.errors import NpaError
        from npa_sop_tui.history.cost import cost_so_far

        store = self.environment.state_store()
        costs: dict[str, Any] = {}
        for name in names:
            try:
                cost = cost_so_far(name, store=store)
            except (NpaError, OSError):  # a damaged record: the table says so already
                continue
            if cost is not None:
                costs[name] = cost
        return costs

    def list_clusters(self) -> list[ClusterRow]:
        """The clusters of the state store the settings select: this machine's, or the
        team's bucket (then each row says who ran the last operation)."""
        from npa_sop_tui.home import inventory
        from npa_sop_tui.home.paths import cluster_dir
        from npa_sop_tui.lifecycle.adopt import listed

        store = self.environment.state_store()
        rows: list[ClusterRow] = []
        listing = listed(store=store)
        for entry in [*listing.entries, *listing.found]:
            last = entry.last_operation
            last_text = "—"
            if entry.adoption is not None:  # not deployed here: where it came from
                how = "adopted" if entry.adoption.adopted else "found"
                last_text = f"{how} ({entry.adoption.origin})"
            if last is not None:
                when = time.strftime("%Y-%m-%d %H:%M", time.localtime(last.started))
                last_text = f"{last.kind} {last.result} {when}"
                if last.user:
                    last_text += f" by {last.user}@{last.host}"
            spec_path = cluster_dir(entry.name) / inventory.SPEC_FILE
            rows.append(
                ClusterRow(
                    name=entry.name,
                    region=entry.region or "",
                    state=entry.state,
                    last_operation=last_text,
                    spec_path=spec_path if spec_path.is_file() else None,
                    kube_context=entry.kube_context,
                )
            )
        return rows

    def spec_for_cluster(self, name: str) -> dict[str, Any]:
        """The spec as last deployed, as a mapping for the wizard/deploy screens."""
        from npa_sop_tui.lifecycle.adopt import require_cluster

        store = self.environment.state_store()
        require_cluster(name, store=store)
        path = store.spec_file(name)
        if path is None:
            raise UsageError(
                f"cluster {name!r} has no recorded spec ({store.describe()})",
                hint="open its cluster.yaml with `o` instead",
            )
        return self.load_spec(path)

    def totals(self, spec: SoperatorSpec) -> Totals:
        cat = self.catalog()
        nodes = vcpu = gpus = disk = 0
        for pool in spec.workers:
            preset = cat.preset(pool.platform, pool.preset)
            size = int(pool.size)
            nodes += size
            if preset is not None:
                vcpu += size * preset.vcpu
                gpus += size * preset.gpus
            disk += size * int(pool.boot_disk_gib or 0)
            if pool.docker_cache:
                disk += size * int(pool.docker_cache_gib or 0)
        return Totals(nodes=nodes, vcpu=vcpu, gpus=gpus, disk_gib=disk)

    def catalog(self) -> CatalogView:
        if not hasattr(self, "_catalog"):
            from npa_sop_tui.spec.catalog import load_catalog

            self._catalog = CatalogView(load_catalog())
        return self._catalog

    async def price_estimate(self, spec: Any) -> str | None:
        """The spec's hourly price as one line for the review step (billing calculator);
        None when there is no cloud to ask (no identity configured, not the sandbox)."""
        if not (self.sandbox or self.has_cloud_identity()):
            return None
        from npa_sop_tui.tui.price import price_text

        return await price_text(spec, self.environment)

    # -- lifecycle ----------------------------------------------------------------------------

    def lifecycle_options(self, *, allow_unknown: bool = False) -> Any:
        from npa_sop_tui.lifecycle.api import LifecycleOptions

        # Reservation IDs are secrets and never in cluster.yaml: like the CLI, the app takes
        # them at run time from the settings (NPA_CAPACITY_BLOCK_GROUPS).
        return LifecycleOptions(environment=self.environment, allow_unknown=allow_unknown)

    async def plan(self, spec: Any, sink: EventSink, *, allow_unknown: bool = False) -> PlanSummary:
        """Run plan, streaming its events to `sink`; returns the whole plan's summary.
        Quotas the preflight cannot judge raise QuotasUnjudged unless `allow_unknown`."""
        from npa_sop_tui.events import PlanSummary
        from npa_sop_tui.lifecycle import api as lifecycle

        options = self.lifecycle_options(allow_unknown=allow_unknown)
        async with _unjudged_quotas():
            result = await lifecycle.plan(spec, options=options, on_event=sink)
        return PlanSummary(
            operation_id=result.operation_id, phase="plan", **result.changes.model_dump()
        )

    async def deploy(
        self, spec: Any, sink: EventSink, *, allow_destructive: bool, allow_unknown: bool = False
    ) -> Any:
        from npa_sop_tui.lifecycle import api as lifecycle

        await self.environment.start_live()
        async with _unjudged_quotas():
            return await lifecycle.deploy(
                spec,
                options=self.lifecycle_options(allow_unknown=allow_unknown),
                on_event=sink,
                allow_destructive=allow_destructive,
            )

    async def destroy(self, name: str, sink: EventSink) -> OperationOutcome:
        """Destroy; an incomplete teardown is a failed outcome listing what remains."""
        from npa_sop_tui.lifecycle import api as lifecycle

        await self.environment.start_live()
        try:
            result = await lifecycle.destroy(name, options=self.lifecycle_options(), on_event=sink)
        except lifecycle.DestroyIncomplete as exc:
            return OperationOutcome("failed", exc.message, tuple(exc.remaining))
        return OperationOutcome("ok", f"{result.destroyed} resource(s) destroyed")

    async def upgrade_plan(self, name: str, to: str) -> list[str]:
        """What upgrading `name` to Soperator `to` changes, in the CLI's words (nothing runs):
        the operator's releases in place, Kubernetes one minor at a time with every node
        group, the expected time and the drained workers. A bad target raises UsageError."""
        import asyncio

        from npa_sop_tui.lifecycle import upgrade as upgrading
        from npa_sop_tui.lifecycle.upgrade_plan import plan_lines

        options = self.lifecycle_options()
        plan = await asyncio.to_thread(
            lambda: upgrading.plan_upgrade(upgrading.deployed_spec_of(name, options), to)
        )
        return plan_lines(plan)

    async def upgrade(self, name: str, to: str, sink: EventSink) -> OperationOutcome:
        """Run the upgrade's steps (each a guarded deploy), then read the active checks."""
        from npa_sop_tui.lifecycle import upgrade as upgrading

        await self.environment.start_live()
        result = await upgrading.upgrade(name, to, options=self.lifecycle_options(), on_event=sink)
        plan, checks = result.plan, result.checks
        said = (f"Soperator {plan.to_operator}, Kubernetes {plan.to_k8s} "
                f"({result.steps_done} step(s))")  # fmt: skip
        if checks is not None and checks.read:
            said += f"; active checks: {checks.total} read, waiting on {len(checks.waiting)}"
            if checks.failed:
                said += f", failed: {', '.join(checks.failed)}"
        elif checks is not None and checks.note:
            said += f"; active checks: {checks.note}"
        return OperationOutcome("ok" if result.status == "upgraded" else "failed", said)

    # -- status -------------------------------------------------------------------------------

    def status_settings(self, name: str, *, interval: float) -> Any:
        """StatusSettings for `name` from the settings (login host, key) and the interval."""
        return self.environment.status_settings(name, slurm_interval=interval)

    async def status_snapshots(
        self, name: str, *, interval: float, confirm_host_key: HostKeyConsent | None = None
    ) -> AsyncIterator[Any]:
        """ClusterStatus snapshots from the environment's status feed, one per change.

        `confirm_host_key(host, port, fingerprint)` is asked before trusting a new SSH host
        key; without it unknown keys are refused (the Slurm pane then says why).
        """
        if self.sandbox:  # the sandbox builds the cluster from its spec: adopt npa's first
            from npa_sop_tui.lifecycle.adopt import arequire_cluster

            await arequire_cluster(name, store=self.environment.state_store())
        settings = self.status_settings(name, interval=interval)
        async for snapshot in self.environment.status_feed(
            settings, host_key_policy=_policy(confirm_host_key), initial_timeout=3.0
        ):
            yield snapshot

    async def slurm_ops(self, name: str, *, confirm_host_key: HostKeyConsent | None = None) -> Any:
        """The cluster's operator actions (status/slurm_ops.SlurmOps; simulated in the sandbox).

        The caller closes it (`aclose`)."""
        settings = self.status_settings(name, interval=30.0)
        return await self.environment.slurm_ops(settings, host_key_policy=_policy(confirm_host_key))

    def pool_capacity(self, name: str) -> dict[str, str]:
        """Capacity mode (reserved / preemptible / on-demand) of each pool, from the spec the
        cluster was last deployed with; {} when npa has none recorded."""
        from npa_sop_tui.errors import NpaError

        try:
            spec, _ = self.check(self.spec_for_cluster(name))
        except NpaError:
            return {}
        capacity = self.environment.settings["capacity"] or {}
        return {p.name: p.capacity_mode(capacity) for p in spec.workers} if spec else {}

    async def close(self) -> None:
        """Release whatever the environment started (the sandbox stops its fake API server);
        an environment never opened started nothing (opening it only to close it would read
        the config on the way out)."""
        if self._environment is not None:
            await self._environment.aclose()


def sandbox_backend(*, sleep_seconds: float = 1.0, read_only: bool = False) -> Backend:
    """The app's sandbox: local Terraform at a watchable pace, a live simulated cluster
    (`read_only`: a watching session, which writes nothing in the home)."""
    from npa_sop_tui.environment_choice import open_environment

    env = open_environment(sandbox=True, sleep_seconds=sleep_seconds, read_only=read_only)
    return Backend(env)


def _policy(confirm: HostKeyConsent | None) -> Any:
    from npa_sop_tui.status.hostkeys import HostKeyPolicy

    if confirm is None:
        return HostKeyPolicy()

    async def ask(host: str, port: int, entry: Any) -> bool:
        fp = entry.fingerprint  # a property of status.hostkeys.HostKeyEntry
        return await confirm(host, port, str(fp() if callable(fp) else fp))

    return HostKeyPolicy(ask)


def _state_from(operation: str, result: str) -> str:
    if result == "running":
        return f"{operation}ing"
    if operation == "destroy" and result == "ok":
        return "destroyed"
    if operation == "deploy" and result == "ok":
        return "deployed"
    return f"{operation} {result}"


@asynccontextmanager
async def _unjudged_quotas() -> AsyncIterator[None]:
    """The lifecycle's PreflightUndecided as the app's QuotasUnjudged: its message without
    the CLI's `--allow-unknown` hint, since the app asks instead."""
    from npa_sop_tui.lifecycle.cloud_steps import PreflightUndecided

    try:
        yield
    except PreflightUndecided as exc:
        raise QuotasUnjudged(exc.message) from exc
