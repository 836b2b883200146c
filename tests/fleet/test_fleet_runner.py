"""fleet/runner.py: what the fleet adds around each target's lifecycle call: at most N
targets at once, one target's failure (or its record's) its own, fail-fast, the fleet state
file, networks and ownership checked before anything runs, and destroy's network release.

Each target's lifecycle call is a recording stand-in here (the real plan, deploy and destroy
run real Terraform in test_fleet_e2e.py and test_contract_fleet.py, minutes per run); the
fleet's own records, networks, markers and the inventory are the real ones in the test's npa
home."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from npa_sop_tui.environment import Environment
from npa_sop_tui.errors import OperationError, UsageError
from npa_sop_tui.events import Event, LogLine
from npa_sop_tui.fleet import runner as runner_module
from npa_sop_tui.fleet.loader import parse_fleet_text
from npa_sop_tui.fleet.model import FleetTarget
from npa_sop_tui.fleet.network import SandboxNetworks, ensure_network, read_record
from npa_sop_tui.fleet.ownership import read_marker, target_dir
from npa_sop_tui.fleet.runner import FleetRunner, FleetRunOptions
from npa_sop_tui.fleet.state import load_state
from npa_sop_tui.home import inventory
from npa_sop_tui.home.settings import resolve_settings
from npa_sop_tui.lifecycle import api as lifecycle

from testkit.fleets import fleet_text
from testkit.wait import eventually


class Changes(BaseModel):
    add: int = 3
    change: int = 1
    remove: int = 0


class PlanResult(BaseModel):
    changes: Changes = Changes()


class DeployResult(BaseModel):
    resources: int = 25
    kube_context: str
    status: str = "ready"


class DestroyResult(BaseModel):
    destroyed: int = 25


class Lifecycle:
    """The lifecycle calls of the targets, recorded; a target named in `fail` raises."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, Any]] = []
        self.fail: dict[str, BaseException] = {}
        self.running = 0
        self.peak = 0
        self.gate: asyncio.Event | None = None

    async def _enter(self, what: str, name: str, options: Any, on_event: Any) -> None:
        self.calls.append((what, name, options))
        self.running += 1
        self.peak = max(self.peak, self.running)
        try:
            if on_event is not None:
                on_event(LogLine(operation_id=f"{what}-{name}", stream="npa", text=name))
            if self.gate is not None:
                await self.gate.wait()
            await asyncio.sleep(0)
            if name in self.fail:
                raise self.fail[name]
        finally:
            self.running -= 1

    async def plan(self, spec: Any, *, options: Any, on_event: Any = None) -> PlanResult:
        await self._enter("plan", spec.name, options, on_event)
        return PlanResult()

    async def deploy(
        self, spec: Any, *, options: Any, on_event: Any = None, allow_destructive: bool = False
    ) -> DeployResult:
        await self._enter("deploy", spec.name, options, on_event)
        options.allow_destructive = allow_destructive  # noted for the test
        inventory.save(
            inventory.InventoryEntry(
                name=spec.name, kube_context=f"nebius-{spec.name}-slurm", state="deployed"
            )
        )
        return DeployResult(kube_context=f"nebius-{spec.name}-slurm")

    async def destroy(self, name: str, *, options: Any, on_event: Any = None) -> DestroyResult:
        await self._enter("destroy", name, options, on_event)
        entry = inventory.require(name)
        entry.state = "destroyed"
        inventory.save(entry)
        return DestroyResult()


@pytest.fixture
def life(monkeypatch: pytest.MonkeyPatch) -> Lifecycle:
    recorded = Lifecycle()
    for what in ("plan", "deploy", "destroy"):
        monkeypatch.setattr(lifecycle, what, getattr(recorded, what))
    return recorded


def _runner(
    fleet: str = "f",
    *,
    only: str | None = None,
    on_event: Any = None,
    text: str | None = None,
    **options: Any,
) -> FleetRunner:
    loaded = parse_fleet_text(text or fleet_text(name=fleet, a="fa", b="fb", c="fc"))
    targets = [t for t in loaded.targets if only is None or t.project_key == only]
    options.setdefault("environment", Environment(resolve_settings()))
    options.setdefault("network_provider", SandboxNetworks())
    return FleetRunner(loaded, targets, FleetRunOptions(**options), on_event)


def _statuses(report: Any) -> list[tuple[str, str]]:
    return [(t.key, t.status) for t in report.targets]


async def test_a_target_whose_state_write_fails_is_that_targets_error_and_the_others_finish(
    life: Lifecycle, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = runner_module.save_state
    failed: list[bool] = []

    def save_state(state: Any) -> None:
        if "alpha/fb" in state.targets and not failed:
            failed.append(True)  # fb's own write fails, once
            raise OSError(28, "No space left on device")
        real(state)

    monkeypatch.setattr(runner_module, "save_state", save_state)
    report = await _runner().deploy()
    assert _statuses(report) == [
        ("alpha/fa", "deployed"),
        ("alpha/fb", "deployed"),
        ("beta/fc", "deployed"),
    ]
    by_key = {t.key: t for t in report.targets}
    assert by_key["alpha/fb"].message == (
        "25 resources (its fleet record could not be written: [Errno 28] No space left on device)"
    )
    assert by_key["alpha/fa"].message == by_key["beta/fc"].message == "25 resources"
    state = load_state("f")
    assert set(state.targets) == {"alpha/fa", "beta/fc"}


async def test_at_most_n_targets_run_at_once(life: Lifecycle) -> None:
    for concurrency in (1, 2, 3):
        life.peak = 0
        report = await _runner(f"c{concurrency}", concurrency=concurrency).plan()
        assert report.ok and report.concurrency == concurrency
        assert life.peak == concurrency


def test_a_concurrency_below_one_is_refused() -> None:
    with pytest.raises(UsageError, match=r"^--concurrency must be at least 1$"):
        _runner(concurrency=0)


async def test_one_failing_target_is_its_own_entry_and_the_others_run(life: Lifecycle) -> None:
    life.fail["fb"] = OperationError("apply failed", hint="look at the log")
    report = await _runner(concurrency=2).deploy()
    assert _statuses(report) == [
        ("alpha/fa", "deployed"),
        ("alpha/fb", "failed"),
        ("beta/fc", "deployed"),
    ]
    assert (report.ok, report.succeeded, report.failed, report.not_run) == (False, 2, 1, 0)
    failed = report.targets[1]
    assert failed.message == "apply failed" and not failed.ok
    assert failed.error == {
        "error": "OperationError",
        "message": "apply failed",
        "hint": "look at the log",
    }
    assert failed.started is not None and failed.finished is not None
    assert failed.started <= failed.finished
    assert load_state("f").targets["alpha/fb"].state == "failed"


async def test_a_surprise_in_one_target_is_named_without_a_traceback(life: Lifecycle) -> None:
    life.fail["fa"] = KeyError("cpu_nodes")
    report = await _runner().deploy()
    (failed,) = [t for t in report.targets if not t.ok]
    assert failed.key == "alpha/fa" and failed.status == "failed"
    assert failed.message == "unexpected error: KeyError: 'cpu_nodes'"
    assert failed.error == {"error": "unexpected", "type": "KeyError", "message": "'cpu_nodes'"}


async def test_an_error_carrying_its_result_gives_it_to_the_outcome(life: Lifecycle) -> None:
    class Degraded(OperationError):
        def json_extra(self) -> dict[str, Any]:
            return {"result": {"status": "degraded-validation"}}

    life.fail["fc"] = Degraded("GPU check failed")
    report = await _runner().deploy()
    failed = report.targets[2]
    assert failed.error == {
        "error": "Degraded",
        "message": "GPU check failed",
        "hint": None,
        "result": {"status": "degraded-validation"},
    }


async def test_fail_fast_starts_nothing_after_the_first_failure(life: Lifecycle) -> None:
    life.fail["fa"] = OperationError("no")
    report = await _runner(fail_fast=True).deploy()
    assert _statuses(report) == [
        ("alpha/fa", "failed"),
        ("alpha/fb", "not-run"),
        ("beta/fc", "not-run"),
    ]
    assert report.targets[1].message == "not started: an earlier target failed (--fail-fast)"
    assert report.targets[1].started is None
    assert (report.ok, report.failed, report.not_run, report.succeeded) == (False, 1, 2, 0)
    assert [c[1] for c in life.calls] == ["fa"]
    assert set(load_state("f").targets) == {"alpha/fa"}  # what was not run keeps its record


async def test_without_fail_fast_a_failure_stops_nothing(life: Lifecycle) -> None:
    life.fail["fa"] = OperationError("no")
    report = await _runner().deploy()
    assert [c[1] for c in life.calls] == ["fa", "fb", "fc"] and report.not_run == 0


async def test_a_failed_destroy_is_incomplete_not_failed(life: Lifecycle) -> None:
    await _runner().deploy()
    life.fail["fb"] = OperationError("teardown failed")
    life.fail["fc"] = RuntimeError("surprise")
    report = await _runner().destroy()
    assert report.targets[0].result == {"destroyed": 25}
    assert _statuses(report) == [
        ("alpha/fa", "destroyed"),
        ("alpha/fb", "destroy-incomplete"),
        ("beta/fc", "destroy-incomplete"),
    ]
    assert report.targets[0].message == "25 resources removed"
    assert not target_dir(report_target("fa")).exists()
    assert target_dir(report_target("fb")).exists()  # kept: the cluster is still there
    state = load_state("f")
    assert state.targets["alpha/fb"].state == "destroy-incomplete"
    assert state.targets["alpha/fa"].operation == "destroy"


def report_target(name: str, fleet: str = "f") -> FleetTarget:
    loaded = parse_fleet_text(fleet_text(name=fleet, a="fa", b="fb", c="fc"))
    return next(t for t in loaded.targets if t.name == name)


async def test_a_cancelled_run_records_its_running_targets_as_interrupted(
    life: Lifecycle,
) -> None:
    life.gate = asyncio.Event()
    runner = _runner(concurrency=2)
    task = asyncio.ensure_future(runner.deploy())
    await eventually(lambda: life.running == 2, what="two targets running")
    task.cancel()  # Ctrl-C
    runner.force()  # and a second one
    with pytest.raises(asyncio.CancelledError):
        await task
    state = load_state("f")
    assert {k: r.state for k, r in state.targets.items()} == {
        "alpha/fa": "interrupted",
        "alpha/fb": "interrupted",
    }
    assert state.targets["alpha/fa"].message == "interrupted"
    runner.force()  # nothing left running: nothing to cancel


async def test_the_state_file_maps_each_outcome_and_keeps_what_a_plan_does_not_know(
    life: Lifecycle,
) -> None:
    await _runner().plan()
    state = load_state("f")
    record = state.targets["alpha/fa"]
    assert (record.state, record.operation, record.message) == (
        "planned",
        "plan",
        "3 to add, 1 to change, 0 to destroy",
    )
    assert record.subnet_id == "vpcsubnet-sandbox-f-alpha"
    assert (record.project_key, record.name, record.backend) == ("alpha", "fa", "soperator")
    assert (record.region, record.project_id) == ("eu-north1", "project-e00alpha")
    assert state.source == "<fleet>"
    await _runner().deploy()
    deployed = load_state("f").targets["alpha/fa"]
    assert (deployed.state, deployed.kube_context) == ("deployed", "nebius-fa-slurm")
    await _runner().plan()  # a plan of a deployed target changes nothing in the record
    assert load_state("f").targets["alpha/fa"] == deployed
    # a destroy without a subnet of its own keeps the one recorded
    await _runner().destroy()
    destroyed = load_state("f").targets["alpha/fa"]
    assert destroyed.state == "destroyed" and destroyed.subnet_id == deployed.subnet_id


async def test_a_target_with_nothing_deployed_is_absent_and_recorded_destroyed(
    life: Lifecycle,
) -> None:
    report = await _runner(only="beta").destroy()
    assert _statuses(report) == [("beta/fc", "absent")] and report.ok
    assert report.targets[0].message == "nothing deployed"
    assert load_state("f").targets["beta/fc"].state == "destroyed"
    assert life.calls == []


async def test_a_long_message_is_cut_in_the_state_file_only(life: Lifecycle) -> None:
    life.fail["fa"] = OperationError("x" * 800)
    report = await _runner().deploy()
    assert len(report.targets[0].message) == 800
    assert load_state("f").targets["alpha/fa"].message == "x" * 500


async def test_a_plan_names_each_targets_subnet_and_records_no_network(life: Lifecycle) -> None:
    report = await _runner().plan()
    assert _statuses(report) == [
        ("alpha/fa", "planned"),
        ("alpha/fb", "planned"),
        ("beta/fc", "planned"),
    ]
    assert [t.subnet_id for t in report.targets] == [
        "vpcsubnet-sandbox-f-alpha",
        "vpcsubnet-sandbox-f-alpha",
        "vpcsubnet-sandbox-f-beta",
    ]
    assert report.targets[0].result == {"changes": {"add": 3, "change": 1, "remove": 0}}
    assert read_record("f", "alpha") is None and report.networks == []
    identity = life.calls[0][2].identity
    assert (identity.project_id, identity.subnet_id) == (
        "project-e00alpha",
        "vpcsubnet-sandbox-f-alpha",
    )


async def test_a_deploy_makes_one_network_per_project_and_marks_each_target(
    life: Lifecycle,
) -> None:
    seen: list[tuple[str, str]] = []
    report = await _runner(
        on_event=lambda target, event: seen.append((target.key, event.text)),  # type: ignore[attr-defined]
        allow_destructive=True,
        timeout_minutes=7,
        profile="team",
        parallelism=4,
        env={"TF_VAR_x": "1"},
    ).deploy()
    assert report.ok and report.succeeded == 3 and report.operation == "deploy"
    alpha, beta = read_record("f", "alpha"), read_record("f", "beta")
    assert alpha is not None and alpha.owned and alpha.subnet_id == "vpcsubnet-sandbox-f-alpha"
    assert beta is not None and beta.subnet_id == "vpcsubnet-sandbox-f-beta"
    assert [n.project_key for n in report.networks] == ["alpha", "beta"]
    marker = read_marker(report_target("fb"))
    assert marker is not None and marker["fleet"] == "f"
    assert marker["subnet_id"] == "vpcsubnet-sandbox-f-alpha"
    options = life.calls[1][2]
    assert options.identity.subnet_id == "vpcsubnet-sandbox-f-alpha"
    assert options.identity.project_id == "project-e00alpha"
    assert (options.timeout_minutes, options.profile, options.parallelism) == (7, "team", 4)
    assert options.env == {"TF_VAR_x": "1"} and options.allow_destructive is True
    assert sorted(seen) == [("alpha/fa", "fa"), ("alpha/fb", "fb"), ("beta/fc", "fc")]
    assert report.targets[0].kube_context == "nebius-fa-slurm"
    assert report.targets[0].result == {
        "resources": 25,
        "kube_context": "nebius-fa-slurm",
        "status": "ready",
    }
    assert (report.deployed, report.name, report.tenant_id) == (3, "f", "tenant-e00fleet")
    assert {c["cluster_name"]: c["cluster_status"] for c in report.clusters} == {
        "fa": "ready",
        "fb": "ready",
        "fc": "ready",
    }


async def test_without_the_options_a_deploy_passes_the_lifecycles_defaults(
    life: Lifecycle,
) -> None:
    await _runner(only="beta").deploy()
    options = life.calls[0][2]
    assert options.timeout_minutes == 90 and options.profile is None
    assert options.allow_destructive is False and options.parallelism is None


async def test_the_fleet_files_profile_is_used_unless_one_is_given(life: Lifecycle) -> None:
    text = fleet_text(name="p", a="pa", b="pb", c="pc").replace(
        "region: eu-north1\n", "region: eu-north1\nprofile: from-file\n", 1
    )
    await _runner("p", only="beta", text=text).deploy()
    assert life.calls[0][2].profile == "from-file"
    await _runner("p", only="beta", text=text, profile="given").deploy()
    assert life.calls[1][2].profile == "given"


async def test_a_same_named_cluster_stops_the_deploy_before_any_target_or_network(
    life: Lifecycle,
) -> None:
    inventory.save(
        inventory.InventoryEntry(name="fc", kube_context="nebius-fc-slurm", state="deployed")
    )
    with pytest.raises(UsageError, match="beta/fc: a cluster named 'fc' already exists"):
        await _runner().deploy()
    assert life.calls == [] and read_record("f", "alpha") is None
    with pytest.raises(UsageError, match="beta/fc: a cluster named 'fc' already exists"):
        await _runner().destroy()


async def test_without_a_subnet_or_a_provider_nothing_runs(life: Lifecycle) -> None:
    runner = _runner(network_provider=None)
    assert runner._provider() is None  # the real cloud's environment has none yet
    for run in (runner.plan, runner.deploy):
        with pytest.raises(UsageError, match="has no subnet_id"):
            await run()
    assert life.calls == []


def test_the_sandbox_provides_its_own_networks() -> None:
    from npa_sop_tui.environment_choice import open_environment

    runner = _runner(environment=open_environment(sandbox=True), network_provider=None)
    assert isinstance(runner._provider(), SandboxNetworks)
    given = SandboxNetworks()
    assert _runner(network_provider=given)._provider() is given


def test_without_an_environment_the_sandbox_flag_chooses_one() -> None:
    loaded = parse_fleet_text(fleet_text(name="f"))
    assert FleetRunner(loaded, loaded.targets, FleetRunOptions(sandbox=True)).environment.is_sandbox
    assert not FleetRunner(loaded, loaded.targets).environment.is_sandbox


async def test_the_networks_a_deploy_made_are_reused_on_the_next(life: Lifecycle) -> None:
    ensure_network("f", "alpha", "project-e00alpha", "vpcsubnet-existing", None)
    report = await _runner().deploy()
    assert {t.subnet_id for t in report.targets if t.project_key == "alpha"} == {
        "vpcsubnet-existing"
    }
    assert not read_record("f", "alpha").owned  # type: ignore[union-attr]


async def test_destroy_releases_a_projects_network_once_nothing_is_deployed_there(
    life: Lifecycle,
) -> None:
    await _runner().deploy()
    life.fail["fb"] = OperationError("still there")
    report = await _runner().destroy()
    assert read_record("f", "alpha") is not None  # fb is still deployed in alpha
    assert read_record("f", "beta") is None
    assert [n.project_key for n in report.networks] == ["alpha"]
    del life.fail["fb"]
    report = await _runner(only="alpha").destroy()
    assert read_record("f", "alpha") is None and report.networks == []


async def test_a_fleet_of_other_backends_is_refused(life: Lifecycle) -> None:
    text = fleet_text(name="m").replace("  backend: soperator\n", "  backend: mk8s\n")
    for run in ("plan", "deploy", "destroy"):
        with pytest.raises(UsageError) as info:
            await getattr(_runner("m", text=text), run)()
        assert info.value.message.startswith(f"cannot {run} alpha/fa (backend mk8s, ")
        assert info.value.message.endswith(": npa-sop-tui runs soperator targets only")
    assert life.calls == []


async def test_a_busy_fleet_is_refused(life: Lifecycle) -> None:
    from npa_sop_tui.fleet.state import fleet_lock

    with fleet_lock("f", "deploy"):
        for run in ("deploy", "destroy"):
            with pytest.raises(UsageError, match="fleet 'f' is busy") as info:
                await getattr(_runner(), run)()
            assert info.value.hint == f"wait for it to finish, then run `npa fleet {run}` again"


async def test_without_a_sink_no_events_are_forwarded(life: Lifecycle) -> None:
    runner = _runner()
    assert runner._sink(report_target("fa")) is None
    got: list[tuple[FleetTarget, Event]] = []
    sink = _runner(on_event=lambda t, e: got.append((t, e)))._sink(report_target("fa"))
    assert sink is not None
    event = LogLine(operation_id="x", stream="npa", text="hi")
    sink(event)
    assert got == [(report_target("fa"), event)]


def test_report_targets_are_the_files_order(tmp_path: Path) -> None:
    assert [t.key for t in _runner().targets] == ["alpha/fa", "alpha/fb", "beta/fc"]


async def test_a_forced_stop_interrupts_every_running_target(life: Lifecycle) -> None:
    runner = _runner(concurrency=3)
    runner.force()  # before a run: nothing to stop
    life.gate = asyncio.Event()
    task = asyncio.ensure_future(runner.deploy())
    await eventually(lambda: life.running == 3, what="three targets running")
    runner.force()
    report = await task
    assert _statuses(report) == [
        ("alpha/fa", "interrupted"),
        ("alpha/fb", "interrupted"),
        ("beta/fc", "interrupted"),
    ]
    assert all(t.started is not None and t.message == "interrupted" for t in report.targets)
    assert {r.state for r in load_state("f").targets.values()} == {"interrupted"}
    runner.force()  # every task is done: nothing is cancelled again


async def test_each_target_gets_the_runners_environment_and_terraform_folder(
    life: Lifecycle,
) -> None:
    runner = _runner(terraform_dir="/opt/recipe")
    await runner.plan()
    await runner.deploy()
    await runner.destroy()
    for what, _, options in life.calls:
        assert options is not None, what
        assert options.environment is runner.environment and options.terraform_dir == "/opt/recipe"
    assert [c[2].identity is None for c in life.calls if c[0] == "destroy"] == [True] * 3


async def test_identity_missing_from_the_fleet_comes_from_the_settings(life: Lifecycle) -> None:
    text = fleet_text(name="s").replace("tenant_id: tenant-e00fleet\n", "")
    settings = resolve_settings({"tenant_id": "tenant-e00config", "region": "eu-west1"})
    for run in ("plan", "deploy"):
        await getattr(_runner("s", text=text, environment=Environment(settings)), run)()
    assert [(what, options.identity.tenant_id) for what, _, options in life.calls] == [
        *[("plan", "tenant-e00config")] * 3,
        *[("deploy", "tenant-e00config")] * 3,
    ]


class RecordingNetworks(SandboxNetworks):
    """The sandbox's networks, noting which project each preview was asked for."""

    def __init__(self) -> None:
        self.previews: list[tuple[str, str | None]] = []

    def preview(self, fleet: str, project_key: str, project_id: str | None) -> str:
        self.previews.append((project_key, project_id))
        return super().preview(fleet, project_key, project_id)

    def create(self, fleet: str, project_key: str, project_id: str | None) -> str:
        return SandboxNetworks.preview(self, fleet, project_key, project_id)


async def test_a_subnet_the_file_names_is_used_and_recorded_as_not_owned(
    life: Lifecycle,
) -> None:
    text = fleet_text(name="g").replace(
        "    project_id: project-e00alpha\n",
        "    project_id: project-e00alpha\n    subnet_id: vpcsubnet-given\n",
    )
    networks = RecordingNetworks()
    plan = await _runner("g", text=text, network_provider=networks).plan()
    assert [t.subnet_id for t in plan.targets] == [
        "vpcsubnet-given",
        "vpcsubnet-given",
        "vpcsubnet-sandbox-g-beta",
    ]
    assert networks.previews == [("beta", "project-e00beta")]  # only where none is given
    networks.previews.clear()
    await _runner("g", text=text, network_provider=networks).deploy()
    assert networks.previews == [("beta", "project-e00beta")]
    alpha, beta = read_record("g", "alpha"), read_record("g", "beta")
    assert alpha is not None and (alpha.subnet_id, alpha.owned) == ("vpcsubnet-given", False)
    assert (alpha.project_id, beta.project_id if beta else None) == (
        "project-e00alpha",
        "project-e00beta",
    )


async def test_every_operation_forwards_each_targets_events_with_the_target(
    life: Lifecycle,
) -> None:
    seen: list[tuple[str, str]] = []

    def sink(target: FleetTarget, event: Event) -> None:
        seen.append((target.key, event.operation_id))

    for run in ("plan", "deploy", "destroy"):
        await getattr(_runner(on_event=sink, only="beta"), run)()
    assert seen == [("beta/fc", "plan-fc"), ("beta/fc", "deploy-fc"), ("beta/fc", "destroy-fc")]


async def test_the_report_names_each_clusters_folder(life: Lifecycle) -> None:
    report = await _runner(only="beta").deploy()
    (cluster,) = report.clusters
    assert cluster["backend_state_root"] == str(target_dir(report_target("fc")))


async def test_a_cluster_destroyed_outside_the_fleet_is_absent_and_its_folder_goes(
    life: Lifecycle,
) -> None:
    await _runner(only="beta").deploy()
    entry = inventory.require("fc")
    entry.state = "destroyed"
    inventory.save(entry)
    folder = target_dir(report_target("fc"))
    assert folder.is_dir()
    report = await _runner(only="beta").destroy()
    assert _statuses(report) == [("beta/fc", "absent")] and not folder.exists()
    assert [c[0] for c in life.calls] == ["deploy"]
