"""The SDK over the real lifecycle: real Terraform on the stand-in recipe, typed results,
ordered events, our own error types with positions."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from npa.sdk import soperator
from npa_sop_tui.events import Event

from testkit.fleets import spec_mapping

pytestmark = pytest.mark.usefixtures("fast_standin")


def _assert_ordered(events: list[Event], operation: str) -> None:
    """One operation: started first, finished last, one id, timestamps non-decreasing."""
    assert events[0].kind == "operation_started" and events[0].operation == operation
    assert events[-1].kind == "operation_finished"
    assert len({e.operation_id for e in events}) == 1
    stamps = [e.ts for e in events]
    assert stamps == sorted(stamps)


def test_public_surface_matches_the_anchor_names() -> None:
    for name in ("validate", "plan", "deploy", "status", "destroy", "list"):
        assert callable(getattr(soperator, name))
    assert soperator.SoperatorSpecError is soperator.SpecError
    assert issubclass(soperator.SpecError, soperator.UsageError)
    assert soperator.SoperatorSpec.__name__ == "SoperatorSpec"
    assert soperator.WorkerPoolSpec.__name__ == "WorkerPoolSpec"
    assert set(soperator.__all__) <= set(dir(soperator))


@pytest.mark.terraform
def test_plan_deploy_list_destroy_typed_with_ordered_events(identity: Any) -> None:
    events: list[Event] = []
    lines: list[str] = []
    plan = soperator.plan(spec_mapping(), sandbox=True, identity=identity, on_event=events.append)
    assert isinstance(plan, soperator.PlanResult)
    assert plan.changes.add > 0 and plan.changes.remove == 0
    _assert_ordered(events, "plan")

    events.clear()
    deployed = soperator.deploy(
        spec_mapping(),
        sandbox=True,
        identity=identity,
        on_event=events.append,
        on_status=lines.append,
    )
    assert isinstance(deployed, soperator.DeployResult)
    assert deployed.kube_context == "nebius-sdk-demo-slurm"
    assert deployed.resources == plan.changes.add
    _assert_ordered(events, "deploy")
    phases = [e.phase for e in events if e.kind == "phase_changed"]
    assert phases.index("apply:k8s") < phases.index("apply:full")  # two-phase order
    assert lines[0] == "deploy sdk-demo: started"
    assert re.fullmatch(r"finished in [0-9ms]+: deployed.*", lines[-1]), lines[-1]
    assert not any("still creating" in line for line in lines)  # no progress ticks

    (entry,) = soperator.list()
    assert isinstance(entry, soperator.InventoryEntry)
    assert (entry.name, entry.state) == ("sdk-demo", "deployed")

    events.clear()
    destroyed = soperator.destroy("sdk-demo", sandbox=True, on_event=events.append)
    assert isinstance(destroyed, soperator.DestroyResult)
    assert destroyed.destroyed == deployed.resources and destroyed.remaining == []
    _assert_ordered(events, "destroy")
    assert soperator.list()[0].state == "destroyed"


@pytest.mark.terraform
async def test_async_iterator_yields_events_then_result(identity: Any) -> None:
    stream = soperator.plan_events(spec_mapping("sdk-iter"), sandbox=True, identity=identity)
    with pytest.raises(soperator.UsageError, match="has not finished"):
        _ = stream.result
    seen = [event async for event in stream]
    _assert_ordered(seen, "plan")
    assert isinstance(stream.result, soperator.PlanResult)
    assert stream.result.operation_id == seen[0].operation_id


async def test_sync_call_inside_a_loop_points_at_the_async_variant(identity: Any) -> None:
    with pytest.raises(soperator.EventLoopRunning) as info:
        soperator.deploy(spec_mapping(), sandbox=True, identity=identity)
    assert "adeploy" in (info.value.hint or "")
    await asyncio.sleep(0)  # the refused coroutine was closed, not left pending


@pytest.mark.terraform
async def test_failed_operation_raises_our_error_after_the_events(identity: Any) -> None:
    # The stand-in's Terraform validation rejects an unknown region: a real plan failure.
    bad = identity.model_copy(update={"region": "xx-nowhere1"})
    stream = soperator.deploy_events(spec_mapping("sdk-fail"), sandbox=True, identity=bad)
    seen: list[Event] = []
    with pytest.raises(soperator.TerraformFailed) as info:
        async for event in stream:
            seen.append(event)
    assert seen[-1].kind == "operation_finished" and seen[-1].result == "failed"
    assert "Unknown region" in info.value.message
    assert info.value.exit_code == 1


def test_status_returns_a_typed_snapshot_from_the_kube_api(tmp_path: Path) -> None:
    from npa_sop_tui.sandbox.fake_kube import FakeKubeServer
    from npa_sop_tui.sandbox.fake_kube_objects import make_node

    with FakeKubeServer() as server:
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig", "nebius-sdk-demo-slurm")
        server.add("nodes", make_node("worker-0", nodeset="worker", pool="cpu"))
        status = soperator.status("sdk-demo", kubeconfig=kubeconfig, slurm_enabled=False)
    assert isinstance(status, soperator.ClusterStatus)
    assert status.context == "nebius-sdk-demo-slurm"
    assert status.kube is not None
    names = [n.name for group in status.kube.node_groups for n in group.nodes]
    assert names == ["worker-0"]
    json.dumps(status.model_dump(mode="json"))
