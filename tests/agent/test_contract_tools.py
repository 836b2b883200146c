"""Agent tools under the contract: npa's catalog entries exist, `spec_path` reads only inside
the workspace root (no symlink escape, a non-spec file quoted nowhere), booleans are strict,
and over MCP every failure is an `isError` result, never a protocol error."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from npa_sop_tui.agent import registry as tools
from npa_sop_tui.agent.confinement import OutsideRoot
from npa_sop_tui.errors import UsageError

from testkit.fleets import spec_mapping

NPA = Path(sys.executable).with_name("npa")
SHADOW = Path("/etc/shadow")


def _secret_lines(path: Path) -> list[str]:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return []
    return [line for line in text.splitlines() if len(line.strip()) > 3]


def test_npa_catalog_tool_refs_are_known() -> None:
    registry = tools.registry()
    assert {"infra.soperator.deploy", "infra.fleet.deploy"} <= set(registry)
    fleet = registry["infra.fleet.deploy"]
    assert fleet.input_schema()["properties"]["spec_path"]["type"] == "string"
    assert "clusters" in fleet.output_schema()["properties"]  # npa's aggregate


def test_booleans_are_strict() -> None:
    plan = tools.get_tool("infra.soperator.plan")
    with pytest.raises(tools.ToolInputError, match="sandbox"):
        plan.parse_input({"spec": spec_mapping(), "sandbox": "yes"})
    with pytest.raises(tools.ToolInputError, match="sandbox"):
        tools.get_tool("infra.soperator.status").parse_input({"name": "a", "sandbox": 1})
    assert plan.parse_input({"spec": spec_mapping(), "sandbox": True}).sandbox is True


def test_spec_path_outside_the_root_is_refused_without_reading(tmp_path: Path) -> None:
    validate = tools.get_tool("infra.soperator.validate")
    root = tmp_path / "work"
    root.mkdir()
    for given in (str(SHADOW), "../outside.yaml", "/etc/passwd"):
        with pytest.raises(OutsideRoot) as info:
            validate.call({"spec_path": given}, root=root)
        assert info.value.exit_code == 2
        for line in _secret_lines(SHADOW) + _secret_lines(Path("/etc/passwd")):
            assert line not in info.value.render()
    # a symlink inside the root that points outside is an escape, too
    (root / "cluster.yaml").symlink_to("/etc/passwd")
    with pytest.raises(OutsideRoot):
        validate.call({"spec_path": "cluster.yaml"}, root=root)
    with pytest.raises(UsageError, match="does not exist"):
        validate.call({"spec_path": "missing.yaml"}, root=root)


def test_a_file_that_is_not_a_spec_gives_one_finding_quoting_nothing(tmp_path: Path) -> None:
    secret = "root:$6$s3cr3tHASH:19000:0:99999:7:::\nadmin: hunter2-password\nkey: value\n"
    (tmp_path / "notes.yaml").write_text(secret)
    (tmp_path / "mapping.yaml").write_text("password: hunter2\ntoken: abc123\n")
    for name in ("notes.yaml", "mapping.yaml"):
        result = tools.get_tool("infra.soperator.validate").call({"spec_path": name}, root=tmp_path)
        assert result["ok"] is False and len(result["findings"]) == 1
        dumped = json.dumps(result)
        for word in ("s3cr3tHASH", "hunter2", "abc123", "password", "admin", "token"):
            assert word not in dumped
    with pytest.raises(UsageError) as info:  # plan: the same one finding, as an error
        tools.get_tool("infra.soperator.plan").call(
            {"spec_path": "mapping.yaml", "sandbox": True}, root=tmp_path
        )
    assert "hunter2" not in info.value.render() and "not a Soperator spec" in info.value.render()
    # a real spec inside the root is read, with positions
    (tmp_path / "cluster.yaml").write_text(
        "apiVersion: npa.soperator/v0.0.1\nname: demo\nworkers:\n  - {name: cpu, size: 0}\n"
    )
    bad = tools.get_tool("infra.soperator.validate").call(
        {"spec_path": "cluster.yaml"}, root=tmp_path
    )
    assert bad["ok"] is False and bad["findings"][0]["line"] == 4


def _server(npa_home: Path, root: Path):  # type: ignore[no-untyped-def]
    from mcp import StdioServerParameters

    env = {
        "NPA_HOME": str(npa_home),
        "PATH": f"{NPA.parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(npa_home),
    }
    args = ["soperator", "mcp", "--sandbox", "--root", str(root)]
    return StdioServerParameters(command=str(NPA), args=args, env=env)


async def test_mcp_failures_are_tool_errors(npa_home: Path, tmp_path: Path) -> None:
    from mcp import ClientSession, stdio_client

    async with (
        stdio_client(_server(npa_home, tmp_path)) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        shadow = await session.call_tool("infra.soperator.validate", {"spec_path": str(SHADOW)})
        ghost = await session.call_tool("infra.soperator.status", {"name": "ghost"})
        loose = await session.call_tool(
            "infra.fleet.deploy", {"spec_path": "fleet.yaml", "concurrency": "2"}
        )
        fleet = await session.call_tool("infra.fleet.deploy", {"spec_path": "/etc/passwd"})
        alive = await session.call_tool("infra.soperator.validate", {"spec": spec_mapping()})

    assert shadow.is_error is True and "outside the workspace root" in shadow.content[0].text
    everything = json.dumps([c.text for c in shadow.content])
    assert all(line not in everything for line in _secret_lines(SHADOW))
    assert ghost.is_error is True and "no sandbox cluster named 'ghost'" in ghost.content[0].text
    assert loose.is_error is True and "concurrency" in loose.content[0].text
    assert fleet.is_error is True and "outside the workspace root" in fleet.content[0].text
    assert alive.is_error is not True and (alive.structured_content or {})["ok"] is True


def test_an_incomplete_destroy_is_the_tools_error(monkeypatch: pytest.MonkeyPatch) -> None:
    # The SDK returns npa's destroy-incomplete result; the tool must not let an agent (or a
    # workflow step) read that as done.
    from npa_sop_tui.lifecycle import api as lifecycle
    from npa_sop_tui.lifecycle.api import DestroyIncomplete

    async def incomplete(name: str, **_kw: object) -> None:
        raise DestroyIncomplete(name, ["module.k8s.nebius_mk8s_v1_cluster.this"], "test")

    monkeypatch.setattr(lifecycle, "destroy", incomplete)
    tool = tools.get_tool("infra.soperator.destroy")
    with pytest.raises(DestroyIncomplete):
        tool.call({"name": "demo", "confirm": "demo", "sandbox": True})
    from npa.sdk import soperator

    assert soperator.destroy("demo", sandbox=True)["status"] == "destroy-incomplete"
