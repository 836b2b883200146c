"""`npa soperator mcp`: serve the agent tools over the Model Context Protocol (stdio)."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "mcp",
        help="serve the infra.soperator.* tools to agents over MCP (stdio)",
        description="Serve infra.soperator.validate, plan, deploy, status and destroy over the "
        "Model Context Protocol on stdin/stdout, with progress notifications while they run. "
        "Point an MCP client at the command `npa soperator mcp` (add --sandbox to keep every "
        "call on this machine).",
    )
    p.add_argument(
        "--sandbox",
        action="store_true",
        help="force every tool call into the sandbox (stand-in recipe, no cloud); state under "
        "NPA_HOME/sandbox",
    )
    p.set_defaults(handler=cmd_mcp)


def cmd_mcp(args: argparse.Namespace) -> int:
    import asyncio

    from npa_sop_tui.mcp_server import serve_stdio

    asyncio.run(serve_stdio(sandbox_only=bool(args.sandbox)))
    return 0
