"""`npa soperator mcp`: the `infra.soperator.*` agent tools over the Model Context Protocol.

A thin front door over `tools.py`: the same names, descriptions and JSON Schemas (input and
output), the same calls into the lifecycle. While a tool runs, each lifecycle event becomes
an MCP progress notification (`notifications/progress`) for callers that asked for progress
(a `progressToken`), with the event's one-line description as its message. Errors we can
explain (a bad spec, missing identity, a failed Terraform run) come back as a tool result
with `isError` set: the message and hint as text, then the JSON error document the CLI
prints for `--output json`. Nothing but the protocol is written to stdout. Stdin is read in
bounded lines, and every message that cannot be taken gets an error reply (mcp_stdio.py).

`sandbox_only` (the command's `--sandbox`) forces every tool call into the sandbox, so an
agent given this server cannot reach a real cloud whatever it passes.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from contextlib import suppress
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from npa_sop_tui import __version__
from npa_sop_tui.agent import registry as tools
from npa_sop_tui.errors import NpaError

SERVER_NAME = "npa-soperator"
INSTRUCTIONS = (
    "Tools for Nebius Soperator clusters (Slurm on Kubernetes). Validate a spec first "
    "(infra.soperator.validate), then plan, then deploy; status reads a deployed cluster; "
    "destroy needs confirm equal to the cluster name. plan/deploy/destroy report progress "
    "when the call carries a progress token."
)


def mcp_tool(tool: tools.Tool) -> types.Tool:
    """The MCP description of one registry tool (schemas exactly as `tools` generates)."""
    read_only = tool.name in ("infra.soperator.validate", "infra.soperator.status")
    return types.Tool(
        name=tool.name,
        description=tool.description,
        input_schema=tool.input_schema(),
        output_schema=tool.output_schema(),
        annotations=types.ToolAnnotations(
            read_only_hint=read_only,
            destructive_hint=tool.destructive,
            # validate/plan/status change nothing; deploy converges when re-run
            idempotent_hint=not tool.destructive,
            open_world_hint=not read_only,
        ),
    )


def _text(doc: dict[str, Any]) -> list[types.TextContent]:
    return [types.TextContent(type="text", text=json.dumps(doc, default=str))]


def _error_result(exc: NpaError) -> types.CallToolResult:
    extra = getattr(exc, "json_extra", None)
    doc: dict[str, Any] = {"ok": False, **exc.to_dict(), **(extra() if callable(extra) else {})}
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=exc.render()), *_text(doc)],
        is_error=True,
    )


class ProgressRelay:
    """Lifecycle events (sync callbacks inside the running operation) → progress
    notifications, sent in order by one task so a slow client never blocks Terraform."""

    def __init__(self, report: Callable[[float, str], Any]) -> None:
        self._report = report
        self._queue: asyncio.Queue[tuple[float, str] | None] = asyncio.Queue()
        self._count = 0
        self._task: asyncio.Task[None] | None = None

    def __call__(self, event: Any) -> None:
        from npa_sop_tui.sdk.soperator import describe_event

        message = describe_event(event)
        if not message:  # progress ticks and similar noise
            return
        self._count += 1
        self._queue.put_nowait((float(self._count), message))

    async def __aenter__(self) -> ProgressRelay:
        self._task = asyncio.create_task(self._send_all())
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._queue.put_nowait(None)
        if self._task is not None:
            with suppress(Exception):
                await self._task

    async def _send_all(self) -> None:
        while (item := await self._queue.get()) is not None:
            with suppress(Exception):  # a client gone away must not fail the operation
                await self._report(*item)


def _unexpected_result(tool: str, exc: Exception) -> types.CallToolResult:
    """A failure we did not foresee is still the tool's result (`isError`), never a
    protocol error or a traceback on the server."""
    from npa_sop_tui.errors import OperationError

    return _error_result(
        OperationError(
            f"{tool} failed unexpectedly: {type(exc).__name__}: {exc}",
            hint="run `npa --debug soperator mcp` for a log, and report it",
        )
    )


def build_server(*, sandbox_only: bool = False, root: str | None = None) -> Server[Any]:
    """`root`: the workspace root whose files `spec_path` may name (default: cwd)."""
    from npa_sop_tui.agent.confinement import workspace_root

    registry = tools.registry()
    workspace = workspace_root(root)

    async def list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[mcp_tool(t) for t in registry.values()])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        tool = registry.get(params.name)
        if tool is None:
            from npa_sop_tui.errors import UsageError
            from npa_sop_tui.spec.findings import one_of_hint

            return _error_result(
                UsageError(f"unknown tool {params.name!r}", hint=one_of_hint(params.name, registry))
            )
        arguments = dict(params.arguments or {})
        if sandbox_only and "sandbox" in tool.input_model.model_fields:
            arguments["sandbox"] = True

        async def report(progress: float, message: str) -> None:
            await ctx.session.report_progress(progress, None, message)

        try:
            async with ProgressRelay(report) as relay:
                result = await tool.acall(arguments, on_event=relay, root=workspace)
        except NpaError as exc:
            return _error_result(exc)
        except Exception as exc:  # an agent gets a tool error; the server keeps serving
            return _unexpected_result(tool.name, exc)
        return types.CallToolResult(content=_text(result), structured_content=result)

    return Server(
        SERVER_NAME,
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def serve_stdio(*, sandbox_only: bool = False, root: str | None = None) -> None:
    """Serve on stdin/stdout; stdin is read in bounded lines, and a message the server cannot
    take (too long, too deep, not JSON-RPC) is answered with an error (mcp_stdio.py)."""
    from typing import cast

    from npa_sop_tui.agent.mcp_stdio import BoundedStdin, private_stdin

    server = build_server(sandbox_only=sandbox_only, root=root)
    with private_stdin() as wire:
        stdin = BoundedStdin(wire)
        async with stdio_server(stdin=cast(Any, stdin)) as (read_stream, write_stream):
            stdin.replies = write_stream
            await server.run(read_stream, write_stream, server.create_initialization_options())
