"""The sandbox's simulated Slurm honours the operator actions: drain, resume, cancel.

Nodes come from the simulated cluster (sandbox/cluster.py: a node per worker of each
released pool); this module keeps what operators did to them in a small state file beside
the cluster's inventory (`slurm-sim.json`), so a drain done by `npa soperator drain
--sandbox` shows in the app's dashboard and in the next `nodes --sandbox`, until resumed.
Jobs really run, as local processes (sandbox/local_jobs.py): the queue, `scancel` and
the history (which exists only when the spec has accounting on, as on a real cluster) are
theirs, and a running job makes its nodes `mixed`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from npa_sop_tui.errors import UsageError
from npa_sop_tui.jobs.model import JobInfo
from npa_sop_tui.sandbox.local_jobs import LocalJobs
from npa_sop_tui.status.jobs import JobHistory, NodeDetail, SlurmJob
from npa_sop_tui.status.model import SlurmNode, SlurmState
from npa_sop_tui.status.slurm_ops import check_job, check_node, check_reason

STATE_FILE = "slurm-sim.json"
SIM_USER = "root"  # Soperator's login nodes are reached as root


@dataclass
class SimState:
    """What operators did to the simulated Slurm (its jobs are sandbox/local_jobs.py's)."""

    drained: dict[str, dict[str, str]] = field(default_factory=dict)  # node → reason, by, time

    @classmethod
    def load(cls, path: Path) -> SimState:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return cls()
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**known)

    def save(self, path: Path) -> None:
        from npa_sop_tui.fsutil import atomic_write_text

        atomic_write_text(path, json.dumps(asdict(self), indent=1))


def state_path(name: str) -> Path:
    from npa_sop_tui.paths import cluster_dir

    return cluster_dir(name) / STATE_FILE


# -- applying the state to what sinfo shows ----------------------------------------------


def overlay(state: SimState, slurm: SlurmState, name: str) -> SlurmState:
    """`slurm` as sinfo would print it after the operators' actions and the running jobs."""
    busy = {
        node: {"cpus": 1}
        for job in LocalJobs(name, lambda: []).all()
        if job.state == "RUNNING"
        for node in (job.nodes or "").split(",")
    }
    nodes: list[SlurmNode] = []
    for node in slurm.nodes:
        update: dict[str, Any] = {}
        job = busy.get(node.name)
        if job is not None and node.state == "idle":
            cpus = min(node.cpus or 1, int(job.get("cpus", 1)))
            update.update(cpus_allocated=cpus, state="mixed", display="mixed")
        drain = state.drained.get(node.name)
        if drain is not None:
            draining = update.get("state") == "mixed"
            long = "draining" if draining else "drained"
            flags = [*node.flags, "DRAIN"] if "DRAIN" not in node.flags else node.flags
            suffix = "*" if "NOT_RESPONDING" in flags else ""
            reason = f"{drain['reason']} [{drain['by']}@{drain['time']}]"
            update.update(state=long, display=long + suffix, flags=flags, reason=reason)
        nodes.append(node.model_copy(update=update) if update else node)
    from npa_sop_tui.status.slurm import enrich_partitions

    partitions = enrich_partitions([p.model_copy() for p in slurm.partitions], nodes)
    for part in partitions:
        members = [n for n in nodes if n.name in set(part.nodes)]
        part.nodes_idle = sum(1 for n in members if n.state == "idle")
        part.nodes_allocated = sum(1 for n in members if n.state in ("mixed", "allocated"))
        part.nodes_other = len(members) - part.nodes_idle - part.nodes_allocated
    return slurm.model_copy(update={"nodes": nodes, "partitions": partitions})


def _job(job: JobInfo) -> SlurmJob:
    running = job.state == "RUNNING"
    elapsed = "0:00"
    if job.started:
        start = time.mktime(time.strptime(job.started, "%Y-%m-%dT%H:%M:%S"))
        end = time.mktime(time.strptime(job.ended, "%Y-%m-%dT%H:%M:%S")) if job.ended else None
        elapsed = _clock((end or time.time()) - start)
    return SlurmJob(
        id=job.id,
        name=job.name or "sbatch",
        user=SIM_USER,
        state=job.state,
        partition="main",
        nodes=len((job.nodes or "x").split(",")),
        nodelist=job.nodes if running else None,
        reason=None if running or job.done else job.reason,
        elapsed=elapsed,
        time_limit="UNLIMITED",
        exit_code=None if job.exit_code is None else f"{job.exit_code}:0",
        end=job.ended,
    )


def _clock(seconds: float) -> str:
    s = max(0, int(seconds))
    h, rest = divmod(s, 3600)
    return f"{h}:{rest // 60:02d}:{rest % 60:02d}" if h else f"{rest // 60}:{rest % 60:02d}"


# -- the SlurmOps of a sandbox cluster ----------------------------------------------------


class SimulatedSlurm:
    """`SlurmOps` (status/slurm_ops.py) on the simulated Slurm of one sandbox cluster."""

    def __init__(
        self, name: str, base_nodes: Callable[[], SlurmState], *, accounting: bool
    ) -> None:
        self.name = name
        self.base_nodes = base_nodes
        self.accounting = accounting
        self.path = state_path(name)

    def _state(self) -> tuple[SimState, SlurmState]:
        return SimState.load(self.path), self.base_nodes()

    def local_jobs(self) -> LocalJobs:
        """The job backend: commands run as local processes on the simulated nodes."""
        from npa_sop_tui.jobs.remote import gpu_count

        def nodes() -> list[tuple[str, int]]:
            shown = overlay(SimState.load(self.path), self.base_nodes(), self.name)
            usable = [n for n in shown.nodes if n.state in ("idle", "mixed")]  # not drained
            return [(n.name, gpu_count(n.gres or "")) for n in usable]

        return LocalJobs(self.name, nodes)

    async def nodes(self) -> SlurmState:
        state, base = self._state()
        return overlay(state, base, self.name)

    async def jobs(self) -> list[SlurmJob]:
        return [_job(j) for j in LocalJobs(self.name, lambda: []).all() if not j.done]

    async def history(self) -> JobHistory:
        if not self.accounting:
            return JobHistory(
                available=False,
                note="no job history: accounting is off in this cluster's spec (accounting: "
                "true adds slurmdbd)",
            )
        ended = [_job(j) for j in LocalJobs(self.name, lambda: []).all() if j.done]
        return JobHistory(available=True, jobs=ended)

    async def node(self, name: str) -> NodeDetail:
        check_node(name)
        state, base = self._state()
        node = next((n for n in overlay(state, base, self.name).nodes if n.name == name), None)
        if node is None:
            raise UsageError(
                f"Slurm has no node {name!r}",
                hint="`npa soperator nodes --name <cluster> --sandbox` lists the nodes",
            )
        drain = state.drained.get(name)
        base_state = {"drained": "idle", "draining": "mixed"}.get(node.state, node.state)
        flags = "".join(f"+{flag}" for flag in node.flags)
        return NodeDetail(
            name=name,
            state=base_state.upper() + flags,  # as scontrol prints it: IDLE+DRAIN
            reason=drain["reason"] if drain else node.reason,
            reason_by=drain["by"] if drain else None,
            reason_time=drain["time"] if drain else None,
            cpus=node.cpus,
            cpus_allocated=node.cpus_allocated,
            memory_mb=node.memory_mb,
            gres=node.gres,
            partitions=list(node.partitions),
            features=list(node.features),
            jobs=[j for j in await self.jobs() if name in (j.nodelist or "").split(",")],
        )

    async def drain(self, node: str, reason: str) -> None:
        reason = check_reason(reason)
        await self.node(node)
        state, _ = self._state()
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        state.drained[node] = {"reason": reason, "by": SIM_USER, "time": stamp}
        state.save(self.path)

    async def resume(self, node: str) -> None:
        await self.node(node)
        state, _ = self._state()
        state.drained.pop(node, None)
        state.save(self.path)

    async def cancel(self, job_id: str) -> None:
        await LocalJobs(self.name, lambda: []).cancel(check_job(job_id))

    async def aclose(self) -> None:
        return None


def simulated_slurm_state(name: str, base: SlurmState) -> SlurmState:
    """What the dashboard's simulated sinfo shows for `name`: `base` after the actions."""
    return overlay(SimState.load(state_path(name)), base, name)
