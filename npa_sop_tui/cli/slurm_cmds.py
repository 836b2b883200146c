"""`npa soperator nodes | jobs | drain | resume | cancel`: operator actions, headless.

Real clusters are reached like `status` does (SSH to the login node, its address from the
flags, the config or the login Service); `--sandbox` clusters act on their simulated Slurm.
Actions that change the cluster ask for confirmation on a terminal; `--yes` skips the
question (and is required when there is no terminal to ask).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from npa_sop_tui.cli.common import add_output_flag, emit_json, say, text_table, wants_json


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from npa_sop_tui.cli.cluster_connection import add_connection_flags

    def command(name: str, help_text: str, description: str) -> argparse.ArgumentParser:
        p = subparsers.add_parser(name, help=help_text, description=description)
        add_connection_flags(p)
        p.add_argument("--sandbox", action="store_true", help="a sandbox cluster (simulated Slurm)")
        add_output_flag(p)
        return p

    p = command(
        "nodes",
        "Slurm nodes: state, partitions, resources and the drain reason",
        "List the cluster's Slurm nodes (sinfo), or one node in detail with --node "
        "(scontrol show node, its jobs, its Kubernetes pod and node group).",
    )
    p.add_argument("--node", default=None, help="show this node in detail")
    p.set_defaults(handler=cmd_nodes)

    p = command(
        "jobs",
        "Slurm jobs: the queue (squeue), or finished jobs with --history (sacct)",
        "List queued and running jobs; --history lists finished ones (needs accounting).",
    )
    p.add_argument("--history", action="store_true", help="finished jobs (sacct)")
    p.set_defaults(handler=cmd_jobs)

    p = command(
        "drain",
        "drain a Slurm node (no new jobs; running ones finish) with a reason",
        "Drain one node: Slurm schedules nothing new on it until `resume`. The reason shows "
        "in `nodes` until then.",
    )
    p.add_argument("--node", required=True, help="the node to drain")
    p.add_argument("--reason", required=True, help="why (shown in `nodes` until resumed)")
    p.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    p.set_defaults(handler=cmd_drain)

    p = command("resume", "resume a drained or down Slurm node", "Return one node to service.")
    p.add_argument("--node", required=True, help="the node to resume")
    p.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    p.set_defaults(handler=cmd_resume)

    p = command("cancel", "cancel a Slurm job (scancel)", "Cancel one queued or running job.")
    p.add_argument("--job", required=True, help="the job ID (squeue's JOBID)")
    p.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    p.set_defaults(handler=cmd_cancel)


# -- plumbing -----------------------------------------------------------------------------


def _run(args: argparse.Namespace, work: Any, *, with_kube: bool = False) -> int:
    """Open the environment and the cluster's SlurmOps, run `work(ops)` (`work(ops,
    read_kube)` with `with_kube`), close everything."""
    import asyncio

    from npa_sop_tui.cli.cluster_connection import build_settings, connection_environment
    from npa_sop_tui.errors import EXIT_INTERRUPTED
    from npa_sop_tui.status.hostkeys import HostKeyPolicy

    environment = connection_environment(args)
    settings = build_settings(args, environment)
    if environment.is_sandbox:
        from npa_sop_tui.lifecycle.adopt import require_cluster

        require_cluster(settings.name)
    policy = HostKeyPolicy.accept_new() if args.accept_new_host_key else HostKeyPolicy()

    async def main() -> int:
        try:
            ops = await environment.slurm_ops(settings, host_key_policy=policy)
            try:
                if with_kube:  # a reader of one Kubernetes snapshot, called only if needed
                    return int(await work(ops, lambda: _kube_state(environment, settings)))
                return int(await work(ops))
            finally:
                await ops.aclose()
        finally:
            await environment.aclose()

    try:
        return asyncio.run(main())
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


async def _kube_state(environment: Any, settings: Any) -> Any:
    """One Kubernetes snapshot of the cluster (Slurm not polled), None when unreadable."""
    feed = environment.status_feed(settings.model_copy(update={"slurm_enabled": False}))
    try:
        async for snap in feed:
            return snap.kube
    finally:
        await feed.aclose()
    return None


def _confirm(args: argparse.Namespace, question: str) -> None:
    """Ask on the terminal unless --yes; no terminal and no --yes is a usage error."""
    from npa_sop_tui.errors import Interrupted, UsageError

    if args.yes:
        return
    if not sys.stdin.isatty():
        raise UsageError(
            f"{question.rstrip('?')}: confirm with --yes (-y); there is no terminal to ask",
            hint="pass --yes (-y) to confirm",
        )
    sys.stderr.write(f"{question} [y/N] ")
    sys.stderr.flush()
    if sys.stdin.readline().strip().lower() not in ("y", "yes"):
        raise Interrupted("nothing done: not confirmed")


def _table(rows: list[list[str]], header: list[str]) -> str:
    return text_table([header, *rows])


def _dump(items: list[Any]) -> list[dict[str, Any]]:
    return [i.model_dump(mode="json") for i in items]


# -- commands -----------------------------------------------------------------------------


def cmd_nodes(args: argparse.Namespace) -> int:
    async def work(ops: Any, read_kube: Any) -> int:
        if args.node:
            from npa_sop_tui.status.placement import place_node

            detail = place_node(await ops.node(args.node), await read_kube())
            if wants_json(args):
                emit_json({"ok": True, "name": args.name, "node": detail.model_dump(mode="json")})
            else:
                print(_node_text(detail))
            return 0
        state = await ops.nodes()
        if wants_json(args):
            emit_json(
                {
                    "ok": True,
                    "name": args.name,
                    "nodes": _dump(state.nodes),
                    "partitions": _dump(state.partitions),
                }
            )
            return 0
        rows = [
            [
                n.name,
                n.display,
                ",".join(n.partitions),
                "-" if n.cpus is None else f"{n.cpus_allocated or 0}/{n.cpus}",
                "-" if n.memory_mb is None else f"{n.memory_mb // 1024}G",
                n.gres or "",
                n.reason or "",
            ]
            for n in state.nodes
        ]
        header = ["NODE", "STATE", "PARTITIONS", "CPUS", "MEMORY", "GRES", "REASON"]
        print(_table(rows, header) if rows else "no Slurm nodes yet")
        return 0

    return _run(args, work, with_kube=True)


def _node_text(d: Any) -> str:
    """`scontrol show node` as lines; every value is what Slurm or Kubernetes said, each
    shown on its own line whatever it holds (`safe_text`)."""
    from npa_sop_tui.safe_text import safe_text as s

    lines = [f"{s(d.name)}  {s(d.state)}"]
    if d.reason:
        who = f" (by {d.reason_by} at {d.reason_time})" if d.reason_by else ""
        lines.append(f"  reason:     {s(d.reason + who)}")
    lines.append(f"  partitions: {s(','.join(d.partitions) or '-')}")
    lines.append(f"  cpus:       {d.cpus_allocated or 0}/{d.cpus or '?'} allocated")
    if d.memory_mb:
        lines.append(f"  memory:     {d.memory_mb} MB")
    used = f" (used {d.gres_used})" if d.gres_used else ""
    lines.append(f"  gres:       {s((d.gres or '-') + used)}")
    pod = f"{d.k8s_pod} on {d.k8s_node}" if d.k8s_pod and d.k8s_node else d.k8s_pod or "-"
    lines.append(f"  k8s pod:    {s(pod)}")
    lines.append(f"  node group: {s(d.node_group or '-')}")
    jobs = ", ".join(f"{j.id} {j.name} ({j.user})" for j in d.jobs) or "none"
    lines.append(f"  jobs:       {s(jobs)}")
    return "\n".join(lines)


def cmd_jobs(args: argparse.Namespace) -> int:
    async def work(ops: Any) -> int:
        if args.history:
            history = await ops.history()
            if wants_json(args):
                emit_json({"ok": True, "name": args.name, **history.model_dump(mode="json")})
            elif not history.available:
                say(history.note)
            else:
                rows = [
                    [
                        j.id,
                        j.name,
                        j.user,
                        j.state,
                        j.elapsed or "",
                        j.exit_code or "",
                        j.nodelist or "",
                    ]
                    for j in history.jobs
                ]
                header = ["JOBID", "NAME", "USER", "STATE", "ELAPSED", "EXIT", "NODES"]
                print(_table(rows, header) if rows else "no finished jobs")
            return 0
        from npa_sop_tui.jobs.records import with_queue

        jobs = await ops.jobs()
        mine = await _settled(args.name, ops, with_queue(args.name, jobs), jobs)
        if wants_json(args):
            submitted = [j.to_json() for j in mine]
            emit_json({"ok": True, "name": args.name, "jobs": _dump(jobs), "npa_jobs": submitted})
            return 0
        rows = [
            [
                j.id,
                j.name,
                j.user,
                j.state,
                j.elapsed or "",
                str(j.nodes or ""),
                j.nodelist or (f"({j.reason})" if j.reason else ""),
            ]
            for j in jobs
        ]
        header = ["JOBID", "NAME", "USER", "STATE", "TIME", "NODES", "NODELIST(REASON)"]
        print(_table(rows, header) if rows else "no queued or running jobs")
        if mine:
            print("\nsubmitted by npa:")
            print(_table(_npa_rows(mine), ["JOBID", "NAME", "STATE", "EXIT", "OUTPUT"]))
        return 0

    return _run(args, work)


async def _settled(name: str, ops: Any, mine: list[Any], queue: list[Any]) -> list[Any]:
    """npa's jobs, those that left the queue since last seen read to their end state (the
    exit file or sacct, one pass each) and recorded."""
    from npa_sop_tui.errors import UsageError
    from npa_sop_tui.jobs import records
    from npa_sop_tui.jobs.backend import job_backend

    queued = {j.id for j in queue}
    stale = [j for j in mine if not j.done and j.id not in queued]
    if stale:
        backend = job_backend(ops)
        for job in stale:
            try:
                await backend.follow(job, on_output=lambda _: None, once=True)
            except UsageError:
                continue  # Slurm forgot it and it left nothing: shown as last recorded
            records.save(name, job)
    return mine


def _npa_rows(jobs: list[Any]) -> list[list[str]]:
    def exit_code(j: Any) -> str:
        return "" if j.exit_code is None else str(j.exit_code)

    label = {True: "SANDBOX ", False: ""}
    return [
        [j.id, j.name or "", label[bool(j.sandbox)] + j.state, exit_code(j), j.output_path or ""]
        for j in reversed(jobs)
    ]


def _action(args: argparse.Namespace, verb: str, question: str, act: Any) -> int:
    from npa_sop_tui.status.slurm_ops import check_job, check_node, check_reason

    # bad input is refused before anything connects
    if getattr(args, "node", None) is not None:
        check_node(args.node)
    if getattr(args, "job", None) is not None:
        check_job(args.job)
    if getattr(args, "reason", None) is not None:
        args.reason = check_reason(args.reason)
    _confirm(args, question)

    async def work(ops: Any) -> int:
        result = await act(ops)
        doc = {"ok": True, "name": args.name, "action": verb, **result}
        if wants_json(args):
            emit_json(doc)
        else:
            say(result.pop("message"))
        return 0

    return _run(args, work)


def cmd_drain(args: argparse.Namespace) -> int:
    async def act(ops: Any) -> dict[str, Any]:
        await ops.drain(args.node, args.reason)
        detail = await ops.node(args.node)
        return {
            "node": args.node,
            "reason": detail.reason,
            "state": detail.state,
            "message": f"drained {args.node}: {detail.state}, reason {detail.reason!r}",
        }

    return _action(args, "drain", f"Drain {args.node} on {args.name}?", act)


def cmd_resume(args: argparse.Namespace) -> int:
    async def act(ops: Any) -> dict[str, Any]:
        await ops.resume(args.node)
        detail = await ops.node(args.node)
        return {
            "node": args.node,
            "state": detail.state,
            "message": f"resumed {args.node}: {detail.state}",
        }

    return _action(args, "resume", f"Resume {args.node} on {args.name}?", act)


def cmd_cancel(args: argparse.Namespace) -> int:
    async def act(ops: Any) -> dict[str, Any]:
        await ops.cancel(args.job)
        return {"job": args.job, "message": f"cancelled job {args.job}"}

    return _action(args, "cancel", f"Cancel job {args.job} on {args.name}?", act)
