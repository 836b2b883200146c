"""The help's text: the keys of the screen in front, as the footer shows them (widgets'
own cursor keys left out), one line per action with every key bound to it."""

from __future__ import annotations

from typing import Any

from textual.screen import Screen


def key_help(app: Any, screen: Screen[Any]) -> str:
    # the keys the footer shows (not widgets' cursor keys), one line per action
    keys: dict[str, list[str]] = {}
    described: dict[str, str] = {}
    for active in screen.active_bindings.values():
        binding = active.binding
        # ours all have ids; widgets' own cursor keys have none and are left out
        if not (binding.show or binding.id) or not binding.description:
            continue
        if not active.enabled:
            continue
        shown = binding.key_display or app.get_key_display(binding)
        keys.setdefault(binding.action, [])
        if shown not in keys[binding.action]:
            keys[binding.action].append(shown)
        described[binding.action] = binding.tooltip or binding.description
    lines: list[str] = []
    for action, shown_keys in keys.items():
        line = f"{' / '.join(shown_keys):>10}  {described[action]}"
        if line not in lines:  # the same key bound on a widget and its container
            lines.append(line)
    if len(screen.focus_chain) > 1:  # with one focus target tab goes nowhere
        lines.append(f"{'tab':>10}  Next field (shift+tab: previous)")
    return "\n".join(lines)
