"""The sandbox's simulated Slurm honours the operator actions: drain, resume, cancel.

Nodes come from the simulated cluster (sandbox/cluster.py: a node per worker of each
released pool); this module keeps what operators did to them in a small state file beside
the cluster's inventory (`slurm-sim.json`), so a drain done by `npa soperator drain
--sandbox` shows in the app's dashboard and in the next `nodes --sandbox`, until resumed.
Jobs really run, as local processes (sandbox/local_jobs.py): the queue, `scancel` and
the history (which exists only when the spec has accounting on, as on a real cluster) are
theirs, and a running job makes its nodes `mixed`.

What it answers goes through Slurm's own output formats and npa's real parsers
(sandbox/slurm_text.py, which follows Slurm 25.11.3 as Soperator 4.1.x builds it): the
partitions `main` and `hidden`, a reason without `[user@time]` in the node list, and
`scontrol show node`'s line with who/when after the reason and `Extra=`/`InstanceId=`.
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
from npa_sop_tui.sandbox.job_tools import DEFAULT_GPU_MODEL, SimNode
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
        from npa_sop_tui.home.fsutil import atomic_write_text

        atomic_write_text(path, json.dumps(asdict(self), indent=1))


def state_path(name: str) -> Path:
    from npa_sop_tui.home.paths import cluster_dir

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
            # sinfo's %E is the reason alone; who/when is scontrol's (see node())
            update.update(state=long, display=long + suffix, flags=flags, reason=drain["reason"])
        nodes.append(node.model_copy(update=update) if update else node)
    return as_slurm_prints(slurm.model_copy(update={"nodes": nodes}))


def as_slurm_prints(slurm: SlurmState) -> SlurmState:
    """`slurm` as npa reads it from a real login node: rendered as Slurm 25.11's one-call
    sinfo table (with `hidden`) and parsed back by the status parser."""
    from npa_sop_tui.sandbox.slurm_text import summary_text
    from npa_sop_tui.status.sinfo_summary import parse_summary

    if not slurm.nodes:
        return slurm
    nodes, partitions, text = parse_summary(summary_text(slurm.nodes))
    return slurm.model_copy(update={"nodes": nodes, "partitions": partitions, "sinfo_text": text})


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
        self,
        name: str,
        base_nodes: Callable[[], SlurmState],
        *,
        accounting: bool,
        gpu_model: Callable[[str], str] | None = None,
    ) -> None:
        self.name = name
        self.base_nodes = base_nodes
        self.accounting = accounting
        self.gpu_model = gpu_model  # node name → the GPU its nvidia-smi names
        self.path = state_path(name)

    def _state(self) -> tuple[SimState, SlurmState]:
        return SimState.load(self.path), self.base_nodes()

    def local_jobs(self) -> LocalJobs:
        """The job backend: commands run as local processes on the simulated nodes."""
        from npa_sop_tui.jobs.remote import gpu_count

        def nodes() -> list[SimNode]:
            shown = overlay(SimState.load(self.path), self.base_nodes(), self.name)
            usable = [n for n in shown.nodes if n.state in ("idle", "mixed")]  # not drained
            return [
                SimNode(
                    n.name,
                    gpu_count(n.gres or ""),
                    n.cpus or 1,
                    self.gpu_model(n.name) if self.gpu_model else DEFAULT_GPU_MODEL,
                )
                for n in usable
            ]

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
        from npa_sop_tui.sandbox.slurm_text import show_node_line
        from npa_sop_tui.status.scontrol import parse_show_node

        drain = state.drained.get(name)
        line = show_node_line(
            node,
            reason_by=drain["by"] if drain else None,
            reason_time=drain["time"] if drain else None,
            nodeset=name.rsplit("-", 1)[0],
        )
        detail = parse_show_node(line)  # what npa reads from a real login node
        detail.jobs = [j for j in await self.jobs() if name in (j.nodelist or "").split(",")]
        return detail

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
