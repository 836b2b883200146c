"""The console scripts `npa` and `npa-sop`: parse, dispatch, exit codes."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from npa_sop_tui import __version__
from npa_sop_tui.cli.parser import (
    NpaArgumentParser,
    add_debug_flag,
    build_parser,
    command_path,
    hoist_global_options,
    split_debug,
)

__all__ = ["build_parser", "main", "tui_main"]


_PLUGINS_OFF = ("__all__", "1", "true")  # the values pydantic reads as "no plugins"


def _skip_pydantic_plugins() -> None:
    """Before pydantic builds the first model, turn its plugins off (npa uses none).

    pydantic's plugin loader scans every installed distribution's entry points and, even
    with plugins disabled, imports importlib.metadata (email, zipfile, csv …) when it is
    first imported: together a large part of a cold `validate`. With plugins off its only
    function returns nothing, so a stand-in module that does exactly that takes its place.
    Setting PYDANTIC_DISABLE_PLUGINS yourself (even to "") keeps your choice.
    """
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    name = "pydantic.plugin._loader"
    if os.environ["PYDANTIC_DISABLE_PLUGINS"] in _PLUGINS_OFF and name not in sys.modules:
        import types

        stand_in = types.ModuleType(name, "pydantic plugins are disabled (npa_sop_tui.cli)")
        stand_in.get_plugins = lambda: ()  # type: ignore[attr-defined]
        sys.modules[name] = stand_in


def main(argv: Sequence[str] | None = None) -> int:
    _skip_pydantic_plugins()
    from npa_sop_tui.cli.interrupts import guard_std_streams

    guard_std_streams()  # a closed stdout (`npa … | head`) must not crash a running deploy
    raw = list(argv) if argv is not None else sys.argv[1:]
    from npa_sop_tui.cli.completion_cmds import complete_if_requested

    complete_if_requested(build_parser)
    raw, debug = split_debug(raw)
    raw = hoist_global_options(raw)
    NpaArgumentParser.argv = raw
    args = build_parser(command_path(raw)).parse_args(raw)
    return _run(args, raw, debug, program="npa", own_process=argv is None)


def tui_main(argv: Sequence[str] | None = None) -> int:
    """`npa-sop`: the Textual app (same as `npa soperator tui`)."""
    _skip_pydantic_plugins()
    raw = list(argv) if argv is not None else sys.argv[1:]
    from npa_sop_tui.cli.completion_cmds import complete_if_requested

    complete_if_requested(build_tui_parser)
    raw, debug = split_debug(raw)
    NpaArgumentParser.argv = raw
    if raw[:1] == ["serve"]:  # `npa-sop serve …`: the app in a browser (cli/serve_cmds.py)
        args = build_serve_parser().parse_args(raw[1:])
    else:
        args = build_tui_parser().parse_args(raw)
    return _run(args, raw, debug, program="npa-sop", own_process=argv is None)


def build_tui_parser() -> NpaArgumentParser:
    from npa_sop_tui.cli import tui_cmds

    parser = NpaArgumentParser(
        prog="npa-sop",
        description=tui_cmds.DESCRIPTION,
        epilog="npa-sop serve --help: share the app with a teammate's browser (read-only).",
    )
    parser.add_argument("--version", action="version", version=f"npa-sop-tui {__version__}")
    add_debug_flag(parser)
    tui_cmds.configure(parser)
    return parser


def build_serve_parser() -> NpaArgumentParser:
    from npa_sop_tui.cli import serve_cmds

    parser = NpaArgumentParser(prog="npa-sop serve", description=serve_cmds.DESCRIPTION)
    add_debug_flag(parser)
    serve_cmds.configure(parser)
    return parser


def _run(
    args: argparse.Namespace, raw: list[str], debug: bool, *, program: str, own_process: bool
) -> int:
    import contextlib

    from npa_sop_tui.cli.interrupts import ignore_stops_until_exit, signals_restored

    # A command called in-process (tests, embedders: `main([...])`) gives the caller its own
    # signal handlers back. As the process's own command (`npa …`), a stop signal after the
    # last operation stays swallowed until the process is gone: putting the default back
    # would let a SIGTERM during the exit kill it by the signal instead of its exit code.
    restored = contextlib.nullcontext() if own_process else signals_restored()
    with restored:
        try:
            return _run_command(args, raw, debug, program=program)
        finally:
            _release_state_keys()
            if own_process:
                ignore_stops_until_exit()


def _release_state_keys() -> None:
    """Delete the state bucket's access key if this command minted one (they expire anyway;
    a key nobody needs any more should not wait for that)."""
    credentials = sys.modules.get("npa_sop_tui.state.credentials")
    if credentials is not None:  # never imported: nothing was minted
        credentials.release_minted_keys()


def _run_command(args: argparse.Namespace, raw: list[str], debug: bool, *, program: str) -> int:
    from npa_sop_tui.cli.common import run_handler

    if not (debug or _debug_env()):
        return run_handler(args)
    from npa_sop_tui.home import debuglog

    args.debug = True
    path = debuglog.start(raw, program=program)
    try:
        code = run_handler(args)
        debuglog.log.info("exit %s", code)
    except BaseException as exc:
        debuglog.note_error(exc)
        if path is not None:
            sys.stderr.write(f"debug log: {path}\n")
        raise
    finally:
        debuglog.stop()
    if code and path is not None:
        sys.stderr.write(f"debug log: {path}\n")
    return code


def _debug_env() -> bool:
    return os.environ.get("NPA_DEBUG", "").strip().lower() in ("1", "true", "yes", "on")
