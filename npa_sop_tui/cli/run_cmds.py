"""`npa soperator run | logs`: run a command or batch script as a Slurm job through the login
node, stream its output and exit with its exit code; print or follow a job's output. A run
that is followed starts through srun, a detached one or a script through sbatch
(jobs/attached.py says why).

Ctrl-C while following detaches (the job goes on) and says how to reattach or cancel;
with --cancel-on-interrupt it cancels the job instead. Exit codes of `run` (and of
`logs --follow`): the job's own exit code; 143 when it was cancelled, 124 when it hit its
time limit, 1 when it ended without one; 130 when Ctrl-C detached; 0 with --detach.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from npa_sop_tui.cli.common import add_output_flag, emit_json, say, wants_json
from npa_sop_tui.safe_text import safe_text

OUTPUT_TAIL = 16384  # bytes of output a --output json document carries


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from npa_sop_tui.cli.cluster_connection import add_connection_flags

    p = subparsers.add_parser(
        "run",
        help="run a command (or batch script) as a Slurm job, stream its output, exit with "
        "its exit code",
        description="Run a job through the login node (srun; sbatch with --detach or "
        "--script), stream its output until it ends and exit with its exit code. Ctrl-C "
        "detaches (the job goes on). Example: npa soperator run --name demo -- nvidia-smi -L",
    )
    add_connection_flags(p)
    p.add_argument("--sandbox", action="store_true", help="a sandbox cluster (local processes)")
    add_output_flag(p)
    p.add_argument("--nodes", "-N", type=int, default=None, help="nodes (default 1)")
    p.add_argument(
        "--gpus-per-node",
        type=int,
        default=None,
        help="GPUs per node (default: all GPUs of the pool's nodes; 0 for none)",
    )
    p.add_argument("--pool", default=None, help="run on the nodes of this worker pool")
    p.add_argument("--time", "-t", default=None, help="time limit (minutes, HH:MM:SS, D-HH)")
    p.add_argument("--job-name", "-J", default=None, help="Slurm job name (default npa-run)")
    p.add_argument(
        "--env", "-e", action="append", default=[], metavar="K=V", help="set a variable (repeat)"
    )
    p.add_argument("--workdir", default=None, help="working directory on the cluster")
    p.add_argument("--script", type=Path, default=None, help="submit this batch script instead")
    p.add_argument("--template", default=None, help="a first job: see --list-templates")
    p.add_argument("--list-templates", action="store_true", help="list the job templates")
    p.add_argument("--detach", "-d", action="store_true", help="print the job ID and return")
    p.add_argument(
        "--cancel-on-interrupt",
        action="store_true",
        help="Ctrl-C cancels the job (default: Ctrl-C detaches, the job goes on)",
    )
    p.add_argument("command", nargs="*", metavar="-- COMMAND", help="the command to run")
    p.set_defaults(handler=cmd_run)

    p = subparsers.add_parser(
        "logs",
        help="print (or --follow) the output of a job npa submitted",
        description="Print a job's output; --follow streams it until the job ends and exits "
        "with the job's exit code.",
    )
    add_connection_flags(p)
    p.add_argument("--sandbox", action="store_true", help="a sandbox cluster")
    add_output_flag(p)
    p.add_argument("--job", required=True, help="the job ID (run prints it)")
    p.add_argument("--follow", "-f", action="store_true", help="stream until the job ends")
    p.set_defaults(handler=cmd_logs)


# -- plumbing -----------------------------------------------------------------------------


def _session(args: argparse.Namespace, work: Any) -> int:
    """Open the cluster's Slurm as the operator commands do, run `work(job backend)`, close
    it. A Ctrl-C reaches `work` as asyncio.CancelledError (asyncio.run cancels its task)."""
    from npa_sop_tui.cli.slurm_cmds import _run
    from npa_sop_tui.jobs.backend import job_backend

    async def with_backend(ops: Any) -> int:
        return int(await work(job_backend(ops)))

    return _run(args, with_backend)


class _Sink:
    """Job output to stdout (text mode), or the tail kept for the JSON document.

    The job's bytes go on as they are into a pipe or a file (they are its data); to a
    terminal, every control in them is shown, never obeyed (`safe_text`, line feeds kept):
    a job must not set the viewer's title, clipboard or screen."""

    def __init__(self, keep: bool) -> None:
        import codecs

        self.keep = keep
        self.tail = bytearray()
        self.out = sys.stdout.buffer
        self.terminal = sys.stdout.isatty()
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def __call__(self, chunk: bytes) -> None:
        self.tail += chunk
        del self.tail[:-OUTPUT_TAIL]
        if self.keep:
            return
        if self.terminal:
            from npa_sop_tui.safe_text import safe_text

            text = safe_text(self._decoder.decode(chunk), keep_newlines=True)
            chunk = text.encode("utf-8")
        self.out.write(chunk)
        self.out.flush()

    def text(self) -> str:
        return bytes(self.tail).decode("utf-8", errors="replace")


def _note(message: str) -> None:
    sys.stderr.write(message + "\n")
    sys.stderr.flush()


def _reattach(args: argparse.Namespace, job_id: str) -> str:
    where = f"--name {args.name}" + (" --sandbox" if args.sandbox else "")
    return (
        f"  follow:  npa soperator logs {where} --job {job_id} --follow\n"
        f"  cancel:  npa soperator cancel {where} --job {job_id} --yes"
    )


def _state_note(job: Any) -> str:
    reason = f" ({job.reason})" if job.reason else ""
    where = f" on {job.nodes}" if job.nodes and job.state == "RUNNING" else ""
    return f"job {job.id}: {job.state}{reason}{where}"


# -- run ----------------------------------------------------------------------------------


def _request(args: argparse.Namespace) -> Any:
    from npa_sop_tui.errors import UsageError
    from npa_sop_tui.jobs.model import JobRequest, command_text, parse_env

    words = list(args.command)
    if words and words[0] == "--":
        words = words[1:]
    request = JobRequest(
        job_name=args.job_name,
        nodes=args.nodes,
        gpus_per_node=args.gpus_per_node,
        time=args.time,
        env=parse_env(args.env),
        workdir=args.workdir,
    )
    if args.template:
        from npa_sop_tui.jobs.templates import apply_template

        if words or args.script:
            raise UsageError("--template fills the command: give no command or --script with it")
        return apply_template(args.template, request)
    if args.script is not None:
        if words:
            raise UsageError("give a command or --script, not both")
        request.script = _read_script(args.script)
        request.script_name = args.script.name
    elif words:
        request.command = command_text(words)
    return request.checked()


def _read_script(path: Path) -> str:
    from npa_sop_tui.errors import UsageError

    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(
            f"--script {path}: {exc.strerror or exc}", hint="pass a readable batch script"
        ) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"--script {path}: byte {exc.start} is not UTF-8 text") from None


def cmd_run(args: argparse.Namespace) -> int:
    if args.list_templates:
        return _list_templates(args)
    request = _request(args)
    as_json = wants_json(args)
    sink = _Sink(keep=as_json)

    async def work(backend: Any) -> int:
        import asyncio

        from npa_sop_tui.errors import EXIT_INTERRUPTED
        from npa_sop_tui.jobs import records

        # the default "all GPUs of the node" from the deployed spec when it decides it
        # (no sinfo before the job starts; jobs/spec_gpus.py), else Slurm is asked
        if request.auto_gpus:
            from npa_sop_tui.jobs.spec_gpus import deployed_spec, fill_default_gpus

            spec_yaml = await asyncio.to_thread(deployed_spec, args.name)
            fill_default_gpus(request, spec_yaml, pool=args.pool)
        # a run the user waits for goes through srun (no batch scheduling delay); a
        # detached job or a batch script through sbatch (jobs/attached.py says why)
        job = await backend.submit(request, pool=args.pool, attached=not args.detach)
        label = "SANDBOX " if backend.sandbox else ""
        records.save(args.name, job, command=request.command or f"--script {request.script_name}")
        if args.detach:
            if as_json:
                emit_json({"ok": True, "name": args.name, **job.to_json()})
            else:
                print(job.id)
                _note(f"{label}job {job.id} submitted; output: {job.output_path}")
                _note(_reattach(args, job.id))
            return 0
        if not as_json:
            _note(f"{label}job {job.id} submitted; output: {job.output_path}")
        notes = (lambda j: _note(_state_note(j))) if not as_json else None
        try:
            job = await backend.follow(job, on_output=sink, on_state=notes)
        except asyncio.CancelledError:
            return await _interrupted(args, backend, job, as_json) or EXIT_INTERRUPTED
        records.save(args.name, job)
        measured = _measured(sink.text())
        if as_json:
            emit_json(
                {"ok": True, "name": args.name, **job.to_json(), **measured, "output": sink.text()}
            )
        else:
            code = job.exit_code if job.exit_code is not None else "none"
            _note(f"{label}job {job.id} {job.state}, exit code {code}")
            if "bus_bandwidth_gbps" in measured:
                _note(f"all-reduce bus bandwidth: {measured['bus_bandwidth_gbps']:g} GB/s")
        return job.run_exit_code()

    return _session(args, work)


def _measured(output: str) -> dict[str, float]:
    """What a template's output measured (nccl-tests' bus bandwidth)."""
    from npa_sop_tui.jobs.templates import bus_bandwidth

    value = bus_bandwidth(output)
    return {} if value is None else {"bus_bandwidth_gbps": value}


async def _interrupted(args: argparse.Namespace, backend: Any, job: Any, as_json: bool) -> int:
    from npa_sop_tui.errors import EXIT_INTERRUPTED
    from npa_sop_tui.jobs import records

    if args.cancel_on_interrupt:
        await backend.cancel(job.id)
        job.state, job.reason = "CANCELLED", "cancelled by Ctrl-C (--cancel-on-interrupt)"
        records.save(args.name, job)
        message = f"cancelled job {job.id}"
    else:
        message = f"detached from job {job.id}; it goes on running\n{_reattach(args, job.id)}"
    if as_json:
        emit_json({"ok": True, "name": args.name, "interrupted": True, **job.to_json()})
    else:
        _note(message)
    return EXIT_INTERRUPTED


def _list_templates(args: argparse.Namespace) -> int:
    from npa_sop_tui.jobs.templates import load_templates

    templates = load_templates()
    if wants_json(args):
        emit_json({"ok": True, "templates": [t.to_json() for t in templates]})
        return 0
    for t in templates:  # a template in the home is a file anyone may have written
        say(f"{safe_text(t.name):16} {safe_text(t.summary)}  [{safe_text(t.path)}]")
    return 0


# -- logs ---------------------------------------------------------------------------------


def cmd_logs(args: argparse.Namespace) -> int:
    from npa_sop_tui.jobs import records
    from npa_sop_tui.jobs.model import JobInfo
    from npa_sop_tui.status.slurm_ops import check_job

    job_id = check_job(args.job)
    as_json = wants_json(args)
    sink = _Sink(keep=as_json)

    async def work(backend: Any) -> int:
        import asyncio

        from npa_sop_tui.errors import EXIT_INTERRUPTED

        job = records.find(args.name, job_id) or JobInfo(id=job_id, sandbox=backend.sandbox)
        try:
            job = await backend.follow(job, on_output=sink, once=not args.follow)
        except asyncio.CancelledError:
            if not as_json:
                _note(f"stopped following job {job_id}; it goes on running")
            return EXIT_INTERRUPTED
        if records.find(args.name, job_id) is not None:
            records.save(args.name, job)
        if as_json:
            emit_json({"ok": True, "name": args.name, **job.to_json(), "output": sink.text()})
        if not args.follow:
            return 0
        return job.run_exit_code()

    return _session(args, work)
