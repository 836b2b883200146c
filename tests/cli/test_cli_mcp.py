"""`npa soperator mcp`: the agent tools over MCP on stdio, driven by the `mcp` client.

The server runs as a real subprocess (`npa soperator mcp --sandbox`); the plan goes through
real Terraform on the stand-in recipe.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from npa_sop_tui.agent import registry as tools

ASSETS = Path(__file__).resolve().parents[2] / "assets"
NPA = Path(sys.executable).with_name("npa")


def _server(npa_home: Path, *extra: str) -> StdioServerParameters:
    env = {
        "NPA_HOME": str(npa_home),
        "TF_VAR_standin_sleep_seconds": "0",
        "PATH": f"{NPA.parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(npa_home),  # never the machine's ~/.ssh keys or config
    }
    return StdioServerParameters(command=str(NPA), args=["soperator", "mcp", *extra], env=env)


async def test_tools_are_the_registry_with_its_schemas(npa_home: Path) -> None:
    async with (
        stdio_client(_server(npa_home)) as (read, write),
        ClientSession(read, write) as session,
    ):
        init = await session.initialize()
        assert init.server_info.name == "npa-soperator"
        listed = {t.name: t for t in (await session.list_tools()).tools}
    registry = tools.registry()
    assert list(listed) == list(registry)
    for name, tool in registry.items():
        assert listed[name].input_schema == tool.input_schema()
        assert listed[name].output_schema == tool.output_schema()
        assert listed[name].description == tool.description
    assert listed["infra.soperator.destroy"].annotations.destructive_hint is True
    assert listed["infra.soperator.validate"].annotations.read_only_hint is True


@pytest.mark.terraform
@pytest.mark.terraform
async def test_sandbox_validate_and_plan_with_progress_notifications(npa_home: Path) -> None:
    spec_path = str(ASSETS / "cpu-minimal.yaml")
    progress: list[tuple[float, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, message))

    async with (
        stdio_client(_server(npa_home, "--sandbox")) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        checked = await session.call_tool("infra.soperator.validate", {"spec_path": spec_path})
        # sandbox: false is overridden by the server's --sandbox (no cloud identity here)
        planned = await session.call_tool(
            "infra.soperator.plan",
            {"spec_path": spec_path, "sandbox": False},
            progress_callback=on_progress,
        )

    assert checked.is_error is not True
    validated: dict[str, Any] = checked.structured_content or {}
    assert validated["ok"] is True and validated["name"] == "cpu-min"
    assert json.loads(checked.content[0].text) == validated

    assert planned.is_error is not True, planned.content[0].text
    plan = planned.structured_content or {}
    assert plan["name"] == "cpu-min" and plan["changes"]["add"] > 0
    assert Path(plan["log"]).is_relative_to(npa_home / "sandbox")
    # one notification per lifecycle event, in order, each with its one-line description
    assert [value for value, _ in progress] == [float(i) for i in range(1, len(progress) + 1)]
    messages = [m or "" for _, m in progress]
    assert messages[0] == "plan cpu-min: started"
    assert any(m.startswith("plan: ") and "to add" in m for m in messages)


async def test_bad_input_and_bad_specs_are_tool_errors_not_crashes(
    npa_home: Path, tmp_path: Path
) -> None:
    broken = tmp_path / "cluster.yaml"
    broken.write_text(
        "apiVersion: npa.soperator/v0.0.1\nname: demo\nworkers:\n  - name: cpu\n    size: two\n"
    )
    async with (
        stdio_client(_server(npa_home, "--sandbox", "--root", str(tmp_path))) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        unknown_field = await session.call_tool("infra.soperator.plan", {"spec_pth": "x"})
        bad_spec = await session.call_tool("infra.soperator.plan", {"spec_path": str(broken)})
        unknown_tool = await session.call_tool("infra.soperator.valdate", {})
        still_serving = await session.call_tool(
            "infra.soperator.validate", {"spec_path": str(broken)}
        )

    assert unknown_field.is_error is True
    assert "bad input for tool infra.soperator.plan" in unknown_field.content[0].text
    assert bad_spec.is_error is True
    text = bad_spec.content[0].text
    assert f"{broken}:5:11 workers[0].size: must be a whole number" in text
    doc = json.loads(bad_spec.content[1].text)
    assert doc["ok"] is False and doc["error"] == "SpecError" and doc["findings"]
    assert unknown_tool.is_error is True and "did you mean" in unknown_tool.content[0].text
    # validate reports a bad spec as its result (ok: false), like the CLI's JSON
    assert still_serving.is_error is not True
    assert (still_serving.structured_content or {})["ok"] is False
