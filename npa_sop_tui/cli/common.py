"""Shared CLI plumbing: output format flag, JSON emission, error → exit code mapping."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from npa_sop_tui.errors import EXIT_BAD_INPUT, EXIT_INTERRUPTED, NpaError

if TYPE_CHECKING:
    from npa_sop_tui.environment import Environment

Handler = Callable[[argparse.Namespace], int]


def add_output_flag(parser: argparse.ArgumentParser, *, ndjson: bool = False) -> None:
    """`--output text|json` (json: ONE document on stdout, progress on stderr); commands
    that stream events also take `ndjson` (one event per line, then the result line)."""
    parser.add_argument(
        "--output",
        "-o",
        choices=("text", "json", "ndjson") if ndjson else ("text", "json"),
        default="text",
        help="text for people (default), json for scripts (one document)"
        + (", ndjson for the event stream (one event per line, then the result)" if ndjson else ""),
    )


def wants_json(args: argparse.Namespace) -> bool:
    """Machine output: `json` (one document) or `ndjson` (events, then the result line)."""
    return getattr(args, "output", "text") in ("json", "ndjson")


def wants_ndjson(args: argparse.Namespace) -> bool:
    return getattr(args, "output", "text") == "ndjson"


def result_document(result: Any) -> dict[str, Any]:
    """`--output json` of an operation: npa's result fields at the top level (its one
    document) and ours beside them: `ok` and the typed `result`."""
    data = result.model_dump(mode="json")
    return {**data, "ok": True, "result": data}


def say(text: str, *, err: bool = False) -> None:
    """One message for people, on stdout (or stderr): every control in it shown, never
    obeyed (`safe_text`; line feeds kept). Whatever it quotes from a cluster, the cloud, a
    job or a file stays text, whatever the terminal. JSON output keeps raw values instead."""
    from npa_sop_tui.safe_text import safe_text

    stream = sys.stderr if err else sys.stdout
    stream.write(safe_text(text, keep_newlines=True) + "\n")


def text_table(rows: list[list[str]] | list[tuple[str, ...]]) -> str:
    """Rows (the first is the header) as aligned columns; every cell one line, each
    control in it shown (`safe_text`), so no value can break a row or forge another."""
    from npa_sop_tui.safe_text import safe_text

    cells = [[safe_text(cell) for cell in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in cells
    )


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
            from npa_sop_tui.home.files import enter_sandbox_home

            enter_sandbox_home()
        return handler(args)
    except NpaError as exc:
        if getattr(args, "debug", False):
            from npa_sop_tui.home.debuglog import note_error

            note_error(exc)
        from npa_sop_tui.redact import Redactor

        mask = Redactor()  # secret-looking environment values never reach a terminal
        if wants_json(args):
            emit_json(mask.value(_error_document(exc)))
        say(f"error: {mask.text(exc.render())}", err=True)
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return EXIT_INTERRUPTED


def _extra(exc: NpaError) -> dict[str, Any]:
    extra = getattr(exc, "json_extra", None)
    return extra() if callable(extra) else {}


def _error_document(exc: NpaError) -> dict[str, Any]:
    """The JSON of a failure. An applied-but-degraded deploy (or a state-capture failure)
    carries its result: npa prints that result as the document, so its fields are also at
    the top level (`status: degraded-validation`, …), beside our `ok`/`error`/`result`."""
    doc: dict[str, Any] = {"ok": False, **exc.to_dict(), **_extra(exc)}
    result = doc.get("result")
    if isinstance(result, dict):
        doc = {**{k: v for k, v in result.items() if k not in doc}, **doc}
    return doc


def identifier_arg(field: str) -> Callable[[str], str]:
    """An argparse `type` for a flag naming an identifier (`region`, `project_id`, …): a
    value of another shape is a usage error (exit 2) naming the flag and the shape, before
    it can become part of a path or a request (`spec.identity`)."""

    def parse(text: str) -> str:
        from npa_sop_tui.spec.identity import identifier_problem

        problem = identifier_problem(field, text)
        if problem is not None:
            raise argparse.ArgumentTypeError(problem)
        return text

    parse.__name__ = field  # argparse names the type in its own messages
    return parse


def add_switch(
    parser: argparse.ArgumentParser,
    dest: str,
    *,
    off: tuple[str, str],
    on: tuple[str, str],
    default: bool = False,
) -> None:
    """Two mutually exclusive flags that set one boolean `dest`: `off` = (flag, help) sets
    it False, `on` sets it True; `default` when neither is given."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(off[0], dest=dest, action="store_false", help=off[1])
    group.add_argument(on[0], dest=dest, action="store_true", help=on[1])
    parser.set_defaults(**{dest: default})


def add_recipe_ref_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--recipe-ref",
        "--ref",  # the existing npa's name
        dest="recipe_ref",
        metavar="SHA",
        help="the nebius-solutions-library commit to use (default: the commit that ships the "
        "spec's slurm_operator_version; config recipe.ref)",
    )


def capacity_flag(args: argparse.Namespace) -> dict[str, str]:
    """`--capacity-block-group POOL=ID` (repeatable) over `NPA_CAPACITY_BLOCK_GROUPS`, per
    pool: the run-time reservations of a command."""
    from npa_sop_tui.home.capacity import capacity_from_env, parse_capacity_assignments

    given = getattr(args, "capacity_block_group", None)
    return {**capacity_from_env(), **parse_capacity_assignments(given)}


def add_state_bucket_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--state-bucket",
        metavar="BUCKET",
        help="keep Terraform state, records and locks in this Object Storage bucket "
        "(also NPA_STATE_BUCKET, config state.bucket); default: state.backend, else local",
    )


def cli_flags(args: argparse.Namespace) -> dict[str, Any]:
    """The settings this command's flags set explicitly (see `settings.resolve_settings`)."""
    flags = {
        "terraform_dir": getattr(args, "terraform_dir", None),
        "plugin_cache_dir": getattr(args, "plugin_cache_dir", None),
        "root_login_key_file": getattr(args, "root_login_ssh_public_key_file", None),
        "capacity": capacity_flag(args) if getattr(args, "capacity_block_group", None) else None,
        "parallelism": getattr(args, "parallelism", None),
        "recipe.ref": getattr(args, "recipe_ref", None),
        "state.bucket": getattr(args, "state_bucket", None),
        "profile": getattr(args, "profile", None),  # the Nebius CLI profile
        "project": getattr(args, "project", None),  # a project ID or an npa project alias
    }
    return {key: value for key, value in flags.items() if value is not None}


def open_environment(args: argparse.Namespace, **extra_flags: Any) -> Environment:
    """The command's environment: the sandbox with `--sandbox`, else the real cloud."""
    from npa_sop_tui.environment_choice import open_environment as open_env

    flags = {**cli_flags(args), **{k: v for k, v in extra_flags.items() if v is not None}}
    return open_env(sandbox=bool(getattr(args, "sandbox", False)), flags=flags)
