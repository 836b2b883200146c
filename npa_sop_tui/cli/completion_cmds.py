"""`npa soperator completion bash|zsh|fish`: shell completion for `npa` and `npa-sop`.

The scripts come from argcomplete: on <TAB> the shell runs `npa` with `_ARGCOMPLETE` set,
and `complete_if_requested` answers from the full parser before anything else runs.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable

SHELLS = ("bash", "zsh", "fish")
PROGRAMS = ("npa", "npa-sop")

_INSTALL = {
    "bash": 'add to ~/.bashrc: eval "$(npa soperator completion bash)"',
    "zsh": 'add to ~/.zshrc (after compinit): eval "$(npa soperator completion zsh)"',
    "fish": "npa soperator completion fish > ~/.config/fish/completions/npa.fish",
}


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "completion",
        help="print the shell completion script for npa and npa-sop (bash, zsh, fish)",
        description="Print a completion script for npa and npa-sop. "
        + "; ".join(f"{shell}: {how}" for shell, how in _INSTALL.items()),
    )
    p.add_argument("shell", choices=SHELLS, help="the shell to complete in")
    from npa_sop_tui.cli.common import add_output_flag

    add_output_flag(p)  # json: {"shell", "install", "script"}
    p.set_defaults(handler=cmd_completion)


def cmd_completion(args: argparse.Namespace) -> int:
    import argcomplete

    script = argcomplete.shellcode(list(PROGRAMS), shell=args.shell)
    from npa_sop_tui.cli.common import emit_json, wants_json

    if wants_json(args):
        emit_json({"shell": args.shell, "install": _INSTALL[args.shell], "script": script})
        return 0
    sys.stdout.write(script)
    return 0


def complete_if_requested(build: Callable[[], argparse.ArgumentParser]) -> None:
    """When a shell asks for completions, answer them and exit; otherwise return at once."""
    if "_ARGCOMPLETE" not in os.environ:
        return
    import argcomplete

    argcomplete.autocomplete(build())
