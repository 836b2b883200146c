"""The `npa` argument parser, built only as far as one call needs.

Building every subcommand's arguments costs more than parsing them, and a call runs one
command. So `build_parser(only=...)` builds the named command fully and skips the rest; the
whole tree is built only when it is shown (`--help` without a command, a mistyped command,
shell completion). Argument errors honour `--output json`: one JSON error document on stdout.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from npa_sop_tui import __version__
from npa_sop_tui.errors import EXIT_BAD_INPUT

SOPERATOR = "soperator"


def json_requested(argv: Sequence[str]) -> bool:
    """Whether `argv` asks for JSON output, read without parsing (for argument errors)."""
    args = list(argv)
    if "--" in args:
        args = args[: args.index("--")]
    for i, arg in enumerate(args):
        nxt = args[i + 1] if i + 1 < len(args) else ""
        if arg in ("--output", "-o") and nxt == "json":
            return True
        if arg in ("--output=json", "-ojson", "-o=json"):
            return True
    return False


def _terminal_columns() -> int:
    """`shutil.get_terminal_size().columns`, without importing shutil."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's help formatter, given the terminal width: left to find it, it imports
    shutil (and with it zlib, bz2 and lzma) on every call, since argparse makes a formatter
    for each argument it adds, though only --help and usage errors print anything."""

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        width = _terminal_columns() - 2 if width is None else width  # as argparse does
        super().__init__(prog, indent_increment, max_help_position, width)


class NpaArgumentParser(argparse.ArgumentParser):
    """argparse with two changes: a usage error in a `--output json` call is also written as
    one JSON document on stdout, so scripts always get one (exit code 2 as usual); and the
    help formatter does not import shutil (`_HelpFormatter`)."""

    argv: Sequence[str] = ()  # the call's arguments, set by `parse` (subparsers share it)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        hint = _suggestion(message) or f"see `{_help_for(self.prog)} --help`"
        if json_requested(NpaArgumentParser.argv):
            from npa_sop_tui.cli.common import emit_json

            emit_json(
                {
                    "ok": False,
                    "error": "UsageError",
                    "message": f"{self.prog}: {message}",
                    "hint": hint,
                    "usage": " ".join(self.format_usage().split()),
                }
            )
        self.print_usage(sys.stderr)
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n  hint: {hint}\n")


def _help_for(prog: str) -> str:
    """The help that answers an error: the named command's, not the top level's (argparse
    reports unknown arguments from the top-level parser, whatever command they came with)."""
    words = command_path(NpaArgumentParser.argv)
    if prog == "npa" and len(words) == 2 and words[0] == SOPERATOR:
        return f"npa {SOPERATOR} {words[1]}"
    return prog


# Options every `npa soperator` command takes, also accepted before the command name
# (`npa soperator --output json list`), as users of kubectl-style tools write them.
GLOBAL_VALUE_OPTIONS = ("--output", "-o")
GLOBAL_FLAGS = ("--sandbox",)


def hoist_global_options(argv: Sequence[str]) -> list[str]:
    """`npa soperator --output json --sandbox list …` → `npa soperator list --output json
    --sandbox …`: options given between the group and the command move after the command."""
    args = list(argv)
    if len(args) < 2 or args[0] != SOPERATOR:
        return args
    moved: list[str] = []
    i = 1
    while i < len(args) and args[i].startswith("-") and args[i] != "--":
        arg = args[i]
        name = arg.split("=", 1)[0]
        if name in GLOBAL_VALUE_OPTIONS and "=" not in arg and i + 1 < len(args):
            moved += [arg, args[i + 1]]
            i += 2
        elif name in GLOBAL_VALUE_OPTIONS or arg in GLOBAL_FLAGS or arg.startswith("-ojson"):
            moved.append(arg)
            i += 1
        else:
            return args  # --help, a typo: argparse reports it as it is
    if not moved or i >= len(args):
        return args
    return [SOPERATOR, args[i], *moved, *args[i + 1 :]]


def _suggestion(message: str) -> str | None:
    """A did-you-mean hint for argparse's "invalid choice: 'x' (choose from …)" errors."""
    import re

    match = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if not match:
        return None
    from npa_sop_tui.spec.findings import did_you_mean

    choices = re.findall(r"'([^']*)'", match.group(2))
    return did_you_mean(match.group(1), choices)


class _Skipped:
    """Stands in for the parsers of commands this call does not run (a module registers
    several): accepts any call and attribute, builds nothing."""

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: self

    def __setattr__(self, name: str, value: Any) -> None:
        pass


class _OnlyOne:
    """A subparsers action that builds only the `wanted` command."""

    def __init__(self, real: argparse._SubParsersAction, wanted: str) -> None:  # type: ignore[type-arg]
        self.real = real
        self.wanted = wanted
        self.built = False

    def add_parser(self, name: str, **kwargs: Any) -> Any:
        if name == self.wanted:
            self.built = True
            return self.real.add_parser(name, **kwargs)
        return _Skipped()


def command_path(argv: Sequence[str]) -> tuple[str, ...]:
    """The group and command named in `argv` (`("soperator", "validate")`), up to two words:
    the first two arguments that are not options. Only flags come before them."""
    words: list[str] = []
    for arg in argv:
        if arg == "--":
            break
        if not arg.startswith("-"):
            words.append(arg)
            if len(words) == 2:
                break
    return tuple(words)


def build_parser(only: Sequence[str] = ()) -> NpaArgumentParser:
    """The parser; with `only` = (group, command) just that command is built fully."""
    parser, complete = _build(tuple(only))
    if not complete:  # a mistyped or partial command: build all so argparse can list them
        parser, _ = _build(())
    return parser


# Which module registers each `npa soperator` command, so a call imports only its own.
# (tests/cli checks this table against what the modules register.)
SOPERATOR_MODULES: dict[str, str] = {
    "validate": "spec_cmds",
    "render": "spec_cmds",
    "schema": "spec_cmds",
    "example": "spec_cmds",
    "plan": "lifecycle_cmds",
    "deploy": "lifecycle_cmds",
    "destroy": "lifecycle_cmds",
    "list": "inventory_cmds",
    "adopt": "inventory_cmds",
    "preflight": "cloud_cmds",
    "catalog": "cloud_cmds",
    "set": "set_cmd",
    "state": "state_cmds",
    "unlock": "state_cmds",
    "status": "status_cmds",
    "ssh": "status_cmds",
    "nodes": "slurm_cmds",
    "jobs": "slurm_cmds",
    "drain": "slurm_cmds",
    "resume": "slurm_cmds",
    "cancel": "slurm_cmds",
    "run": "run_cmds",
    "logs": "run_cmds",
    "config": "config_cmds",
    "tui": "tui_cmds",
    "serve": "serve_cmds",
    "report": "report_cmds",
    "tools": "agent_cmds",
    "mcp": "mcp_cmds",
    "completion": "completion_cmds",
}
GROUP_MODULES: dict[str, str] = {"fleet": "fleet_cmds", "workflow": "workflow_cmds"}


def _modules(names: Sequence[str]) -> list[Any]:
    import importlib

    unique = list(dict.fromkeys(names))
    return [importlib.import_module(f"npa_sop_tui.cli.{name}") for name in unique]


def _build(only: tuple[str, ...]) -> tuple[NpaArgumentParser, bool]:
    group = only[0] if only else None
    command = only[1] if len(only) > 1 else None
    parser = NpaArgumentParser(
        prog="npa",
        description="Nebius Physical AI tools: Soperator (Slurm on Kubernetes) clusters.",
    )
    parser.add_argument("--version", action="version", version=f"npa-sop-tui {__version__}")
    add_debug_flag(parser)
    groups = parser.add_subparsers(dest="group", metavar="GROUP")
    groups.required = True

    soperator = groups.add_parser(
        SOPERATOR,
        help="Soperator clusters: validate, render, plan, deploy, status, destroy",
        description="Stand up and watch Slurm clusters on Kubernetes (Nebius Soperator).",
        epilog="Options most commands take: --sandbox (the whole flow on this machine, no "
        "cloud account: its own clusters under NPA_HOME/sandbox) and --output json (one JSON "
        "document for scripts; errors too). They may also come before the command: "
        "`npa soperator --output json list`. `npa soperator COMMAND --help` shows the rest.",
    )
    commands = soperator.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True
    if group == SOPERATOR and command in SOPERATOR_MODULES:
        only_commands = _OnlyOne(commands, command)
        for module in _modules([SOPERATOR_MODULES[command]]):
            module.register(only_commands)
        return parser, only_commands.built
    if group in GROUP_MODULES:
        only_groups = _OnlyOne(groups, group)
        for module in _modules([GROUP_MODULES[group]]):
            module.register(only_groups)
        return parser, only_groups.built
    # No command named, or one we do not know: everything, so argparse can list them.
    for module in _modules(list(SOPERATOR_MODULES.values())):
        module.register(commands)
    for module in _modules(list(GROUP_MODULES.values())):
        module.register(groups)
    return parser, True


def add_debug_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--debug",
        action="store_true",
        help="write a debug log (rotating, secrets masked) under NPA_HOME/logs and say where; "
        "also NPA_DEBUG=1; accepted anywhere before `--`",
    )


def split_debug(argv: Sequence[str]) -> tuple[list[str], bool]:
    """`argv` without `--debug` (a global flag, accepted anywhere before `--`), and whether
    it was there."""
    args = list(argv)
    end = args.index("--") if "--" in args else len(args)
    head = [a for a in args[:end] if a != "--debug"]
    return head + args[end:], len(head) != end
