"""Sandbox jobs run with an environment from an allow-list: the caller's cloud tokens and
keys never reach a job, its output or its output.log."""

from __future__ import annotations

from pathlib import Path

import pytest

from npa_sop_tui.cli.entry import main
from npa_sop_tui.sandbox.job_environment import job_environment

from testkit.sandbox_cli import deploy_in_sandbox

SECRETS = {
    "NEBIUS_IAM_TOKEN": "nbtok-JobMustNotSee-77",
    "AWS_SECRET_ACCESS_KEY": "awsJobMustNotSee42abc",
    "AWS_ACCESS_KEY_ID": "AKIAJOBMUSTNOTSEE",
    "NPA_CAPACITY_BLOCK_GROUPS": "gpu=capacityblockgroup-jobmustnotsee",
    "GITHUB_TOKEN": "ghp_jobMustNotSee",
}
SPEC = """\
apiVersion: npa.soperator/v0.0.1
name: envjob
workers:
  - name: cpu
    size: 1
"""


def test_the_job_environment_is_the_allow_list_then_the_sandboxs_own() -> None:
    source = {"PATH": "/usr/bin", "HOME": "/home/u", "LC_ALL": "C.UTF-8", **SECRETS}
    env = job_environment({"NPA_JOB_FOLDER": "/j", "PATH": "/sandbox/bin:/usr/bin"}, source=source)
    assert env == {
        "PATH": "/sandbox/bin:/usr/bin",
        "HOME": "/home/u",
        "LC_ALL": "C.UTF-8",
        "NPA_JOB_FOLDER": "/j",
    }


@pytest.mark.terraform
@pytest.mark.slow
def test_a_sandbox_job_never_sees_the_callers_cloud_credentials(
    npa_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Defect: `npa soperator run --sandbox -- sh -c env` printed NEBIUS_IAM_TOKEN and
    AWS_SECRET_ACCESS_KEY unmasked and kept them in sandbox-jobs/<id>/output.log."""
    deploy_in_sandbox(SPEC, tmp_path, monkeypatch, capsys)
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    code = main(["soperator", "run", "--name", "envjob", "--sandbox", "--", "sh", "-c", "env"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "PATH=" in out and "SLURM_JOB_ID=" in out  # the job ran and printed its env
    logs = list(npa_home.rglob("sandbox-jobs/*/output.log"))
    assert logs
    for text in (out, err, *(log.read_text() for log in logs)):
        for name, value in SECRETS.items():
            assert value not in text and f"{name}=" not in text, name
