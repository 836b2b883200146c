"""`npa workflow run F [--dry-run]`: run workflow steps through the agent tool registry."""

from __future__ import annotations

import argparse

from npa_sop_tui.cli.common import add_output_flag, emit_json, say, wants_json
from npa_sop_tui.errors import EXIT_FAILED, EXIT_OK
from npa_sop_tui.safe_text import safe_text


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    workflow = subparsers.add_parser(
        "workflow",
        help="run workflows (npa's npa.workflow/v0.0.1 states, or npa-sop.workflow/v0.0.1 "
        "steps) that call infra.soperator.* / infra.fleet.deploy",
        description="Run workflow files whose states or steps call agent tools by toolRef.",
    )
    commands = workflow.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True
    p = commands.add_parser(
        "run",
        help="run a workflow file's steps in order (stop at the first failure)",
        description="Check every step (tool exists, input matches its schema, spec is "
        "valid), then run them in order. --dry-run only checks and says what would run.",
    )
    p.add_argument("file", metavar="FILE", help="workflow file (YAML)")
    p.add_argument("--dry-run", action="store_true", help="check and show; run nothing")
    p.add_argument(
        "--sandbox",
        action="store_true",
        help="run every step in the sandbox (stand-in recipe, no cloud), whatever the file says",
    )
    add_output_flag(p)
    p.set_defaults(handler=cmd_run)


def cmd_run(args: argparse.Namespace) -> int:
    from npa_sop_tui.agent.workflow import load_workflow, run_workflow
    from npa_sop_tui.events import Event, describe, is_milestone

    loaded = load_workflow(args.file)

    def show(index: int, event: Event) -> None:
        if is_milestone(event):
            step = loaded.file.steps[index].name or f"step-{index + 1}"
            for line in describe(event).splitlines():
                say(f"[{step}] {safe_text(line)}", err=True)

    from npa_sop_tui.cli.interrupts import run_interruptible

    result = run_interruptible(
        lambda: run_workflow(
            loaded,
            dry_run=args.dry_run,
            on_event=None if wants_json(args) else show,
            sandbox=args.sandbox,
        ),
        interrupted="workflow interrupted; the running step was stopped",
        hint=None,
    )
    if wants_json(args):
        emit_json(result.model_dump(mode="json"))
    else:
        for step in result.steps:
            detail = ""
            if step.status == "would-run" and step.output:
                detail = " ".join(f"{k}={v}" for k, v in step.output.items() if k != "would_run")
            elif step.status == "failed" and step.error:
                detail = str(step.error.get("message", ""))
            elif step.status == "ok" and step.output:
                detail = str(step.output.get("name", ""))
            say(f"{step.name}: {step.tool} {step.status} {safe_text(detail)}".rstrip())
        verdict = "checked" if result.dry_run else ("ok" if result.ok else "failed")
        print(f"workflow {result.name}: {verdict}")
    return EXIT_OK if result.ok else EXIT_FAILED
