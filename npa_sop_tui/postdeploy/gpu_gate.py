"""The GPU creation gate: every GPU node of every GPU pool must pass before `ready`.

For each GPU pool, in spec order:
1. discovery: `sinfo` on the login node must list exactly `size` nodes `<nodeset>-<n>` of the
   pool's NodeSets (the pool's name; GB300: `<pool>-rack<N>`, recipe/nodesets.py);
2. one exclusive `srun` per node (`--gpus-per-node` = the preset's GPUs), all nodes at once,
   runs `node_check.node_script()`; every node must PASS.

The whole gate shares one deadline (`--gpu-creation-check-timeout`). On a failure or when
the deadline passes, the gate cancels its jobs by name (`scancel --name`), confirms the queue
holds none of them, and stops: later pools are reported NOT_RUN. Each node's result is an
event as it arrives.
"""

from __future__ import annotations

import asyncio
import re
import secrets
import shlex
import time
from collections.abc import Callable
from typing import Any

from npa_sop_tui.postdeploy.model import GpuCreationCheck, NodeFailure, Validation
from npa_sop_tui.postdeploy.node_check import NodeOutcome, node_script, read_node_output
from npa_sop_tui.postdeploy.shell import SlurmShell
from npa_sop_tui.recipe.nodesets import pool_nodesets

DISCOVER = "sinfo -h -N -o '%N|%T'"
CLEANUP_SECONDS = 30.0
COMMAND_TIMEOUT = 60.0  # sinfo / scancel / squeue
Emit = Callable[..., None]  # emit(pool=, node=, status=, check=, message=, gpus=)


def job_name() -> str:
    return f"npa-gpu-check-{secrets.token_hex(6)}"


def srun_command(name: str, node: str, gpus: int, remaining: float) -> str:
    minutes = max(1, int(remaining // 60) + 1)
    opts = [
        f"--job-name={name}",
        f"--nodelist={node}",
        "--nodes=1",
        "--ntasks=1",
        "--exclusive",
        f"--gpus-per-node={gpus}",
        f"--immediate={max(1, int(remaining))}",
        f"--time={minutes}",
    ]
    return "srun " + " ".join(opts) + " bash -c " + shlex.quote(node_script())


async def discover(
    shell: SlurmShell, pool: str, nodesets: list[str] | None = None
) -> tuple[list[str], dict[str, str]]:
    """Nodes named `<nodeset>-<n>` (for each of `nodesets`, default the pool's name) that
    sinfo lists (each once), with their states."""
    result = await shell.run(DISCOVER, timeout=COMMAND_TIMEOUT)
    if result.exit_status != 0:
        raise GateError("discovery", f"sinfo failed: {result.stderr.strip()[-300:]}")
    names = "|".join(re.escape(ns) for ns in (nodesets or [pool]))
    pattern = re.compile(rf"^(?:{names})-\d+$")
    states: dict[str, str] = {}
    for line in result.stdout.splitlines():
        name, _, state = line.partition("|")
        if pattern.match(name.strip()):
            states.setdefault(name.strip(), state.strip())
    nodes = sorted(
        states, key=lambda n: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", n)]
    )
    return nodes, states


class GateError(Exception):
    def __init__(self, phase: str, message: str) -> None:
        super().__init__(message)
        self.phase = phase
        self.message = message


async def cleanup(shell: SlurmShell, name: str) -> bool:
    """`scancel --name`, then wait (bounded) until `squeue` shows none of the gate's jobs."""
    try:
        await shell.run(f"scancel --name={shlex.quote(name)}", timeout=COMMAND_TIMEOUT)
        deadline = time.monotonic() + CLEANUP_SECONDS
        while time.monotonic() < deadline:
            queue = await shell.run(
                f"squeue -h --name={shlex.quote(name)} -o %i", timeout=COMMAND_TIMEOUT
            )
            if queue.exit_status == 0 and not queue.stdout.strip():
                return True
            await asyncio.sleep(0.5)
    except Exception:  # cleanup is reported, never raised over the gate's own result
        return False
    return False


async def _check_node(
    shell: SlurmShell, name: str, node: str, gpus: int, deadline: float, emit: Emit, pool: str
) -> NodeOutcome:
    remaining = deadline - time.monotonic()
    result = await shell.run(srun_command(name, node, gpus, remaining), timeout=remaining + 5)
    outcome = read_node_output(node, gpus, result.exit_status, result.stdout, result.stderr)
    emit(
        pool=pool,
        node=node,
        status=outcome.status,
        check=outcome.check,
        message=outcome.message,
        gpus=outcome.gpus,
    )
    return outcome


async def run_gate(
    spec: Any, shell: SlurmShell, *, timeout: float, emit: Emit
) -> tuple[Validation, list[GpuCreationCheck]]:
    """Run the gate; `(validation, per-pool checks)`. Never raises for a failed check."""
    pools = [p for p in spec.workers if p.is_gpu()]
    checks = [
        GpuCreationCheck(pool=p.name, gpus_per_node=p.gpus_per_node, status="NOT_RUN")
        for p in pools
    ]
    if not pools:
        return Validation(status="passed"), checks
    deadline = time.monotonic() + timeout
    name = job_name()
    for pool, check in zip(pools, checks, strict=True):
        emit(pool=pool.name, status="running", message="discovering nodes")
        try:
            nodes, states = await asyncio.wait_for(
                discover(shell, pool.name, [ns.name for ns in pool_nodesets(pool)]),
                max(deadline - time.monotonic(), 0.1),
            )
        except GateError as exc:
            return _failed(check, "discovery", exc.message, None, None, emit), checks
        except Exception as exc:  # unreachable login node, timeout
            return _failed(check, "discovery", _describe(exc), None, None, emit), checks
        check.nodes = nodes
        if len(nodes) != pool.size:
            listed = ", ".join(f"{n} ({states[n]})" for n in nodes) or "none"
            message = (
                f"sinfo lists {len(nodes)} node(s) for pool {pool.name}, the spec's size is "
                f"{pool.size}: {listed}"
            )
            return _failed(check, "discovery", message, None, None, emit), checks
        tasks = [
            asyncio.ensure_future(
                _check_node(shell, name, n, pool.gpus_per_node, deadline, emit, pool.name)
            )
            for n in nodes
        ]
        done, pending = await asyncio.wait(tasks, timeout=max(deadline - time.monotonic(), 0))
        for task in pending:
            task.cancel()
        if pending:  # let the cancelled commands close their channels before cleaning up
            await asyncio.gather(*pending, return_exceptions=True)
        outcomes: list[NodeOutcome] = []
        for task in tasks:
            if task in done and task.exception() is None:
                outcomes.append(task.result())
            elif task in done:
                node = nodes[tasks.index(task)]
                outcomes.append(NodeOutcome(node, "FAIL", check="srun",
                                            message=_describe(task.exception())))  # fmt: skip
        check.tests = sorted({t for o in outcomes for t in o.tests})
        if pending:
            hung = [nodes[tasks.index(t)] for t in pending]
            check.status = "TIMEOUT"
            check.failures = [
                NodeFailure(node=n, check="timeout", message=f"no result within {timeout:g}s")
                for n in hung
            ]
            for n in hung:
                emit(pool=pool.name, node=n, status="TIMEOUT", check="timeout",
                     message=f"no result within {timeout:g}s")  # fmt: skip
            confirmed = await cleanup(shell, name)
            return (
                Validation(status="failed", code="gpu_creation_check_timeout",
                           message=f"the GPU creation check of pool {pool.name} did not finish "
                           f"within {timeout:g}s on {', '.join(hung)}", pool=pool.name,
                           node=hung[0], phase="check", cleanup_confirmed=confirmed),
                checks,
            )  # fmt: skip
        failed = [o for o in outcomes if o.status != "PASS"]
        if failed:
            check.status = "FAIL"
            check.failures = [
                NodeFailure(node=o.node, check=o.check or "?", message=o.message) for o in failed
            ]
            confirmed = await cleanup(shell, name)
            first = failed[0]
            return (
                Validation(status="failed", code="gpu_creation_check_failed",
                           message=f"{first.node}: {first.check} failed: {first.message}",
                           pool=pool.name, node=first.node, phase="check",
                           cleanup_confirmed=confirmed),
                checks,
            )  # fmt: skip
        check.status = "PASS"
        emit(pool=pool.name, status="PASS", message=f"{len(nodes)} node(s) passed")
    return Validation(status="passed"), checks


def _failed(
    check: GpuCreationCheck,
    phase: str,
    message: str,
    node: str | None,
    confirmed: bool | None,
    emit: Emit,
) -> Validation:
    check.status = "FAIL"
    check.failures = [NodeFailure(node=node or "-", check=phase, message=message)]
    emit(pool=check.pool, node=node, status="FAIL", check=phase, message=message)
    return Validation(
        status="failed",
        code="gpu_creation_check_failed",
        message=message,
        pool=check.pool,
        node=node,
        phase=phase,
        cleanup_confirmed=confirmed,
    )


def _describe(exc: BaseException | None) -> str:
    if exc is None:
        return "unknown error"
    text = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    return text.splitlines()[0]
