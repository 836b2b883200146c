"""Every agent tool called through the official `mcp` client, success and error.

`ClientSession.call_tool` validates a successful result's `structuredContent` against the
tool's declared `outputSchema` and raises "Invalid structured content" on a mismatch, so
each successful call below is also a check that the output matches its schema. The server
is a real subprocess (`npa soperator mcp --sandbox`); plan, deploy and destroy run real
Terraform on the stand-in recipe and the job tools run the sandbox's local Slurm jobs.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from npa_sop_tui.agent import registry as tools

from testkit.lifecycle import ROOT_KEY

NPA = Path(sys.executable).with_name("npa")

pytestmark = [pytest.mark.terraform, pytest.mark.slow]

SHAPE = f"""root_login_ssh_public_key: {ROOT_KEY}
workers:
  - name: cpu
    platform: cpu-d3
    preset: 8vcpu-32gb
    size: 1
"""
SPEC = f"apiVersion: npa.soperator/v0.0.1\nname: mcpc\n{SHAPE}"
FLEET = f"""apiVersion: npa.fleet/v0.0.1
name: mcpfleet
tenant_id: tenant-e00sandbox
region: eu-north1
defaults:
  backend: soperator
  soperator:
{textwrap.indent(SHAPE, "    ")}projects:
  - name: alpha
    project_id: project-e00alpha
    clusters:
      - name: mcpf
"""


def _server(npa_home: Path, root: Path) -> StdioServerParameters:
    env = {
        "NPA_HOME": str(npa_home),
        "TF_VAR_standin_sleep_seconds": "0",
        "PATH": f"{NPA.parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(npa_home),  # never the machine's ~/.ssh keys or config
    }
    args = ["soperator", "mcp", "--sandbox", "--root", str(root)]
    return StdioServerParameters(command=str(NPA), args=args, env=env)


def _ok(result: Any) -> dict[str, Any]:
    """A successful result (validated against its output schema by the client)."""
    assert result.is_error is not True, result.content[0].text
    data: dict[str, Any] = result.structured_content or {}
    assert json.loads(result.content[-1].text) == data
    return data


def _error(result: Any) -> dict[str, Any]:
    """A tool error: the message as text, then the CLI's JSON error document."""
    assert result.is_error is True
    doc: dict[str, Any] = json.loads(result.content[-1].text)
    assert doc["ok"] is False and doc["message"]
    return doc


async def test_every_tool_through_the_mcp_client_success_and_error(
    npa_home: Path, tmp_path: Path
) -> None:
    (tmp_path / "cluster.yaml").write_text(SPEC)
    (tmp_path / "fleet.yaml").write_text(FLEET)
    (tmp_path / "notes.txt").write_text("not a fleet\n")
    called: set[str] = set()
    async with (
        stdio_client(_server(npa_home, tmp_path)) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        listed = {t.name: t for t in (await session.list_tools()).tools}
        assert set(listed) == set(tools.registry())
        for tool in listed.values():  # every tool declares what the client validates against
            assert tool.output_schema and tool.output_schema.get("additionalProperties") is False

        async def call(name: str, arguments: dict[str, Any]) -> Any:
            called.add(name)
            return await session.call_tool(name, arguments)

        validated = _ok(await call("infra.soperator.validate", {"spec_path": "cluster.yaml"}))
        assert validated["ok"] is True and validated["name"] == "mcpc"
        assert "bad input" in _error(await call("infra.soperator.validate", {}))["message"]

        planned = _ok(await call("infra.soperator.plan", {"spec_path": "cluster.yaml"}))
        assert planned["changes"]["add"] > 0
        bad_plan = _error(await call("infra.soperator.plan", {"spec_yaml": "name: [x"}))
        assert bad_plan["error"] == "SpecError"

        deployed = _ok(await call("infra.soperator.deploy", {"spec_path": "cluster.yaml"}))
        assert deployed["status"] == "ready" and deployed["name"] == "mcpc"
        refused = _error(
            await call("infra.soperator.deploy", {"spec_path": "cluster.yaml", "force": True})
        )
        assert "force" in refused["message"]

        status = _ok(await call("infra.soperator.status", {"name": "mcpc"}))
        assert status["name"] == "mcpc" and status["backend"] == "soperator"
        assert status["status"] in ("running", "unreachable")
        assert (
            "no sandbox cluster"
            in _error(await call("infra.soperator.status", {"name": "nosuch"}))["message"]
        )

        ran = _ok(
            await call(
                "infra.soperator.run",
                {"name": "mcpc", "command": "echo hello-from-mcp", "timeout_seconds": 120},
            )
        )
        assert ran["finished"] is True and "hello-from-mcp" in ran["output"]
        _error(await call("infra.soperator.run", {"name": "mcpc"}))  # no command/script/template

        logs = _ok(await call("infra.soperator.logs", {"name": "mcpc", "job_id": ran["job_id"]}))
        assert logs["job_id"] == ran["job_id"] and "hello-from-mcp" in logs["output"]
        _error(await call("infra.soperator.logs", {"name": "mcpc", "job_id": "x; rm"}))

        _error(await call("infra.soperator.destroy", {"name": "mcpc", "confirm": "other"}))
        destroyed = _ok(await call("infra.soperator.destroy", {"name": "mcpc", "confirm": "mcpc"}))
        assert destroyed["status"] == "destroyed" and destroyed["destroyed"] > 0

        fleet = _ok(await call("infra.fleet.deploy", {"spec_path": "fleet.yaml"}))
        assert fleet["ok"] is True and fleet["clusters"][0]["cluster_name"] == "mcpf"
        not_fleet = _error(await call("infra.fleet.deploy", {"spec_path": "notes.txt"}))
        assert "not a valid fleet file" in not_fleet["message"]

    assert called == set(tools.registry())
