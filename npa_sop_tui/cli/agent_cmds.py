"""`npa soperator tools`: the agent tool registry, with JSON Schemas for input and output."""

from __future__ import annotations

import argparse

from npa_sop_tui.cli.common import add_output_flag, emit_json, wants_json


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "tools",
        help="list the agent tools (infra.soperator.*) and their schemas",
        description="The tools an agent or a workflow step (toolRef) can call: name, "
        "description, input/output JSON Schema (draft 2020-12) and examples.",
    )
    p.add_argument("--name", help="show only this tool")
    add_output_flag(p)
    p.set_defaults(handler=cmd_tools)


def cmd_tools(args: argparse.Namespace) -> int:
    from npa_sop_tui.agent import registry as tools

    chosen = [tools.get_tool(args.name)] if args.name else list(tools.registry().values())
    if wants_json(args):
        emit_json({"tools": [t.describe() for t in chosen]})
        return 0
    width = max(len(t.name) for t in chosen)
    for tool in chosen:
        flag = "  [destructive]" if tool.destructive else ""
        print(f"{tool.name.ljust(width)}  {tool.description}{flag}")
        fields = tool.input_model.model_json_schema().get("properties", {})
        print(f"{' ' * width}  input: {', '.join(fields)}")
    print("\n`npa soperator tools --output json` prints the full schemas.")
    return 0
