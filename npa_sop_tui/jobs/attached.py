"""An attached `run`: the job is launched by srun on the login node instead of sbatch.

Why: slurmctld tries to start a job that srun asks for at once (an interactive allocation),
while a batch job from sbatch waits for the scheduler's next pass; Slurm documents that
batch scheduling may be deferred (SchedulerParameters `batch_sched_delay`, default 3 s,
and `defer`). Measured on the substrate's Slurm 22.05 and 26.05, a batch job stayed
PENDING 0.1-3 s before it ran; an srun allocation ran within ~0.1 s. Someone who types
`npa soperator run -- cmd` and waits for the output expects srun's latency.

What stays the same as a batch job: the job ID, its output in `~/.npa-jobs/<id>.out`, its
exit status in `<id>.exit` (written by the launcher from srun's status, as srun returns
the highest exit code of its tasks), `scancel`, `logs`, `jobs`. srun runs in a session of
its own (setsid) under a launcher that ignores SIGHUP, so a Ctrl-C that detaches (closing
the SSH channel) leaves the job running and its exit status still gets written. The
trade-off, said in docs/jobs.md: the srun that holds an attached job lives on the login
node, so a login node restart ends it; `--detach` and `--script` jobs are batch jobs,
which do not depend on the login node.

One SSH channel does everything: the launcher starts srun, whose output a `tee` writes to
the job's file and to the channel as it comes; the channel's program waits for srun to
name the job (`srun -v` prints `jobid N:` once allocated, `job N queued and waiting for
resources` while pending), says `J <id> <job dir>` on stderr, waits for the launcher to
end, then says `X <exit status>`; a job that ended without one (cancelled, timed out) is
followed to its end state by remote.py's follower loop.
"""

from __future__ import annotations

import shlex

from npa_sop_tui.jobs.model import JobRequest
from npa_sop_tui.jobs.script import JOB_DIR

# The channel's program up to the job's end. Few processes start on the way (each costs
# tens of ms on a busy login node): srun's log is read line by line from an open
# descriptor, waiting for srun to name the job is `read -t` on a pipe nobody writes, and
# the output reaches the channel through the launcher's tee, so the end of the job needs
# no polling: this program waits for the launcher (`wait`), then reads its exit file.
LAUNCH = r"""
umask 077
d="$HOME/__JOB_DIR__"
[ -d "$d" ] || mkdir -p "$d" || exit 97
part=$1; shift
__GPUS__
IFS= read -r -d '' task
t="$$-$RANDOM"; e="$d/.srun-$t.log"; o="$d/.srun-$t.out"
: > "$e"
# srun's launcher: a subshell that ignores SIGHUP, with srun in a session of its own, so
# closing this channel (Ctrl-C detaches) leaves the job running; it writes the exit status
# beside the output. A step that Slurm cancelled (scancel, time limit), or a job that never
# ran, gets no exit file, as a batch job gets none: its state says why it ended.
# The output goes through `tee -p` to the file and to this channel (descriptor 3) as srun
# writes it: no polling, and the stream ends the moment srun does. -p: a channel closed by a
# detach makes tee go on writing the file, not die (and srun with it).
(
  trap '' HUP
  setsid srun -v "$@" bash -c "$task" 2>>"$e" </dev/null | tee -p "$o" >&3 2>/dev/null
  rc=${PIPESTATUS[0]}
  exec 3>&-
  j=; ran=; cancelled=
  while IFS= read -r l; do
    [[ $l =~ ^srun:\ job(id)?\ ([0-9]+)[:\ ] ]] && j=${j:-${BASH_REMATCH[2]}}
    [[ $l == "srun: jobid "* ]] && ran=1
    [[ $l == *"CANCELLED AT"* ]] && cancelled=1
  done < "$e"
  [ -n "$j" ] || exit "$rc"
  [ -f "$o" ] && mv -f "$o" "$d/$j.out" 2>/dev/null
  # one write of a few bytes: readers take the file once it is not empty
  [ -n "$ran" ] && [ -z "$cancelled" ] && printf '%s\n' "$rc" > "$d/$j.exit"
  exit "$rc"
) </dev/null 3>&1 >/dev/null 2>&1 &
pid=$!
# srun logs older than a day go (one run in 16 looks: a process less on most runs; the
# braces keep the test out of the background subshell)
((RANDOM % 16)) ||
  { find "$d" -maxdepth 1 -name '.srun-*.log' -mmin +1440 -delete </dev/null >/dev/null 2>&1 & }
exec {lf}<"$e" {zz}<> <(:)
state() {
  s=$(squeue -h -t all -j "$j" -o '%T|%r|%S|%e|%N|%j' 2>/dev/null | head -n1)
  if [ -n "$s" ] && [ "$s" != "$last" ]; then printf 'S %s\n' "$s" >&2; last=$s; fi
}
j=; nodes=; queued=; said=; last=; n=0
while [ -z "$nodes" ]; do
  while IFS= read -r -u "$lf" l; do
    if [[ $l =~ ^srun:\ job\ ([0-9]+)\ queued ]]; then j=${BASH_REMATCH[1]}; queued=1
    elif [[ $l =~ ^srun:\ jobid\ ([0-9]+):\ nodes\([0-9]+\):.([^\']*) ]]; then
      j=${BASH_REMATCH[1]}; nodes=${BASH_REMATCH[2]}
    fi
  done
  if [ -n "$j" ] && [ -z "$said" ]; then
    # a queued job's output gets its name now (no hurry); a running one's below
    [ -n "$queued" ] && [ -f "$o" ] && mv -f "$o" "$d/$j.out" 2>/dev/null
    printf 'J %s %s\n' "$j" "$d" >&2; said=1
  fi
  [ -n "$nodes" ] && break
  if ! kill -0 "$pid" 2>/dev/null; then
    [ -n "$j" ] && { [ -f "$o" ] && mv -f "$o" "$d/$j.out"; break; }
    while IFS= read -r l; do [[ $l == *error* ]] && printf '%s\n' "$l" >&2; done < "$e"
    rm -f "$e" "$o"; exit 98
  fi
  [ -n "$queued" ] && [ $((n % 100)) = 0 ] && state
  n=$((n + 1))
  # 10 ms naps: only the J line waits for this loop, the output and the end do not
  read -t 0.01 -u "$zz" _
done
if [ -n "$nodes" ]; then
  printf 'S RUNNING|None|%(%Y-%m-%dT%H:%M:%S)T||%s|\n' -1 "$nodes" >&2
  # tee holds the file open: the rename to <job id>.out can happen while the job runs
  [ -f "$o" ] && mv -f "$o" "$d/$j.out" 2>/dev/null
fi
wait "$pid" 2>/dev/null
x="$d/$j.exit"
if [ -s "$x" ]; then
  IFS= read -r code < "$x"; printf 'X %s\n' "$code" >&2; printf 'E\n' >&2; exit 0
fi
p="$d/$j"; once=0; off=$(stat -c %s "$d/$j.out" 2>/dev/null || echo 0)
""".replace("__JOB_DIR__", JOB_DIR)


def task_script(request: JobRequest) -> str:
    """What each srun task runs: the environment, then the command with its stderr joined
    to its stdout (one output file, as for a batch job)."""
    assert request.command is not None
    lines = [f"export {key}={shlex.quote(value)}" for key, value in request.env.items()]
    lines += ["exec 2>&1", request.command]
    return "\n".join(lines) + "\n"


def launch_command(follow_loop: str, gpus_auto: str) -> str:
    """The whole program of an attached run's channel (arguments: partition, srun options;
    the task on stdin): launch, stream to the end, else (no exit status: cancelled, timed
    out) poll the job's end as remote.py's follower does."""
    return LAUNCH.replace("__GPUS__", gpus_auto) + follow_loop
