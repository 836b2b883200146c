"""Agent tools: schemas are valid JSON Schema, examples validate, bad input is refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from npa_sop_tui.agent import registry as tools
from npa_sop_tui.cli.entry import main
from npa_sop_tui.errors import UsageError

from testkit.fleets import spec_mapping

EXPECTED = {
    "infra.soperator.validate",
    "infra.soperator.plan",
    "infra.soperator.deploy",
    "infra.soperator.status",
    "infra.soperator.destroy",
    "infra.soperator.run",
    "infra.soperator.logs",
    "infra.fleet.deploy",  # the existing npa's catalog entry
}


def test_registry_has_exactly_the_soperator_and_fleet_tools() -> None:
    assert set(tools.registry()) == EXPECTED
    assert [t.name for t in tools.registry().values() if t.destructive] == [
        "infra.soperator.destroy"
    ]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_schemas_are_valid_and_examples_validate(name: str) -> None:
    tool = tools.get_tool(name)
    described = tool.describe()
    for key in ("input_schema", "output_schema"):
        schema = described[key]
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["type"] == "object"
        assert schema["properties"], f"{name} {key} has no properties"
    validator = jsonschema.Draft202012Validator(described["input_schema"])
    assert tool.examples
    for example in tool.examples:
        validator.validate(example["input"])
        tool.parse_input(example["input"])  # the model's own cross-field rules too
    # the schema is strict: unknown fields are refused by schema and model alike
    bad = {**tool.examples[0]["input"], "bogus": 1}
    assert list(validator.iter_errors(bad))
    with pytest.raises(tools.ToolInputError, match="bogus"):
        tool.parse_input(bad)


def test_output_schema_accepts_a_real_validate_result() -> None:
    tool = tools.get_tool("infra.soperator.validate")
    output = tool.call({"spec": spec_mapping()})
    jsonschema.Draft202012Validator(tool.output_schema()).validate(output)
    assert output["ok"] is True and output["name"] == "sdk-demo"
    bad = tool.call({"spec": {**spec_mapping(), "workers": [{"name": "cpu", "size": 0}]}})
    jsonschema.Draft202012Validator(tool.output_schema()).validate(bad)
    assert bad["ok"] is False
    assert bad["findings"][0]["path"] == "workers[0].size"


def test_validate_tool_reports_yaml_positions() -> None:
    text = "apiVersion: npa.soperator/v0.0.1\nname: okname\nworkers:\n  - name: cpu\n    sise: 2\n"
    out = tools.get_tool("infra.soperator.validate").call({"spec_yaml": text})
    assert out["ok"] is False
    (finding,) = out["findings"]
    assert (finding["path"], finding["line"], finding["hint"]) == (
        "workers[0].sise",
        5,
        "did you mean 'size'?",
    )


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        ({}, "exactly one of spec, spec_yaml or spec_path"),
        ({"spec": {}, "spec_path": "x"}, "got spec, spec_path"),
        ({"name": "a", "confirm": "b"}, "confirm must equal name"),
    ],
)
def test_bad_input_is_a_usage_error(args: dict[str, Any], needle: str) -> None:
    name = "infra.soperator.destroy" if "confirm" in args else "infra.soperator.deploy"
    with pytest.raises(tools.ToolInputError, match=needle) as info:
        tools.get_tool(name).parse_input(args)
    assert info.value.exit_code == 2


def test_unknown_tool_suggests_a_name() -> None:
    with pytest.raises(UsageError) as info:
        tools.get_tool("infra.soperator.deplyo")
    assert info.value.hint == "did you mean 'infra.soperator.deploy'?"


def test_cli_lists_tools_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["soperator", "tools", "--output", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {t["name"] for t in doc["tools"]} == EXPECTED
    for t in doc["tools"]:
        jsonschema.Draft202012Validator.check_schema(t["input_schema"])
    assert main(["soperator", "tools"]) == 0
    text = capsys.readouterr().out
    assert "infra.soperator.destroy" in text and "[destructive]" in text


def test_deploy_tool_refuses_an_invalid_spec_path_with_position(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "apiVersion: npa.soperator/v0.0.1\nname: okname\nworkers:\n  - name: cpu\n    size: -1\n"
    )
    from npa_sop_tui.spec.model import SpecError

    with pytest.raises(SpecError) as info:
        tools.get_tool("infra.soperator.deploy").call(
            {"spec_path": str(path), "sandbox": True}, root=tmp_path
        )
    assert info.value.findings[0].line == 5
    assert info.value.findings[0].file == str(path)


@pytest.mark.parametrize("name", ["infra.soperator.validate", "infra.soperator.deploy"])
def test_inline_spec_input_is_checked_against_the_spec_schema(name: str) -> None:
    schema = tools.get_tool(name).describe()["input_schema"]
    validator = jsonschema.Draft202012Validator(schema)
    good = {"spec": spec_mapping("agent1")}
    assert not list(validator.iter_errors(good))
    # An agent that misspells a pool field hears it from the schema, before any call.
    bad = {"spec": {**good["spec"], "workers": [{"name": "cpu", "preemptable": True}]}}
    assert list(validator.iter_errors(bad))
