"""jobs/remote.py without a Slurm lab: what the follower's control lines and sacct's answer
mean (pure functions), and the submit, placement, follow and cancel programs run by bash as
on a login node, against Slurm's recorded answers (`sbatch --parsable`, `squeue -o`, `sacct
-P`, `sinfo -o`). The same flows against real Slurm over SSH are in test_jobs_remote.py."""

from __future__ import annotations

import os
import shlex
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from npa_sop_tui.errors import OperationError, UsageError
from npa_sop_tui.jobs.model import JobInfo, JobRequest
from npa_sop_tui.jobs.remote import RemoteJobs, _apply, _refused, _settle, gpu_count
from npa_sop_tui.status.slurm_ops import CommandResult, LocalRunner

from testkit.login_node import login_node
from testkit.wait import eventually

# --- what Slurm's answers mean -----------------------------------------------------------


def test_the_exit_code_of_a_failed_job_read_through_sacct() -> None:
    job = JobInfo(id="42", state="RUNNING")
    _settle(job, {"A": "FAILED|3:0"})
    assert (job.exit_code, job.state) == (3, "FAILED")


@pytest.mark.parametrize(
    ("answer", "exit_code", "state"),
    [
        ("COMPLETED|0:0", 0, "COMPLETED"),
        ("FAILED|127:0", 127, "FAILED"),
        ("CANCELLED by 1000|0:15", None, "CANCELLED"),  # no exit code of its own
        ("TIMEOUT|0:15", None, "TIMEOUT"),
        ("OUT_OF_MEMORY|0:125", None, "OUT_OF_MEMORY"),
        ("FAILED|x:0", None, "FAILED"),
        ("|", None, "RUNNING"),  # an empty answer leaves the job as it was
    ],
)
def test_sacct_gives_an_exit_code_only_to_completed_and_failed_jobs(
    answer: str, exit_code: int | None, state: str
) -> None:
    job = JobInfo(id="42", state="RUNNING")
    _settle(job, {"A": answer})
    assert (job.exit_code, job.state) == (exit_code, state)


def test_the_exit_file_wins_over_sacct_and_decides_the_end_state() -> None:
    job = JobInfo(id="42", state="RUNNING", exit_code=0)
    _settle(job, {"A": "FAILED|3:0", "X": "0"})
    assert (job.exit_code, job.state) == (0, "COMPLETED")
    failed = JobInfo(id="43", state="RUNNING", exit_code=2)
    _settle(failed, {})
    assert failed.state == "FAILED"
    ended = JobInfo(id="44", state="CANCELLED", exit_code=None)
    _settle(ended, {"A": "CANCELLED|0:15"})
    assert ended.state == "CANCELLED"  # an end state squeue gave stays
    unknown = JobInfo(id="45", state="RUNNING")
    _settle(unknown, {})
    assert (unknown.state, unknown.exit_code) == ("RUNNING", None)


def test_a_state_line_updates_the_job_and_keeps_what_it_does_not_say() -> None:
    job = JobInfo(id="42", state="PENDING", started="s0", nodes="n0", name="old")
    seen: dict[str, str] = {}
    _apply(job, "S PENDING|Resources|N/A|2030-01-01T00:00:00||", seen)
    assert (job.state, job.reason, job.started, job.nodes, job.name) == (
        "PENDING",
        "Resources",
        "s0",
        "n0",
        "old",
    )
    assert job.ended is None  # squeue's end of a job not done is its time limit
    _apply(job, "S RUNNING|None|2025-01-01T10:00:00|2025-01-01T11:00:00|vm|npa-run", seen)
    assert (job.state, job.reason, job.started, job.nodes, job.name, job.ended) == (
        "RUNNING",
        None,
        "2025-01-01T10:00:00",
        "vm",
        "npa-run",
        None,
    )
    _apply(job, "S COMPLETED by x|None|Unknown|2025-01-01T10:05:00|vm|npa-run", seen)
    assert (job.state, job.started, job.ended) == ("COMPLETED", "2025-01-01T10:00:00",
                                                   "2025-01-01T10:05:00")  # fmt: skip
    _apply(job, "S TIMEOUT|None||Unknown||", seen)
    assert (job.state, job.ended) == ("TIMEOUT", "2025-01-01T10:05:00")
    _apply(job, "S FAILED|None||N/A||", seen)
    assert job.ended == "2025-01-01T10:05:00"
    _apply(job, "S ", seen)  # an empty state keeps the last one
    assert job.state == "FAILED" and seen["S"] == ""


def test_an_exit_line_sets_the_exit_code_and_anything_else_is_noted_only() -> None:
    job = JobInfo(id="42")
    seen: dict[str, str] = {}
    _apply(job, "X 3", seen)
    assert job.exit_code == 3
    _apply(job, "X -1", seen)
    assert job.exit_code == -1
    _apply(job, "X garbage", seen)
    _apply(job, "A FAILED|3:0", seen)
    _apply(job, "G", seen)
    assert job.exit_code == -1 and seen == {"X": "garbage", "A": "FAILED|3:0", "G": ""}


@pytest.mark.parametrize(
    ("gres", "gpus"),
    [
        ("gpu:h100:8(S:0-1)", 8),
        ("gpu:4,gpu:a100:2", 6),
        ("gpu:h100:8(S:0-1),mps:100", 8),
        ("(null)", 0),
        ("gpu", 0),
        ("gpu:h100:x", 0),
        ("shard:4", 0),
        ("", 0),
    ],
)
def test_gpus_of_a_gres_string(gres: str, gpus: int) -> None:
    assert gpu_count(gres) == gpus


@pytest.mark.parametrize(
    ("said", "status", "kind", "message"),
    [
        ("", 97, OperationError, "could not create the job folder ~/.npa-jobs on the login node"),
        ("sbatch: error: Invalid partition name specified\n", 1, UsageError,
         "Slurm refused the job: sbatch: error: Invalid partition name specified"),
        ("\n  Requested node configuration is not available  \nmore", 1, UsageError,
         "Slurm refused the job: Requested node configuration is not available"),
        ("srun: error: Unable to allocate resources: Unrecognized option\n", 1, UsageError,
         "Slurm refused the job: srun: error: Unable to allocate resources: Unrecognized option"),
        ("gres NOT AVAILABLE on this cluster", 1, UsageError,
         "Slurm refused the job: gres NOT AVAILABLE on this cluster"),
        ("slurm_load_jobs error: Socket timed out", 1, OperationError,
         "submitting the job failed: slurm_load_jobs error: Socket timed out"),
        ("", 255, OperationError, "submitting the job failed: exit 255"),
    ],
)  # fmt: skip
def test_a_refused_submission_names_its_first_line_and_whose_fault(
    said: str, status: int, kind: type[Exception], message: str
) -> None:
    error = _refused(said, status)
    assert type(error) is kind and error.message == message  # type: ignore[attr-defined]
    if kind is UsageError:
        assert error.hint == "check the options and --pool"  # type: ignore[attr-defined]


# --- the programs, run by bash as on a login node ------------------------------------------

STANDIN = r"""#!/bin/bash
# Slurm's recorded answer for this command: <name>.<call number>, else <name>.out
d=__DIR__; name=${0##*/}
n=$(( $(cat "$d/$name.count" 2>/dev/null || echo 0) + 1 )); echo "$n" > "$d/$name.count"
printf '%s\n' "$*" >> "$d/$name.calls"
[ "$name" = sbatch ] && cat > "$d/sbatch.stdin" && env > "$d/sbatch.env"
f="$d/$name.$n"; [ -f "$f" ] || f="$d/$name.out"
[ -f "$f" ] && cat "$f"
[ -f "$d/$name.err" ] && cat "$d/$name.err" >&2
exit "$(cat "$d/$name.rc" 2>/dev/null || echo 0)"
"""
COMMANDS = ("sbatch", "squeue", "sacct", "sinfo", "scancel", "srun")


class RecordedSlurm:
    """Slurm's commands on PATH, each answering what the test recorded for it."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir()
        for name in COMMANDS:
            path = folder / name
            path.write_text(STANDIN.replace("__DIR__", shlex.quote(str(folder))))
            path.chmod(0o755)

    def answer(self, name: str, text: str | bytes, *, call: int | None = None, rc: int = 0,
               err: str | bytes = "") -> None:  # fmt: skip
        out = self.folder / (f"{name}.{call}" if call else f"{name}.out")
        out.write_bytes(text if isinstance(text, bytes) else text.encode())
        (self.folder / f"{name}.rc").write_text(str(rc))
        if err:
            (self.folder / f"{name}.err").write_bytes(
                err if isinstance(err, bytes) else err.encode()
            )

    def calls(self, name: str) -> list[str]:
        path = self.folder / f"{name}.calls"
        return path.read_text().splitlines() if path.exists() else []


@pytest.fixture
def slurm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[RecordedSlurm]:
    recorded = RecordedSlurm(tmp_path / "slurm-bin")
    monkeypatch.setenv("PATH", f"{recorded.folder}{os.pathsep}{os.environ['PATH']}")
    yield recorded


def _jobs_dir() -> Path:
    return Path(os.environ["HOME"]) / ".npa-jobs"


async def test_a_batch_submission_gets_the_job_id_and_its_output_file(
    slurm: RecordedSlurm,
) -> None:
    slurm.answer("sbatch", "4242;cluster\n")
    jobs = RemoteJobs(LocalRunner(), timeout=10)
    job = await jobs.submit(JobRequest(command="echo hi", gpus_per_node=2, partition="main"))
    assert (job.id, job.state, job.name) == ("4242", "PENDING", "npa-run")
    assert job.output_path == f"{_jobs_dir()}/4242.out"
    (call,) = slurm.calls("sbatch")
    assert call.split() == [
        "--parsable", f"--output={_jobs_dir()}/%j.out", f"--error={_jobs_dir()}/%j.out",
        "--job-name=npa-run", "--gpus-per-node=2", "--partition=main",
    ]  # fmt: skip
    assert "echo hi" in (slurm.folder / "sbatch.stdin").read_text()
    assert f"NPA_JOB_DIR={_jobs_dir()}" in (slurm.folder / "sbatch.env").read_text().splitlines()
    assert _jobs_dir().stat().st_mode & 0o077 == 0  # made under umask 077
    assert slurm.calls("sinfo") == []  # GPUs given: nothing to look up


async def test_a_command_gets_every_gpu_of_the_partitions_biggest_node(
    slurm: RecordedSlurm,
) -> None:
    slurm.answer("sinfo", "gpu:h100:8(S:0-1)\n(null)\ngpu:a100:4\n")
    slurm.answer("sbatch", "7\n")
    job = await RemoteJobs(LocalRunner(), timeout=10).submit(JobRequest(command="nvidia-smi"))
    assert job.id == "7" and job.name == "npa-run"
    assert slurm.calls("sinfo") == ["-h -N --responding -t idle,mix,alloc,comp -o %G"]
    assert slurm.calls("sbatch")[0].endswith("--job-name=npa-run --gpus-per-node=8")
    # a script gets no GPUs unless it asks for all of them
    await RemoteJobs(LocalRunner(), timeout=10).submit(
        JobRequest(script="#!/bin/bash\nhostname\n", script_name="s.sh")
    )
    assert len(slurm.calls("sinfo")) == 1
    assert "--gpus-per-node" not in slurm.calls("sbatch")[1]


@pytest.mark.parametrize(
    ("answer", "rc", "err", "kind", "message"),
    [
        ("", 1, "sbatch: error: Invalid partition name specified\n", UsageError,
         "Slurm refused the job: sbatch: error: Invalid partition name specified"),
        ("", 1, "", OperationError, "submitting the job failed: exit 1"),
        ("", 2, "\n", OperationError, "submitting the job failed: exit 2"),
        ("", 0, "", OperationError, "submitting the job failed: exit 0"),
    ],
)  # fmt: skip
async def test_a_refused_or_unreadable_submission_is_an_error(
    slurm: RecordedSlurm,
    answer: str,
    rc: int,
    err: str,
    kind: type[Exception],
    message: str,
) -> None:
    slurm.answer("sbatch", answer, rc=rc, err=err)
    with pytest.raises(kind) as info:
        await RemoteJobs(LocalRunner(), timeout=10).submit(JobRequest(command="true"))
    assert info.value.message == message  # type: ignore[attr-defined]


async def test_a_job_id_that_is_not_one_is_refused(slurm: RecordedSlurm) -> None:
    slurm.answer("sbatch", "12;x; rm -rf ~\n")
    job = await RemoteJobs(LocalRunner(), timeout=10).submit(JobRequest(command="true"))
    assert job.id == "12"
    slurm.answer("sbatch", "$(reboot)\n")
    with pytest.raises(UsageError, match="is not a Slurm job ID"):
        await RemoteJobs(LocalRunner(), timeout=10).submit(JobRequest(command="true"))


async def test_a_submission_that_hangs_is_bounded(slurm: RecordedSlurm) -> None:
    (slurm.folder / "sbatch").write_text("#!/bin/bash\ncat >/dev/null\nexec sleep 30\n")
    jobs = RemoteJobs(LocalRunner(), timeout=0.5)
    with pytest.raises(OperationError) as info:
        await jobs.submit(JobRequest(command="true", gpus_per_node=0))
    assert info.value.message == "submitting did not finish within 0.5s"


NODES = (
    "gpu-0|main*|gpu:h100:8(S:0-1)|idle\n"
    "gpu-1|main*|gpu:h100:8(S:0-1)|mix\n"
    "gpu-2|main*|gpu:h100:4|down*\n"
    "gpu-3|main*|gpu:h100:2|drain\n"
    "cpu-0|main*|(null)|idle\n"
    "big-0|big|gpu:h100:8|alloc\n"
    "big-1|big|gpu:h100:8|idle*\n"
    "a broken line\n"
)


async def test_a_pool_that_is_a_partition_runs_there_on_its_answering_nodes(
    slurm: RecordedSlurm,
) -> None:
    slurm.answer("sinfo", NODES)
    jobs = RemoteJobs(LocalRunner(), timeout=10)
    usable, partition, exclude = await jobs._placement("big", None)
    assert (usable, partition, exclude) == ({"big-0": 8}, "big", [])
    assert slurm.calls("sinfo") == ["-h -N -o %N|%P|%G|%t"]
    assert (await jobs._placement("big", "other"))[1] == "other"  # a given partition wins


async def test_a_pool_by_node_names_excludes_every_other_node(slurm: RecordedSlurm) -> None:
    slurm.answer("sinfo", NODES)
    usable, partition, exclude = await RemoteJobs(LocalRunner(), timeout=10)._placement("gpu", None)
    assert usable == {"gpu-0": 8, "gpu-1": 8}  # down and drained nodes do not answer
    assert partition is None and exclude == ["big-0", "big-1", "cpu-0"]


async def test_without_a_pool_the_gpu_nodes_else_every_node(slurm: RecordedSlurm) -> None:
    slurm.answer("sinfo", NODES)
    jobs = RemoteJobs(LocalRunner(), timeout=10)
    usable, _, exclude = await jobs._placement(None, None)
    assert set(usable) == {"gpu-0", "gpu-1", "big-0"} and exclude == ["cpu-0"]
    slurm.answer("sinfo", "cpu-0|main*|(null)|idle\ncpu-1|main*|(null)|alloc\n")
    usable, _, exclude = await jobs._placement(None, None)
    assert usable == {"cpu-0": 0, "cpu-1": 0} and exclude == []


async def test_an_unknown_pool_names_the_pools_there_are(slurm: RecordedSlurm) -> None:
    slurm.answer("sinfo", NODES)
    with pytest.raises(UsageError) as info:
        await RemoteJobs(LocalRunner(), timeout=10)._placement("tpu", None)
    assert info.value.message == "no Slurm nodes of pool 'tpu'"
    assert info.value.hint == "pools with nodes: big, cpu, gpu"
    slurm.answer("sinfo", "vm|main*|(null)|idle\n")
    with pytest.raises(UsageError) as info:
        await RemoteJobs(LocalRunner(), timeout=10)._placement("tpu", None)
    assert info.value.hint == "pools with nodes: none"


async def test_a_failed_node_listing_says_what_sinfo_said(slurm: RecordedSlurm) -> None:
    slurm.answer("sinfo", "", rc=1, err="  slurm_load_partitions: Unable to contact  \n")
    with pytest.raises(OperationError) as info:
        await RemoteJobs(LocalRunner(), timeout=10)._placement("gpu", None)
    assert info.value.message == "listing nodes failed: slurm_load_partitions: Unable to contact"


async def test_a_pool_job_on_every_node_takes_the_pools_nodes_and_their_gpus(
    slurm: RecordedSlurm,
) -> None:
    slurm.answer("sinfo", NODES)
    slurm.answer("sbatch", "9\n")
    request = JobRequest(command="hostname", all_nodes=True)
    await RemoteJobs(LocalRunner(), timeout=10).submit(request, pool="gpu")
    assert (request.nodes, request.gpus_per_node, request.exclude) == (
        2, 8, ["big-0", "big-1", "cpu-0"])  # fmt: skip
    (call,) = slurm.calls("sbatch")
    assert "--nodes=2" in call and "--gpus-per-node=8" in call
    assert "--exclude=big-0,big-1,cpu-0" in call
    # a pool of CPU nodes: no GPU option at all, and at least one node
    slurm.answer("sinfo", "cpu-0|main*|(null)|down\n")
    cpu = JobRequest(command="hostname", all_nodes=True)
    await RemoteJobs(LocalRunner(), timeout=10).submit(cpu, pool="cpu")
    assert (cpu.nodes, cpu.gpus_per_node) == (1, None)
    assert "--gpus-per-node" not in slurm.calls("sbatch")[1]


async def test_a_pool_job_with_its_own_node_count_and_gpus_keeps_them(
    slurm: RecordedSlurm,
) -> None:
    slurm.answer("sinfo", NODES)
    slurm.answer("sbatch", "9\n")
    request = JobRequest(command="hostname", all_nodes=True, nodes=1, gpus_per_node=1)
    await RemoteJobs(LocalRunner(), timeout=10).submit(request, pool="big")
    assert (request.nodes, request.gpus_per_node, request.partition) == (1, 1, "big")


async def test_following_a_failed_job_streams_its_output_and_reads_its_exit_code_from_sacct(
    slurm: RecordedSlurm,
) -> None:
    _jobs_dir().mkdir(parents=True)
    (_jobs_dir() / "42.out").write_bytes(b"line one\n\xffbinary\n")
    slurm.answer("squeue", "RUNNING|None|2025-01-01T10:00:00|2025-01-01T11:00:00|vm|npa-run\n",
                 call=1)  # fmt: skip
    slurm.answer("sacct", "FAILED|3:0\n")
    job = JobInfo(id="42", output_path=f"{_jobs_dir()}/42.out")
    chunks: list[bytes] = []
    states: list[str] = []
    await RemoteJobs(LocalRunner(), timeout=10).follow(
        job, on_output=chunks.append, on_state=lambda j: states.append(j.state)
    )
    assert b"".join(chunks) == b"line one\n\xffbinary\n"
    assert states == ["RUNNING"]
    assert (job.state, job.exit_code, job.nodes, job.started) == (
        "FAILED", 3, "vm", "2025-01-01T10:00:00")  # fmt: skip
    assert slurm.calls("sacct") == ["-n -X -P -j 42 -o State,ExitCode"]
    assert slurm.calls("squeue")[0] == "-h -t all -j 42 -o %T|%r|%S|%e|%N|%j"


async def test_following_from_an_offset_once_reads_only_the_new_bytes(
    slurm: RecordedSlurm,
) -> None:
    _jobs_dir().mkdir(parents=True)
    (_jobs_dir() / "42.out").write_bytes(b"0123456789")
    slurm.answer("squeue", "RUNNING|None|N/A|N/A|vm|npa-run\n")
    (_jobs_dir() / "42.exit").write_text("0\n")
    job = JobInfo(id="42", output_path=f"{_jobs_dir()}/42.out")
    chunks: list[bytes] = []
    await RemoteJobs(LocalRunner(), timeout=10).follow(
        job, offset=4, once=True, on_output=chunks.append
    )
    assert b"".join(chunks) == b"456789"
    assert len(slurm.calls("squeue")) == 1  # one pass
    assert (job.exit_code, job.state) == (0, "COMPLETED")  # its exit file: it ended


async def test_a_job_slurm_does_not_know_and_that_left_nothing_is_refused(
    slurm: RecordedSlurm,
) -> None:
    job = JobInfo(id="77", output_path=f"{_jobs_dir()}/77.out")
    with pytest.raises(UsageError) as info:
        await RemoteJobs(LocalRunner(), timeout=10).follow(job, on_output=lambda b: None)
    assert info.value.message == "Slurm does not know job 77 and it left no output"
    assert info.value.hint == "`npa soperator jobs --name <cluster>` lists the jobs npa submitted"
    # with output left behind, it is a job that ended and left squeue
    _jobs_dir().mkdir(parents=True)
    (_jobs_dir() / "77.out").write_bytes(b"bye\n")
    got: list[bytes] = []
    done = await RemoteJobs(LocalRunner(), timeout=10).follow(job, on_output=got.append)
    assert got == [b"bye\n"] and done.exit_code is None
    # or when asked from an offset (the caller saw output before)
    (_jobs_dir() / "77.out").unlink()
    later = await RemoteJobs(LocalRunner(), timeout=10).follow(job, offset=3, on_output=got.append)
    assert later is job and got == [b"bye\n"]


async def test_a_job_without_a_recorded_output_path_is_followed_in_the_job_folder(
    slurm: RecordedSlurm,
) -> None:
    _jobs_dir().mkdir(parents=True)
    (_jobs_dir() / "5.out").write_bytes(b"found\n")
    (_jobs_dir() / "5.exit").write_text("0\n")
    got: list[bytes] = []
    job = await RemoteJobs(LocalRunner(), timeout=10).follow(JobInfo(id="5"), on_output=got.append)
    assert got == [b"found\n"] and (job.exit_code, job.state) == (0, "COMPLETED")


async def test_cancel_asks_scancel_and_says_when_it_refuses(slurm: RecordedSlurm) -> None:
    jobs = RemoteJobs(LocalRunner(), timeout=10)
    await jobs.cancel("42")
    assert slurm.calls("scancel") == ["42"]
    slurm.answer("scancel", "", rc=1, err=" scancel: error: Invalid job id specified \n")
    with pytest.raises(OperationError) as info:
        await jobs.cancel("43")
    assert info.value.message == "scancel 43 failed: scancel: error: Invalid job id specified"
    with pytest.raises(UsageError):
        await jobs.cancel("43; reboot")
    assert slurm.calls("scancel") == ["42", "43"]


async def test_closing_closes_the_runner() -> None:
    class Runner(LocalRunner):
        closed = False

        async def close(self) -> None:
            self.closed = True

    runner = Runner()
    await RemoteJobs(runner).aclose()
    assert runner.closed
    await RemoteJobs(object()).aclose()  # a runner without close() is fine


# --- an attached run: srun on the login node, one channel to the end -----------------------

SRUN = r"""#!/bin/bash
# srun -v <options> bash -c <task>: names the job and its node on stderr as srun -v does,
# then runs the task; an answer file makes it refuse instead
d=__DIR__
printf '%s\n' "$*" >> "$d/srun.calls"
if [ -f "$d/srun.refuse" ]; then cat "$d/srun.refuse" >&2; exit 1; fi
echo "srun: jobid 55: nodes(1):\`vm' cpu_ids:0" >&2
while [ "$#" -gt 0 ] && [ "$1" != bash ]; do shift; done
exec "$@"
"""


@pytest.fixture
def srun(slurm: RecordedSlurm) -> RecordedSlurm:
    (slurm.folder / "srun").write_text(SRUN.replace("__DIR__", shlex.quote(str(slurm.folder))))
    return slurm


async def test_an_attached_run_is_named_at_once_and_streams_to_its_exit_code(
    srun: RecordedSlurm,
) -> None:
    srun.answer("sinfo", "gpu:h100:4\n")
    jobs = RemoteJobs(LocalRunner(), timeout=10)
    request = JobRequest(command="echo out; echo err >&2; exit 3", env={"A": "1 2"})
    job = await jobs.submit(request, attached=True)
    assert (job.id, job.state, job.name) == ("55", "PENDING", "npa-run")
    assert job.output_path == f"{_jobs_dir()}/55.out"
    chunks: list[bytes] = []
    states: list[str] = []
    await jobs.follow(job, on_output=chunks.append, on_state=lambda j: states.append(j.state))
    assert b"".join(chunks) == b"out\nerr\n"
    assert (job.exit_code, job.state, job.nodes) == (3, "FAILED", "vm")
    assert states == ["RUNNING"]
    call = (srun.folder / "srun.calls").read_text()  # the task is several lines
    assert call.startswith("-v --job-name=npa-run --gpus-per-node=4 bash -c ")
    assert "export A='1 2'\n" in call and "echo out; echo err >&2; exit 3\n" in call
    assert (_jobs_dir() / "55.exit").read_text() == "3\n"
    await jobs.aclose()


async def test_a_refused_attached_run_says_what_srun_said(srun: RecordedSlurm) -> None:
    (srun.folder / "srun.refuse").write_text(
        "srun: error: Unable to allocate resources: Invalid partition name specified\n"
    )
    jobs = RemoteJobs(LocalRunner(), timeout=10)
    with pytest.raises(UsageError) as info:
        await jobs.submit(JobRequest(command="true", gpus_per_node=0), attached=True)
    assert info.value.message == (
        "Slurm refused the job: srun: error: Unable to allocate resources: Invalid partition "
        "name specified"
    )
    assert jobs._live == {}


async def test_a_script_is_never_attached(srun: RecordedSlurm) -> None:
    srun.answer("sbatch", "8\n")
    job = await RemoteJobs(LocalRunner(), timeout=10).submit(
        JobRequest(script="#!/bin/bash\ntrue\n", gpus_per_node=0), attached=True
    )
    assert job.id == "8" and srun.calls("srun") == []


async def test_an_attached_run_that_never_names_its_job_is_bounded(srun: RecordedSlurm) -> None:
    (srun.folder / "srun").write_text("#!/bin/bash\nexec sleep 5\n")
    jobs = RemoteJobs(LocalRunner(), timeout=0.5)
    with pytest.raises(TimeoutError):
        await jobs.submit(JobRequest(command="true", gpus_per_node=0), attached=True)


async def test_following_an_attached_run_from_an_offset_starts_a_follower(
    srun: RecordedSlurm,
) -> None:
    jobs = RemoteJobs(LocalRunner(), timeout=10)
    job = await jobs.submit(JobRequest(command="echo abcdef", gpus_per_node=1), attached=True)
    live = jobs._live[job.id]
    srun.answer("squeue", "")
    chunks: list[bytes] = []
    await eventually(lambda: (_jobs_dir() / "55.exit").exists(), what="the attached job's end")
    await jobs.follow(job, offset=3, on_output=chunks.append)
    assert b"".join(chunks) == b"def\n"
    assert live.proc.returncode is not None  # the launcher's channel was let go
    assert job.exit_code == 0 and job.state == "COMPLETED"


# --- the same over SSH --------------------------------------------------------------------


async def _output(jobs: RemoteJobs, job: JobInfo) -> bytes:
    """Everything `job` writes, followed to its end."""
    chunks: list[bytes] = []
    await jobs.follow(job, on_output=chunks.append)
    return b"".join(chunks)


@pytest.fixture
def login_home(tmp_path: Path) -> Path:
    """The login node's home: not this machine's, so nothing can pass by running locally."""
    home = tmp_path / "login-home"
    home.mkdir()
    return home


@pytest.fixture
async def ssh_jobs(
    slurm: RecordedSlurm, tmp_path: Path, login_home: Path
) -> AsyncIterator[RemoteJobs]:
    (slurm.folder / "srun").write_text(SRUN.replace("__DIR__", shlex.quote(str(slurm.folder))))
    env = {**os.environ, "HOME": str(login_home)}
    async with login_node(tmp_path / "login", env) as session:
        jobs = RemoteJobs(session, timeout=10)
        yield jobs
        await jobs.aclose()


async def test_over_ssh_a_batch_job_is_submitted_with_its_script_and_followed(
    slurm: RecordedSlurm, ssh_jobs: RemoteJobs, login_home: Path
) -> None:
    slurm.answer("sbatch", "4242\n")
    job = await ssh_jobs.submit(JobRequest(command="echo over ssh", gpus_per_node=0))
    assert job.id == "4242" and "echo over ssh" in (slurm.folder / "sbatch.stdin").read_text()
    assert job.output_path == f"{login_home}/.npa-jobs/4242.out"
    (login_home / ".npa-jobs" / "4242.out").write_bytes(b"\xfe done\n")
    slurm.answer("sacct", "FAILED|3:0\n")
    assert await _output(ssh_jobs, job) == b"\xfe done\n"
    assert (job.exit_code, job.state) == (3, "FAILED")


async def test_over_ssh_an_attached_run_streams_to_its_exit_code(
    slurm: RecordedSlurm, ssh_jobs: RemoteJobs, login_home: Path
) -> None:
    job = await ssh_jobs.submit(JobRequest(command="echo hi; exit 4", gpus_per_node=0),
                                attached=True)  # fmt: skip
    assert job.output_path == f"{login_home}/.npa-jobs/55.out"
    assert await _output(ssh_jobs, job) == b"hi\n"
    assert (job.exit_code, job.state) == (4, "FAILED")


async def test_over_ssh_a_refusal_and_a_cancel_go_through_the_channel(
    slurm: RecordedSlurm, ssh_jobs: RemoteJobs
) -> None:
    (slurm.folder / "srun.refuse").write_text("srun: error: Requested node config\n")
    with pytest.raises(UsageError, match=r"^Slurm refused the job: srun: error: Requested"):
        await ssh_jobs.submit(JobRequest(command="true", gpus_per_node=0), attached=True)
    await ssh_jobs.cancel("42")
    assert slurm.calls("scancel") == ["42"]


async def test_a_closed_channel_without_an_exit_status_reads_as_minus_one(
    tmp_path: Path,
) -> None:
    from npa_sop_tui.jobs.remote import _Process

    async with login_node(tmp_path / "login", dict(os.environ)) as session:
        conn = await session.connection()
        proc = await conn.create_process("sleep 30", encoding=None)
        process = _Process(proc, ssh=True)
        process.stop()
        assert await process.finish() == -1


# --- the details each reading depends on ---------------------------------------------------


class TimedRunner(LocalRunner):
    """The local runner, noting the time limit each command was given."""

    def __init__(self) -> None:
        self.timeouts: list[float] = []

    async def run(self, command: str, *, timeout: float = 30.0) -> CommandResult:
        self.timeouts.append(timeout)
        return await super().run(command, timeout=timeout)


async def test_every_command_gets_the_jobs_time_limit(slurm: RecordedSlurm) -> None:
    assert RemoteJobs(LocalRunner()).timeout == 30.0
    slurm.answer("sinfo", NODES)
    runner = TimedRunner()
    jobs = RemoteJobs(runner, timeout=7)
    await jobs._placement("gpu", None)
    await jobs.cancel("42")
    assert runner.timeouts == [7, 7]


async def test_a_long_refusal_is_cut_at_200_characters(slurm: RecordedSlurm) -> None:
    said = "e" * 300
    slurm.answer("sinfo", "", rc=1, err=said)
    slurm.answer("scancel", "", rc=1, err=said)
    jobs = RemoteJobs(LocalRunner(), timeout=10)
    with pytest.raises(OperationError) as listing:
        await jobs._placement("gpu", None)
    assert listing.value.message == f"listing nodes failed: {'e' * 200}"
    with pytest.raises(OperationError) as cancel:
        await jobs.cancel("42")
    assert cancel.value.message == f"scancel 42 failed: {'e' * 200}"


async def test_a_pool_without_every_node_is_placed_but_keeps_its_node_count(
    slurm: RecordedSlurm,
) -> None:
    slurm.answer("sinfo", NODES)
    slurm.answer("sbatch", "9\n")
    request = JobRequest(command="hostname", gpus_per_node=1)
    await RemoteJobs(LocalRunner(), timeout=10).submit(request, pool="big")
    assert (request.partition, request.nodes) == ("big", None)
    assert "--partition=big" in slurm.calls("sbatch")[0]
    assert "--nodes" not in slurm.calls("sbatch")[0]


async def test_every_node_without_a_pool_is_every_gpu_node(slurm: RecordedSlurm) -> None:
    slurm.answer("sinfo", NODES)
    slurm.answer("sbatch", "9\n")
    request = JobRequest(command="nvidia-smi", all_nodes=True)
    await RemoteJobs(LocalRunner(), timeout=10).submit(request)
    assert (request.nodes, request.exclude) == (3, ["cpu-0"])
    assert len(slurm.calls("sinfo")) == 1  # the GPUs came with the placement: no second look


async def test_a_given_partition_wins_over_a_pools(slurm: RecordedSlurm) -> None:
    slurm.answer("sinfo", NODES)
    slurm.answer("sbatch", "9\n")
    request = JobRequest(command="hostname", gpus_per_node=1, partition="other")
    await RemoteJobs(LocalRunner(), timeout=10).submit(request, pool="big")
    assert "--partition=other" in slurm.calls("sbatch")[0]


@pytest.mark.parametrize("attached", [False, True])
async def test_the_automatic_gpus_are_looked_up_in_the_jobs_partition(
    srun: RecordedSlurm, attached: bool
) -> None:
    srun.answer("sinfo", "gpu:h100:2\n")
    srun.answer("sbatch", "9\n")
    jobs = RemoteJobs(LocalRunner(), timeout=10)
    await jobs.submit(JobRequest(command="true", partition="main"), attached=attached)
    await jobs.submit(JobRequest(command="true"), attached=attached)
    await jobs.aclose()
    assert srun.calls("sinfo") == [
        "-h -N --responding -t idle,mix,alloc,comp -p main -o %G",
        "-h -N --responding -t idle,mix,alloc,comp -o %G",
    ]


async def test_an_attached_run_with_its_gpus_given_looks_nothing_up(srun: RecordedSlurm) -> None:
    jobs = RemoteJobs(LocalRunner(), timeout=10)
    await jobs.submit(JobRequest(command="true", gpus_per_node=2, time="5"), attached=True)
    await jobs.aclose()
    assert srun.calls("sinfo") == []
    call = (srun.folder / "srun.calls").read_text()
    assert call.startswith("-v --job-name=npa-run --gpus-per-node=2 --time=5 bash -c ")


async def test_answers_that_are_not_utf8_are_read_not_crashed_on(srun: RecordedSlurm) -> None:
    jobs = RemoteJobs(LocalRunner(), timeout=10)
    srun.answer("sbatch", b"4242;clu\xffster\n")
    assert (await jobs.submit(JobRequest(command="true", gpus_per_node=0))).id == "4242"
    srun.answer("sbatch", b"", rc=1, err=b"sbatch: error: Invalid \xff partition\n")
    with pytest.raises(UsageError, match="Invalid \ufffd partition"):
        await jobs.submit(JobRequest(command="true", gpus_per_node=0))
    (srun.folder / "sbatch.err").unlink()
    srun.answer("sbatch", b"garbage \xfe\n", rc=1)
    with pytest.raises(OperationError) as info:
        await jobs.submit(JobRequest(command="true", gpus_per_node=0))
    assert info.value.message == "submitting the job failed: garbage \ufffd"
    (srun.folder / "srun.refuse").write_bytes(b"srun: error: Invalid gres \xff\n")
    with pytest.raises(UsageError, match="Invalid gres \ufffd"):
        await jobs.submit(JobRequest(command="true", gpus_per_node=0), attached=True)
    srun.answer("squeue", b"RUNNING|None|N/A|N/A|vm|r\xffn\n", call=1)
    (_jobs_dir() / "3.exit").write_text("0\n")
    job = await jobs.follow(JobInfo(id="3"), on_output=lambda b: None)
    assert job.name == "r\ufffdn"


async def test_a_refusal_names_sbatchs_first_line_after_the_job_folder(
    slurm: RecordedSlurm,
) -> None:
    slurm.answer("sbatch", "first problem\nsecond\n", rc=1)
    with pytest.raises(OperationError) as info:
        await RemoteJobs(LocalRunner(), timeout=10).submit(JobRequest(command="true"))
    assert info.value.message == "submitting the job failed: first problem"


@pytest.mark.parametrize(
    ("refusal", "message"),
    [
        (
            "srun: error: Invalid generic resource (gres) specification: gpu:X\n"
            "srun: error: second line\n",
            "Slurm refused the job: srun: error: Invalid generic resource (gres) "
            "specification: gpu:X",
        ),
        ("", "submitting the job failed: exit 98"),  # srun said nothing
    ],
)
async def test_a_refused_attached_run_says_its_first_line_or_its_exit(
    srun: RecordedSlurm, refusal: str, message: str
) -> None:
    (srun.folder / "srun").write_text(
        f"#!/bin/bash\nprintf %s {shlex.quote(refusal)} >&2\nexit 1\n"
    )
    with pytest.raises((UsageError, OperationError)) as info:
        await RemoteJobs(LocalRunner(), timeout=10).submit(
            JobRequest(command="true", gpus_per_node=0), attached=True
        )
    assert info.value.message == message  # type: ignore[union-attr]


async def test_a_home_with_a_space_keeps_the_job_folder_whole(
    srun: RecordedSlurm, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "a home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    jobs = RemoteJobs(LocalRunner(), timeout=10)
    job = await jobs.submit(JobRequest(command="echo spaced", gpus_per_node=0), attached=True)
    assert job.output_path == f"{home}/.npa-jobs/55.out"
    assert await _output(jobs, job) == b"spaced\n"


async def test_a_partition_marked_default_or_ending_in_x_is_still_the_pools(
    slurm: RecordedSlurm,
) -> None:
    slurm.answer("sinfo", "a-0|main*|(null)|idle\nb-0|H100X|gpu:h100:8|idle\nc-0|c|(null)|idle\n")
    jobs = RemoteJobs(LocalRunner(), timeout=10)
    assert await jobs._placement("main", None) == ({"a-0": 0}, "main", [])
    assert await jobs._placement("H100X", None) == ({"b-0": 8}, "H100X", [])


async def test_pools_named_in_the_hint_keep_every_dash_but_the_last(slurm: RecordedSlurm) -> None:
    slurm.answer("sinfo", "gpu-h100-0|main*|(null)|idle\ncpu-a-b-1|main*|(null)|idle\n")
    with pytest.raises(UsageError) as info:
        await RemoteJobs(LocalRunner(), timeout=10)._placement("tpu", None)
    assert info.value.hint == "pools with nodes: cpu-a-b, gpu-h100"


async def test_a_node_draining_or_failing_with_a_flag_is_not_used(slurm: RecordedSlurm) -> None:
    slurm.answer(
        "sinfo", "g-0|p|gpu:8|drain@\ng-1|p|gpu:8|fail$\ng-2|p|gpu:8|idle~\ng-3|p|gpu:8|mix#\n"
    )
    usable, _, _ = await RemoteJobs(LocalRunner(), timeout=10)._placement("g", None)
    assert usable == {"g-2": 8, "g-3": 8}


async def test_a_job_with_its_own_output_file_is_followed_there(
    slurm: RecordedSlurm, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "project"
    elsewhere.mkdir()
    (elsewhere / "7.out").write_bytes(b"from the script's own file\n")
    (elsewhere / "7.exit").write_text("0\n")
    job = JobInfo(id="7", output_path=f"{elsewhere}/7.out")
    assert await _output(RemoteJobs(LocalRunner(), timeout=10), job) == (
        b"from the script's own file\n"
    )
    assert (job.exit_code, job.state) == (0, "COMPLETED")


@pytest.mark.parametrize(("name", "kept"), [("trainX", "trainX"), ("spaced ", "spaced ")])
async def test_a_job_name_is_kept_as_squeue_says_it(
    slurm: RecordedSlurm, name: str, kept: str
) -> None:
    slurm.answer("squeue", f"RUNNING|None|N/A|N/A|vm|{name}\n", call=1)
    _jobs_dir().mkdir(parents=True)
    (_jobs_dir() / "3.exit").write_text("0\n")
    job = await RemoteJobs(LocalRunner(), timeout=10).follow(JobInfo(id="3"), on_output=print)
    assert job.name == kept


@pytest.mark.parametrize(
    ("exit_file", "sacct", "exit_code"), [(True, "", 0), (False, "COMPLETED|0:0\n", 0)]
)
async def test_a_job_gone_from_squeue_without_output_is_known_by_its_exit_or_sacct(
    slurm: RecordedSlurm, exit_file: bool, sacct: str, exit_code: int
) -> None:
    _jobs_dir().mkdir(parents=True)
    if exit_file:
        (_jobs_dir() / "3.exit").write_text("0\n")
    slurm.answer("sacct", sacct)
    job = await RemoteJobs(LocalRunner(), timeout=10).follow(JobInfo(id="3"), on_output=print)
    assert (job.exit_code, job.state) == (exit_code, "COMPLETED")


def test_a_short_state_line_leaves_the_rest_as_it_was() -> None:
    job = JobInfo(id="1", state="PENDING", started="s0", nodes="n0", name="x")
    _apply(job, "S RUNNING|Priority", {})
    assert (job.state, job.reason, job.started, job.nodes, job.name) == (
        "RUNNING", "Priority", "s0", "n0", "x")  # fmt: skip
    _apply(job, "S FAILED|None|||vm|x", {})
    assert (job.started, job.ended) == ("s0", None)
