"""Jobs on a real cluster, through the login node: sbatch, a follower that streams the
output file and the job's state over one SSH channel, scancel.

The follower runs on the login node (bash, squeue, stat, tail): it polls squeue there (every
0.05 s for the first 2 s, then every 0.25 s, then every second), writes new output bytes to
stdout exactly as the job wrote them (invalid UTF-8 and long lines included) and one control
line per change to stderr, so following a job costs one channel, not a round trip per poll.
Finished jobs leave squeue after MinJobAge (Slurm's default 300 s; 2 s in the test lab),
so the exit status comes from the file the batch script writes (jobs/script.py), else from
sacct when accounting is on.
"""

from __future__ import annotations

import asyncio
import shlex
from typing import Any

from npa_sop_tui.errors import OperationError, UsageError
from npa_sop_tui.jobs.attached import launch_command, task_script
from npa_sop_tui.jobs.model import ACTIVE, JobInfo, JobRequest, OnOutput, OnState
from npa_sop_tui.jobs.script import JOB_DIR, batch_script, job_name, sbatch_options
from npa_sop_tui.status.slurm_ops import check_job

_DOWN = frozenset({"down", "drain", "drng", "fail", "failg", "maint", "inval", "unk", "futr"})

# The most GPUs of any answering node of the default partition (or $part): `gpu:h100:8(S:0-1)`
# -> 8, parsed by bash itself (a process costs tens of ms on a busy login node).
_GPUS_AUTO = (
    "g=0; re='^gpu:([^:,(]*:)?([0-9]+)'\n"
    "while IFS= read -r l; do\n"
    '  [[ $l =~ $re ]] && [ "${BASH_REMATCH[2]}" -gt "$g" ] && g=${BASH_REMATCH[2]}\n'
    'done < <(sinfo -h -N --responding -t idle,mix,alloc,comp ${part:+-p "$part"} '
    "-o '%G' 2>/dev/null)\n"
    '[ "$g" -gt 0 ] && set -- "$@" --gpus-per-node="$g"\n'
)

SUBMIT = (
    "umask 077\n"
    f'd="$HOME/{JOB_DIR}"\n'
    'mkdir -p "$d" || exit 97\n'
    'printf "%s\\n" "$d"\n'
    "part=$1; shift\n"
)

FOLLOW_ARGS = "j=$1; p=$2; off=$3; once=$4\n"

# Expects $j (job), $p (output path without .out), $off and $once (also after an attached
# run's launcher, jobs/attached.py, when its job ended without an exit status).
FOLLOW_LOOP = r"""
[ -n "$p" ] || p="$HOME/.npa-jobs/$j"
o="$p.out"; x="$p.exit"; last=; n=0; nap=0.05; missing=0
flush() {
  if [ -f "$o" ]; then
    size=$(stat -c %s "$o")
    if [ "$size" -gt "$off" ]; then
      tail -c +"$((off + 1))" "$o" | head -c "$((size - off))"; off=$size
    fi
  fi
}
while :; do
  s=$(squeue -h -t all -j "$j" -o '%T|%r|%S|%e|%N|%j' 2>/dev/null | head -n1)
  if [ -n "$s" ] && [ "$s" != "$last" ]; then printf 'S %s\n' "$s" >&2; last=$s; fi
  flush
  [ "$once" = 1 ] && break
  case "${s%%|*}" in
    __ACTIVE__) missing=0 ;;
    "") [ -s "$x" ] && break; missing=$((missing + 1)); [ "$missing" -gt 3 ] && break ;;
    *) break ;;
  esac
  n=$((n + 1)); [ "$n" = 40 ] && nap=0.25; [ "$n" = 160 ] && nap=1
  sleep "$nap"
done
flush
if [ -s "$x" ]; then printf 'X %s\n' "$(head -c 16 "$x")" >&2
else
  a=$(sacct -n -X -P -j "$j" -o State,ExitCode 2>/dev/null | head -n1)
  [ -n "$a" ] && printf 'A %s\n' "$a" >&2
fi
[ -z "$s" ] && [ -z "$last" ] && printf 'G\n' >&2
printf 'E\n' >&2
""".replace("__ACTIVE__", "|".join(sorted(ACTIVE)))
FOLLOW = FOLLOW_ARGS + FOLLOW_LOOP


class RemoteJobs:
    """Jobs through a runner: an `SshSession` (status/ssh.py) to the login node, or any
    object with `run(command, timeout=)` when npa runs beside Slurm (`LocalRunner`)."""

    sandbox = False

    def __init__(self, runner: Any, *, timeout: float = 30.0) -> None:
        self.runner = runner
        self.timeout = timeout
        self._live: dict[str, _Process] = {}  # attached runs' channels, not yet followed

    # -- submitting --------------------------------------------------------------------

    async def submit(
        self, request: JobRequest, *, pool: str | None = None, attached: bool = False
    ) -> JobInfo:
        """Submit `request` as a batch job; `attached` (a command the caller follows at
        once) launches it through srun instead, which Slurm starts without the batch
        scheduling delay (jobs/attached.py)."""
        request = request.checked()
        auto_gpus = request.auto_gpus
        if pool or request.all_nodes:
            nodes, partition, exclude = await self._placement(pool, request.partition)
            request.partition, request.exclude = partition, exclude
            if request.all_nodes and request.nodes is None:
                request.nodes = max(1, len(nodes))
            if auto_gpus and nodes:
                request.gpus_per_node, auto_gpus = min(nodes.values()) or None, False
        options = sbatch_options(request)
        if attached and request.command is not None:
            return await self._launch(request, options, auto_gpus)
        script = batch_script(request)
        command = (
            f"{SUBMIT}"
            f"{_GPUS_AUTO if auto_gpus else ''}"
            'NPA_JOB_DIR="$d" exec sbatch --parsable --output="$d/%j.out" '
            '--error="$d/%j.out" "$@"'
        )
        line = (
            f"bash -c {shlex.quote(command)} npa-submit {shlex.quote(request.partition or '')} "
            f"{' '.join(options)}"
        )
        status, out, err = await self._exec(line, stdin=script.encode(), timeout=self.timeout)
        words = out.decode(errors="replace").split()
        if status != 0 or len(words) < 2:
            answer = out.decode(errors="replace").partition("\n")[2]  # after the job folder
            raise _refused(err.decode(errors="replace") or answer, status)
        job_dir, job_id = words[0], words[1].split(";")[0]
        return JobInfo(
            id=check_job(job_id),
            state="PENDING",
            output_path=f"{job_dir}/{job_id}.out",
            name=job_name(request) or request.script_name,
        )

    async def _launch(self, request: JobRequest, options: list[str], auto_gpus: bool) -> JobInfo:
        program = launch_command(FOLLOW_LOOP, _GPUS_AUTO if auto_gpus else "")
        line = (
            f"bash -c {shlex.quote(program)} npa-run {shlex.quote(request.partition or '')} "
            f"{' '.join(options)}"
        )
        proc = await self._start(line, stdin=task_script(request).encode())
        said: list[str] = []
        try:
            async with asyncio.timeout(self.timeout):
                while raw := await proc.stderr.readline():
                    text = raw.decode(errors="replace").rstrip("\n")
                    if text.startswith("J "):
                        break
                    said.append(text)
                else:
                    status = await proc.finish()
                    raise _refused("\n".join(said), status)
        except BaseException:
            await proc.close()
            raise
        _, job_id, job_dir = [*text.split(" ", 2), ""][:3]
        job = JobInfo(
            id=check_job(job_id),
            state="PENDING",
            output_path=f"{job_dir}/{job_id}.out",
            name=job_name(request),
        )
        self._live[job.id] = proc
        return job

    async def _placement(
        self, pool: str | None, partition: str | None
    ) -> tuple[dict[str, int], str | None, list[str]]:
        """The nodes a job may use (name → GPUs; those that answer), the partition, and
        the nodes to exclude. A pool is its own partition if there is one, else the nodes
        named `<pool>-…`; without a pool, the GPU nodes if there are any."""
        result = await self.runner.run("sinfo -h -N -o '%N|%P|%G|%t'", timeout=self.timeout)
        if result.exit_status != 0:
            raise OperationError(f"listing nodes failed: {result.stderr.strip()[:200]}")
        rows = [ln.split("|") for ln in result.stdout.splitlines() if ln.count("|") == 3]
        parts = {p.rstrip("*") for _, p, _, _ in rows}
        if pool and pool in parts:
            mine = {n for n, p, _, _ in rows if p.rstrip("*") == pool}
        elif pool:
            mine = {n for n, _, _, _ in rows if n.startswith(f"{pool}-")}
        else:
            gpu_nodes = {n for n, _, g, _ in rows if gpu_count(g)}
            mine = gpu_nodes or {n for n, _, _, _ in rows}
        if not mine:
            pools = sorted({n.rsplit("-", 1)[0] for n, _, _, _ in rows if "-" in n})
            raise UsageError(
                f"no Slurm nodes of pool {pool!r}",
                hint=f"pools with nodes: {', '.join(pools) or 'none'}",
            )
        usable = {
            n: gpu_count(g)
            for n, _, g, t in rows
            if n in mine and not t.endswith("*") and t.rstrip("$@~#%!") not in _DOWN
        }
        if pool and pool in parts:
            return usable, partition or pool, []
        others = sorted({n for n, _, _, _ in rows if n not in mine})
        return usable, partition, others

    # -- following ---------------------------------------------------------------------

    async def follow(
        self,
        job: JobInfo,
        *,
        offset: int = 0,
        on_output: OnOutput,
        on_state: OnState | None = None,
        once: bool = False,
    ) -> JobInfo:
        """Stream `job`'s output from byte `offset` until it ends (or one pass with `once`);
        `job` is updated in place and returned."""
        check_job(job.id)
        prefix = job.output_path[: -len(".out")] if job.output_path else ""
        line = (
            f"bash -c {shlex.quote(FOLLOW)} npa-follow {job.id} {shlex.quote(prefix)} "
            f"{int(offset)} {int(once)}"
        )
        live = self._live.pop(job.id, None)
        if live is not None and (offset or once):
            await live.close()
            live = None
        proc = live or await self._start(line)
        seen: dict[str, str] = {}
        received = 0
        try:

            async def control() -> None:
                while raw := await proc.stderr.readline():
                    _apply(job, raw.decode(errors="replace").rstrip("\n"), seen)
                    if on_state is not None and raw[:1] == b"S":
                        on_state(job)

            async def output() -> None:
                nonlocal received
                while chunk := await proc.stdout.read(65536):
                    received += len(chunk)
                    on_output(chunk)

            await asyncio.gather(control(), output())
            await proc.finish()
        finally:
            proc.stop()
        if "G" in seen and "X" not in seen and "A" not in seen and not (received or offset):
            raise UsageError(
                f"Slurm does not know job {job.id} and it left no output",
                hint="`npa soperator jobs --name <cluster>` lists the jobs npa submitted",
            )
        _settle(job, seen)
        return job

    async def cancel(self, job_id: str) -> None:
        result = await self.runner.run(f"scancel {check_job(job_id)}", timeout=self.timeout)
        if result.exit_status != 0:
            raise OperationError(f"scancel {job_id} failed: {result.stderr.strip()[:200]}")

    async def aclose(self) -> None:
        for live in self._live.values():
            await live.close()  # the job goes on: its srun does not hang on this channel
        self._live.clear()
        close = getattr(self.runner, "close", None)
        if close is not None:
            await close()

    # -- processes ---------------------------------------------------------------------

    async def _start(self, command: str, stdin: bytes | None = None) -> _Process:
        connection = getattr(self.runner, "connection", None)
        if connection is not None:
            conn = await connection()
            proc = await conn.create_process(command, encoding=None)
            if stdin is not None:
                proc.stdin.write(stdin)
            proc.stdin.write_eof()
            return _Process(proc, ssh=True)
        local = await asyncio.create_subprocess_exec(
            "bash",
            "-c",
            command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        assert local.stdin is not None
        if stdin is not None:
            local.stdin.write(stdin)
        local.stdin.close()
        return _Process(local, ssh=False)

    async def _exec(
        self, command: str, *, stdin: bytes, timeout: float
    ) -> tuple[int, bytes, bytes]:
        proc = await self._start(command, stdin)
        try:
            out, err = await asyncio.wait_for(
                asyncio.gather(proc.stdout.read(), proc.stderr.read()), timeout
            )
            return await proc.finish(), out, err
        except TimeoutError:
            await proc.close()
            raise OperationError(f"submitting did not finish within {timeout:g}s") from None
        finally:
            proc.stop()


class _Process:
    """An SSH or local process with byte streams."""

    def __init__(self, proc: Any, *, ssh: bool) -> None:
        self.proc = proc
        self.ssh = ssh
        self.stdout = proc.stdout
        self.stderr = proc.stderr

    async def finish(self) -> int:
        if self.ssh:
            done = await self.proc.wait(check=False)
            return done.exit_status if done.exit_status is not None else -1
        return await self.proc.wait()

    def stop(self) -> None:
        if self.ssh:
            self.proc.close()
        elif self.proc.returncode is None:
            self.proc.kill()

    async def close(self) -> None:
        """Stop it and wait until it is gone: a local process is reaped at once, not left
        to the event loop's end."""
        self.stop()
        await self.finish()


def gpu_count(gres: str) -> int:
    """GPUs in a Slurm gres string: `gpu:h100:8(S:0-1)` -> 8, `gpu:4,gpu:a100:2` -> 6."""
    total = 0
    for item in gres.split(","):
        fields = item.split("(")[0].split(":")
        if fields[0] == "gpu" and fields[-1].isdigit():
            total += int(fields[-1])
    return total


def _apply(job: JobInfo, line: str, seen: dict[str, str]) -> None:
    kind, _, rest = line.partition(" ")
    seen[kind] = rest
    if kind == "S":
        state, reason, start, end, nodes, name = (rest.split("|") + [""] * 6)[:6]
        job.state = state.split()[0] if state else job.state
        job.reason = reason if reason and reason != "None" else None
        job.started = start if start not in ("", "N/A", "Unknown") else job.started
        job.nodes = nodes or job.nodes
        job.name = name or job.name
        if job.done:  # while it runs, squeue's end time is the time limit's, not an end
            job.ended = end if end not in ("", "N/A", "Unknown") else job.ended
    elif kind == "X" and rest.strip().lstrip("-").isdigit():
        job.exit_code = int(rest.strip())


def _settle(job: JobInfo, seen: dict[str, str]) -> None:
    """The end state when squeue no longer lists the job: from the exit file, else sacct."""
    if "A" in seen and job.exit_code is None:
        state, _, code = seen["A"].partition("|")
        status = code.split(":")[0]
        job.exit_code = (
            int(status) if status.isdigit() and state.startswith(("COMPLETED", "FAILED")) else None
        )
        if not job.done:
            job.state = (state.split() or [job.state])[0]  # "CANCELLED by 1000" → CANCELLED
    if not job.done and job.exit_code is not None:
        job.state = "COMPLETED" if job.exit_code == 0 else "FAILED"


def _refused(said: str, status: int) -> Exception:
    line = next((ln.strip() for ln in said.splitlines() if ln.strip()), f"exit {status}")
    if status == 97:
        return OperationError("could not create the job folder ~/.npa-jobs on the login node")
    lowered = line.lower()
    if any(m in lowered for m in ("invalid", "not available", "requested", "unrecognized")):
        return UsageError(f"Slurm refused the job: {line}", hint="check the options and --pool")
    return OperationError(f"submitting the job failed: {line}")
