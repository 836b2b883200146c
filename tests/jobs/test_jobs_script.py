"""The batch script and sbatch options npa builds, and the request checks (no Slurm needed:
the script is run by bash here, as slurmd would run it)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from npa_sop_tui.errors import UsageError
from npa_sop_tui.jobs.model import JobInfo, JobRequest, command_text, parse_env
from npa_sop_tui.jobs.script import batch_script, sbatch_directives, sbatch_options


def _run_script(tmp_path: Path, request: JobRequest) -> tuple[int, str, str]:
    """Run the batch script as the batch step would: job ID set, the job dir exported."""
    env = {"PATH": "/usr/bin:/bin", "SLURM_JOB_ID": "7", "NPA_JOB_DIR": str(tmp_path)}
    done = subprocess.run(
        ["bash", "-s"], input=batch_script(request), capture_output=True, text=True, env=env
    )
    return done.returncode, done.stdout, (tmp_path / "7.exit").read_text()


def test_the_command_runs_in_a_subshell_and_its_exit_status_is_recorded(tmp_path: Path) -> None:
    request = JobRequest(command='echo "$A"; exit 3', env={"A": "it's $HOME"})
    code, out, recorded = _run_script(tmp_path, request)
    assert (code, out, recorded) == (3, "it's $HOME\n", "3\n")  # values are not expanded


def test_an_uploaded_script_keeps_its_sbatch_lines_and_interpreter(tmp_path: Path) -> None:
    script = (
        "#!/usr/bin/env python3\n#SBATCH --nodes=2\n# note\nimport sys\nprint('py')\nsys.exit(5)\n"
    )
    request = JobRequest(script=script)
    text = batch_script(request)
    assert sbatch_directives(text) == ["#SBATCH --nodes=2"]  # sbatch sees them
    code, out, recorded = _run_script(tmp_path, request)
    assert (code, out, recorded) == (5, "py\n", "5\n")
    assert sbatch_directives("#!/bin/sh\necho x\n#SBATCH --late=1\n") == []


def test_options_are_passed_only_when_set_and_quoted() -> None:
    assert sbatch_options(JobRequest(script="x")) == []  # the script's own lines apply
    options = sbatch_options(
        JobRequest(
            command="true",
            nodes=2,
            gpus_per_node=8,
            partition="main",
            exclude=["cpu-0", "cpu-1"],
            time="1:00:00",
            job_name="train",
            workdir="/data/my run",
        )
    )
    assert options == [
        "--job-name=train",
        "--nodes=2",
        "--ntasks-per-node=1",
        "--gpus-per-node=8",
        "--partition=main",
        "--exclude=cpu-0,cpu-1",
        "--time=1:00:00",
        "--chdir='/data/my run'",
    ]


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (JobRequest(), "either a command"),
        (JobRequest(command="x", script="y"), "either a command"),
        (JobRequest(command="  "), "empty"),
        (JobRequest(command="x", nodes=0), "--nodes 0"),
        (JobRequest(command="x", time="soon"), "not a Slurm time limit"),
        (JobRequest(command="x", job_name="-bad"), "--job-name"),
        (JobRequest(command="x", env={"1A": "v"}), "not a variable name"),
        (JobRequest(command="x", workdir="a\nb"), "--workdir"),
    ],
)
def test_bad_requests_are_usage_errors(request_: JobRequest, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        request_.checked()


def test_env_flags_and_command_words() -> None:
    assert parse_env(["A=1", "B=x=y", "C="]) == {"A": "1", "B": "x=y", "C": ""}
    with pytest.raises(UsageError, match="expected KEY=VALUE"):
        parse_env(["A"])
    assert command_text(["sh", "-c", "echo hi; exit 3"]) == "sh -c 'echo hi; exit 3'"
    assert command_text(["make && ./a.out"]) == "make && ./a.out"  # one word: shell text


def test_exit_codes_of_ended_jobs() -> None:
    def code(state: str, exit_code: int | None = None) -> int:
        return JobInfo(id="1", state=state, exit_code=exit_code).run_exit_code()

    assert [code("COMPLETED"), code("FAILED", 3), code("CANCELLED"), code("TIMEOUT")] == [
        0,
        3,
        143,
        124,
    ]
    assert code("NODE_FAIL") == 1 and code("OUT_OF_MEMORY") == 137
