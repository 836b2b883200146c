"""The timeline of an operation: bars from `resource_started` to `resource_finished`, in
start order, grouped by module, and the critical path inferred from the times."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

from npa_sop_tui.events import (
    DependencyGraph,
    OperationFinished,
    OperationStarted,
    ResourceFailed,
    ResourceFinished,
    ResourceStarted,
)
from npa_sop_tui.history.oplog import read_events
from npa_sop_tui.history.timeline import timeline_of

RECORDED = Path(__file__).parent / "data" / "deploy-demo.ndjson"
OP = "deploy-1"


def _run(addr: str, start: float, end: float, *, failed: bool = False) -> list[object]:
    module = addr.rsplit(".", 2)[0] if addr.startswith("module.") else ""
    done = ResourceFailed if failed else ResourceFinished
    return [
        ResourceStarted(ts=start, operation_id=OP, addr=addr, module=module, action="create"),
        done(
            ts=end, operation_id=OP, addr=addr, module=module, action="create", elapsed=end - start
        ),
    ]


def test_recorded_deploy_log_bars_in_order_with_their_durations() -> None:
    """A log written by a real sandbox deploy (real Terraform on the stand-in recipe): every
    resource's bar starts at its started event and lasts until its finished event."""
    raw = [json.loads(line) for line in RECORDED.read_text().splitlines()]
    starts = {e["addr"]: e["ts"] for e in raw if e["kind"] == "resource_started"}
    ends = {e["addr"]: e["ts"] for e in raw if e["kind"] == "resource_finished"}
    assert len(starts) >= 5 and starts.keys() == ends.keys()

    timeline = timeline_of(read_events(RECORDED))

    assert [b.addr for b in timeline.bars] == sorted(starts, key=lambda a: (starts[a], a))
    for bar in timeline.bars:
        assert bar.start == starts[bar.addr]
        assert abs(bar.duration() - (ends[bar.addr] - starts[bar.addr])) < 1e-9
        assert not bar.failed
    assert timeline.result == "ok" and timeline.operation == "deploy"
    # the path ends with the resource that ended last, and each step waited on the one before
    path = timeline.critical_path
    assert path and path[-1].end == max(ends.values())
    for before, after in itertools.pairwise(path):
        assert before.end is not None and before.end <= after.start + 0.5
    modules = [m for m, _ in timeline.modules()]
    assert len(modules) == len(set(modules))


def test_critical_path_follows_the_chain_not_the_longest_bar() -> None:
    events = [
        OperationStarted(ts=0, operation_id=OP, operation="deploy", name="demo"),
        *_run("module.k8s.a.cluster", 0, 10),
        *_run("module.k8s.a.nodes", 10.1, 30),  # waits on the cluster
        *_run("module.k8s.a.side", 1, 25),  # long, but nothing waits on it
        *_run("module.slurm.a.operator", 30.2, 40),  # waits on the nodes
        OperationFinished(ts=41, operation_id=OP, result="ok", message="", duration=41),
    ]
    timeline = timeline_of(events)
    assert [b.addr for b in timeline.critical_path] == [
        "module.k8s.a.cluster",
        "module.k8s.a.nodes",
        "module.slurm.a.operator",
    ]
    assert [m for m, _ in timeline.modules()] == ["module.k8s", "module.slurm"]
    assert timeline.span == (0, 41)


def test_running_and_failed_bars() -> None:
    events = [
        *_run("module.k8s.a.cluster", 0, 5, failed=True),
        ResourceStarted(
            ts=2, operation_id=OP, addr="module.k8s.a.x", module="module.k8s.a", action="create"
        ),
    ]
    timeline = timeline_of(events)
    failed, running = timeline.bars
    assert failed.failed and failed.duration() == 5
    assert running.end is None and running.duration(now=12) == 10
    assert timeline.finished is None


def test_a_finish_without_its_start_uses_terraforms_elapsed() -> None:
    finished = ResourceFinished(
        ts=100,
        operation_id=OP,
        addr="module.k8s.a.b",
        module="module.k8s.a",
        action="create",
        elapsed=7,
    )
    (bar,) = timeline_of([finished]).bars
    assert bar.start == 93 and bar.duration() == 7


def test_torn_lines_are_skipped(tmp_path: Path) -> None:
    log = tmp_path / "op.ndjson"
    lines = [e.model_dump_json() for e in _run("module.k8s.a.b", 0, 3)]
    log.write_text(lines[0] + "\nnot json\n" + lines[1] + '\n{"kind": "resource_sta')
    assert [b.duration() for b in timeline_of(read_events(log)).bars] == [3]


def test_critical_path_from_the_dependency_graph_and_its_span() -> None:
    """With the graph, the path is the chain of waits, not whatever ended last: `late`
    ended right before `app` started but `app` never waited on it. The span is the wall
    time from the path's first start to its last end, not the sum of its bars."""
    graph = DependencyGraph(
        operation_id=OP,
        dependencies={
            "module.k8s.a.cluster": [],
            "module.k8s.a.nodes": ["module.k8s.a.cluster"],
            "module.k8s.a.late": [],
            "module.slurm.a.app": ["module.k8s.a.nodes"],
        },
    )
    events = [
        graph,
        *_run("module.k8s.a.cluster", 0, 4),
        *_run('module.k8s.a.nodes["x"]', 5, 8),  # an instance: its resource's edges
        *_run("module.k8s.a.late", 1, 10),
        *_run("module.slurm.a.app", 11, 14),
    ]
    timeline = timeline_of(events)
    assert [b.addr for b in timeline.critical_path] == [
        "module.k8s.a.cluster",
        'module.k8s.a.nodes["x"]',
        "module.slurm.a.app",
    ]
    assert timeline.path_source == "dependency graph"
    assert timeline.path_span(now=20) == 14  # 0 → 14, where the bars sum to 10
    # the same times without a graph: inferred, and `late` (ended last before app) is on it
    inferred = timeline_of(events[1:])
    assert inferred.path_source == "inferred from times"
    assert "module.k8s.a.late" in [b.addr for b in inferred.critical_path]


def test_a_destroy_walks_the_graph_backwards() -> None:
    """A resource is destroyed after what waited on it: the path of a destroy runs from
    the dependents to what they depended on."""
    graph = DependencyGraph(
        operation_id=OP,
        dependencies={"module.k8s.a.cluster": [], "module.k8s.a.nodes": ["module.k8s.a.cluster"]},
    )
    gone = [
        ResourceStarted(
            ts=0, operation_id=OP, addr="module.k8s.a.nodes", module="k", action="delete"
        ),
        ResourceFinished(
            ts=3, operation_id=OP, addr="module.k8s.a.nodes", module="k", action="delete", elapsed=3
        ),
        ResourceStarted(
            ts=3, operation_id=OP, addr="module.k8s.a.other", module="k", action="delete"
        ),
        ResourceFinished(
            ts=3.2,
            operation_id=OP,
            addr="module.k8s.a.other",
            module="k",
            action="delete",
            elapsed=0.2,
        ),
        ResourceStarted(
            ts=3.3, operation_id=OP, addr="module.k8s.a.cluster", module="k", action="delete"
        ),
        ResourceFinished(
            ts=9,
            operation_id=OP,
            addr="module.k8s.a.cluster",
            module="k",
            action="delete",
            elapsed=5.7,
        ),
    ]
    path = timeline_of([graph, *gone]).critical_path
    assert [b.addr for b in path] == ["module.k8s.a.nodes", "module.k8s.a.cluster"]


def test_a_flood_of_restarts_keeps_one_bar_per_resource() -> None:
    from npa_sop_tui.history.timeline import TimelineBuilder

    builder = TimelineBuilder()
    for n in range(20_000):
        addr = f"module.k8s.null_resource.w[{n % 50}]"
        builder.add(
            ResourceStarted(ts=n, operation_id=OP, addr=addr, module="k8s", action="create")
        )
        builder.add(
            ResourceFinished(
                ts=n + 0.5, operation_id=OP, addr=addr, module="k8s", action="create", elapsed=0.5
            )
        )
    timeline = builder.build()
    assert len(timeline.bars) == 50
    assert max(b.start for b in timeline.bars) == 19_999  # each resource's newest run
