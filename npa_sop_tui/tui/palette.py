"""The command palette's commands: the app's own first, then the current screen's (its named
commands and every key that applies right now), Textual's generic ones last; each action
once, and no widget cursor keys ("Cursor down", "Bottom"). A read-only session is offered
nothing that writes a file or changes a cluster."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import partial
from typing import Any

from textual.app import SystemCommand
from textual.screen import Screen


def palette_commands(
    app: Any, screen: Screen[Any], textual_commands: Iterable[SystemCommand]
) -> Iterator[SystemCommand]:
    """Every command for `screen`; `textual_commands` are Textual's own."""
    if not app.read_only:
        yield SystemCommand("New cluster", "Start the wizard", app.action_new_cluster)
        yield SystemCommand("Open cluster.yaml", "Edit a spec in the wizard", app.action_open_spec)
    if not app.sandbox:
        yield SystemCommand("Sandbox", "Run the whole flow on this machine", app.action_sandbox)
    # every key of the current screen that applies right now is a command too, unless
    # the screen names it itself (home's "Deploy alpha"), or it is one of those above
    seen = {"quit", "quit_key", "help", "help_anywhere", "command_palette", "new", "open"}
    seen.add("sandbox")
    titles = {"New cluster", "Open cluster.yaml", "Sandbox"}
    commands = getattr(screen, "palette_commands", None)
    for command in commands() if callable(commands) else ():
        titles.add(command.title)
        seen.add(getattr(command.callback, "__name__", "").removeprefix("action_"))
        yield command
    for active in screen.active_bindings.values():
        binding = active.binding
        if not active.enabled or not binding.description or binding.action in seen:
            continue
        if not binding.id:  # widgets' own navigation keys: not commands
            continue
        seen.add(binding.action)
        titles.add(binding.description)
        yield SystemCommand(
            binding.description,
            f"key {binding.key_display or binding.key}",
            partial(app.run_action, binding.action, active.node),
        )
    for command in textual_commands:
        if command.title not in titles:
            titles.add(command.title)
            yield command
