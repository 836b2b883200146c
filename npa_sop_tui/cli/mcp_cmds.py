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
    p.add_argument(
        "--root",
        metavar="DIR",
        help="workspace root: spec_path arguments must name files inside it (default: the "
        "current folder); nothing outside it is ever read",
    )
    p.set_defaults(handler=cmd_mcp)


def cmd_mcp(args: argparse.Namespace) -> int:
    import asyncio

    from npa_sop_tui.agent.confinement import workspace_root
    from npa_sop_tui.agent.mcp_server import serve_stdio

    root = workspace_root(args.root)
    if not root.is_dir():
        from npa_sop_tui.errors import UsageError

        raise UsageError(f"--root {args.root} is not a folder", hint="name an existing folder")
    asyncio.run(serve_stdio(sandbox_only=bool(args.sandbox), root=str(root)))
    return 0
