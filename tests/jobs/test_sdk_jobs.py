"""The SDK's job handle and the run/logs agent tools (in-process and over MCP with the `mcp`
client), against the GPU lab's real Slurm over SSH."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
import yaml
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from npa.sdk import soperator
from npa_sop_tui.agent import registry as tools

from testkit.gpu_lab import GpuLab

pytestmark = pytest.mark.slurm
NPA = Path(sys.executable).with_name("npa")


def _fields(lab: GpuLab) -> dict[str, object]:
    return {
        "login_host": lab.host,
        "login_port": lab.port,
        "login_user": lab.user,
        "identity_file": lab.key,
        "accept_new_host_key": True,
    }


def test_run_wait_logs_state_and_cancel(lab_queue: GpuLab) -> None:
    job = soperator.run("lab", "echo out; echo err >&2; exit 4", **_fields(lab_queue))
    assert job.id.isdigit() and job.output_path and job.output_path.endswith(f"{job.id}.out")
    assert job.wait(timeout=120) == 4
    assert job.info.state == "FAILED" and job.state == "FAILED"
    assert sorted(job.logs().split()) == ["err", "out"]
    again = soperator.job("lab", job.id, **_fields(lab_queue))  # rebuilt from the records
    assert again.output_path == job.output_path and again.wait() == 4

    long = soperator.run("lab", ["sleep", "60"], **_fields(lab_queue))
    long.cancel()
    assert long.wait(timeout=60) is None and long.info.state == "CANCELLED"


def test_tools_run_and_logs_in_process(lab_queue: GpuLab) -> None:
    run = tools.get_tool("infra.soperator.run")
    with pytest.raises(soperator.UsageError, match="exactly one of command, script"):
        run.parse_input({"name": "lab", "command": "true", "template": "cpu-hello"})
    # connection settings as an agent has them: from the npa config
    config = {
        "login": {"host": lab_queue.host, "port": lab_queue.port, "user": lab_queue.user},
        "ssh_private_key_path": str(lab_queue.key),
    }
    home = Path(os.environ["NPA_HOME"])
    (home / "config.yaml").write_text(yaml.safe_dump(config))
    soperator.run("lab", "true", accept_new_host_key=True).wait()  # records the host key
    result = run.call({"name": "lab", "command": "printf 'a\\377'; exit 2"})
    assert result["finished"] and result["exit_code"] == 2 and result["output"] == "a\ufffd"
    logs = tools.get_tool("infra.soperator.logs").call({"name": "lab", "job_id": result["job_id"]})
    assert logs["state"] == "FAILED" and logs["output"] == "a\ufffd"


async def test_tools_over_mcp(lab_queue: GpuLab, npa_home: Path) -> None:
    config = {
        "login": {"host": lab_queue.host, "port": lab_queue.port, "user": lab_queue.user},
        "ssh_private_key_path": str(lab_queue.key),
    }
    (npa_home / "config.yaml").write_text(yaml.safe_dump(config))
    await soperator.arun("lab", "true", accept_new_host_key=True)  # records the host key
    env = {"NPA_HOME": str(npa_home), "HOME": str(npa_home), "PATH": os.environ["PATH"]}
    server = StdioServerParameters(command=str(NPA), args=["soperator", "mcp"], env=env)
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        listed = {t.name: t for t in (await session.list_tools()).tools}
        assert (
            listed["infra.soperator.run"].input_schema
            == tools.get_tool("infra.soperator.run").input_schema()
        )
        called = await session.call_tool(
            "infra.soperator.run", {"name": "lab", "command": "echo mcp; exit 5"}
        )
        assert called.is_error is not True, called.content
        doc = called.structured_content or json.loads(called.content[0].text)  # type: ignore[union-attr]
        assert (doc["exit_code"], doc["output"], doc["state"]) == (5, "mcp\n", "FAILED")
        called = await session.call_tool(
            "infra.soperator.logs", {"name": "lab", "job_id": doc["job_id"], "follow": True}
        )
        assert (called.structured_content or {})["output"] == "mcp\n"
        bad = await session.call_tool("infra.soperator.logs", {"name": "lab", "job_id": "x;y"})
        assert bad.is_error is True
