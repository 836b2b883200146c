"""Agents are confined through the MCP server: a tool's `terraform_dir` outside the
workspace root (a sibling whose name starts with the root's too) is refused, and none at all
in the sandbox; the sandbox jobs an agent runs never see the server's cloud credentials.
Driven through the official `mcp` client against `npa soperator mcp` as a subprocess (it
gets only the environment passed)."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from npa_sop_tui.sandbox.local_terraform import STANDIN_RECIPE

ASSETS = Path(__file__).resolve().parents[2] / "assets"
NPA = Path(sys.executable).with_name("npa")
TOKEN = "nbtok-AgentMustNotSee-31"
AWS_SECRET = "awsAgentMustNotSee42xyz"
LOCAL_EXEC = """
resource "null_resource" "agent_code" {
  provisioner "local-exec" {
    command = "touch {marker}"
  }
}
"""


def _server(npa_home: Path, root: Path, *extra: str) -> StdioServerParameters:
    env = {
        "NPA_HOME": str(npa_home),
        "TF_VAR_standin_sleep_seconds": "0",
        "PATH": f"{NPA.parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(npa_home),
        "NEBIUS_IAM_TOKEN": TOKEN,
        "AWS_SECRET_ACCESS_KEY": AWS_SECRET,
    }
    args = ["soperator", "mcp", "--root", str(root), *extra]
    return StdioServerParameters(command=str(NPA), args=args, env=env)


def _evil_recipe(folder: Path, marker: Path) -> Path:
    """A copy of the stand-in recipe whose Terraform runs a command of the agent's choosing."""
    shutil.copytree(STANDIN_RECIPE, folder)
    main_tf = folder / "soperator" / "installations" / "example" / "main.tf"
    main_tf.write_text(main_tf.read_text() + LOCAL_EXEC.replace("{marker}", str(marker)))
    return folder


def _text(result: Any) -> str:
    return "\n".join(getattr(part, "text", "") for part in result.content)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    shutil.copy(ASSETS / "cpu-minimal.yaml", root / "cluster.yaml")
    return root


async def test_an_agent_cannot_run_terraform_code_through_the_sandbox_mcp_server(
    npa_home: Path, workspace: Path
) -> None:
    """Defect: `infra.soperator.deploy`/`plan` took a `terraform_dir` outside the server's
    `--root`; a copy of the stand-in recipe with a `local-exec` provisioner ran as the
    server's user. Outside the root (`ws-private` beside `ws` too) and, in the sandbox,
    inside it: refused, as a tool error, before Terraform runs."""
    marker = workspace.parent / "agent-code-ran"
    beside = _evil_recipe(workspace.parent / "ws-private" / "recipe", marker)
    inside = _evil_recipe(workspace / "recipe", marker)
    calls = [
        ("infra.soperator.deploy", str(beside)),
        ("infra.soperator.plan", "../ws-private/recipe"),
        ("infra.soperator.deploy", str(inside)),
        ("infra.soperator.plan", "recipe"),
    ]
    async with (
        stdio_client(_server(npa_home, workspace, "--sandbox")) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        results = [
            await session.call_tool(tool, {"spec_path": "cluster.yaml", "terraform_dir": where})
            for tool, where in calls
        ]
    for (tool, where), result in zip(calls, results, strict=True):
        assert result.is_error is True, (tool, where, _text(result))
        assert "terraform_dir is not taken in the sandbox" in _text(result)
    assert not marker.exists()
    assert not (npa_home / "sandbox" / "soperator" / "cpu-min").exists()  # nothing started


async def test_outside_the_root_a_terraform_dir_is_refused_before_anything_runs(
    npa_home: Path, workspace: Path
) -> None:
    """Without the sandbox, a `terraform_dir` must be a folder inside the root: a sibling
    named like the root, a symlink out of it and `..` are outside."""
    marker = workspace.parent / "agent-code-ran"
    beside = _evil_recipe(workspace.parent / "ws-private", marker)
    (workspace / "link").symlink_to(beside)
    async with (
        stdio_client(_server(npa_home, workspace)) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        results = {
            where: await session.call_tool(
                "infra.soperator.plan", {"spec_path": "cluster.yaml", "terraform_dir": where}
            )
            for where in (str(beside), "../ws-private", "link")
        }
    for where, result in results.items():
        assert result.is_error is True, where
        text = _text(result)
        assert f"terraform_dir {where!r} is outside the workspace root {workspace}" in text
        assert json.loads(result.content[1].text)["error"] == "OutsideRoot"
    assert not marker.exists()


@pytest.mark.terraform
@pytest.mark.slow
async def test_sandbox_jobs_run_over_mcp_never_see_the_servers_credentials(
    npa_home: Path, workspace: Path
) -> None:
    """Defect: `infra.soperator.run` in the sandbox printed the server's NEBIUS_IAM_TOKEN
    and AWS_SECRET_ACCESS_KEY (`env`) and kept them in the job's output.log."""
    async with (
        stdio_client(_server(npa_home, workspace, "--sandbox")) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        deployed = await session.call_tool("infra.soperator.deploy", {"spec_path": "cluster.yaml"})
        assert deployed.is_error is not True, _text(deployed)
        ran = await session.call_tool(
            "infra.soperator.run", {"name": "cpu-min", "command": "env", "timeout_seconds": 120}
        )
    assert ran.is_error is not True, _text(ran)
    job = ran.structured_content or {}
    assert job["state"] == "COMPLETED", job
    assert "PATH=" in job["output"] and "SLURM_JOB_ID=" in job["output"]
    logs = list((npa_home / "sandbox").rglob("sandbox-jobs/*/output.log"))
    assert logs
    for text in (job["output"], _text(ran), *(log.read_text() for log in logs)):
        assert TOKEN not in text and AWS_SECRET not in text
        assert "NEBIUS_IAM_TOKEN" not in text and "AWS_SECRET_ACCESS_KEY" not in text
