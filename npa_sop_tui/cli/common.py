"""Shared CLI plumbing: output format flag, JSON emission, error → exit code mapping."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from npa_sop_tui.errors import EXIT_BAD_INPUT, EXIT_INTERRUPTED, NpaError

Handler = Callable[[argparse.Namespace], int]


def add_output_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--output",
        "-o",
        choices=("text", "json"),
        default="text",
        help="text for people (default), json for scripts",
    )


def wants_json(args: argparse.Namespace) -> bool:
    return getattr(args, "output", "text") == "json"


def emit_json(obj: Any) -> None:
    """One JSON document (or NDJSON line) on stdout, flushed at once."""
    import json  # here, not at the top: text-mode calls never need it

    sys.stdout.write(json.dumps(obj, default=str, sort_keys=False) + "\n")
    sys.stdout.flush()


def run_handler(args: argparse.Namespace) -> int:
    """Run the chosen command; turn our errors into a message and an exit code.

    A user mistake never shows a traceback: `NpaError` carries the text to print. In JSON
    mode the error is also a JSON document on stdout, so scripts always get one.
    """
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:  # argparse guarantees a command; this is a programming error
        raise SystemExit(EXIT_BAD_INPUT)
    try:
        if getattr(args, "sandbox", False):
            # Sandbox clusters keep their own npa home, shared with the app's sandbox.
            from npa_sop_tui.paths import enter_sandbox_home

            enter_sandbox_home()
        return handler(args)
    except NpaError as exc:
        if getattr(args, "debug", False):
            from npa_sop_tui.debuglog import note_error

            note_error(exc)
        if wants_json(args):
            emit_json({"ok": False, **exc.to_dict(), **_extra(exc)})
        sys.stderr.write(f"error: {exc.render()}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return EXIT_INTERRUPTED


def _extra(exc: NpaError) -> dict[str, Any]:
    extra = getattr(exc, "json_extra", None)
    return extra() if callable(extra) else {}
