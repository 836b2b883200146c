"""Which environment a front door runs in: the real cloud's, or the sandbox's on this machine.

Kept apart from `environment.py` so the core environment never imports the sandbox's, which
builds on it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from npa_sop_tui.environment import Environment
from npa_sop_tui.home.settings import Settings, resolve_settings


def open_environment(
    *,
    sandbox: bool = False,
    flags: Mapping[str, Any] | None = None,
    settings: Settings | None = None,
    **sandbox_options: Any,
) -> Environment:
    """The environment a front door runs in. `flags` are the caller's explicit settings.

    The sandbox's settings are resolved inside its own npa home, so its config never mixes
    with the user's real one.
    """
    if sandbox:
        from npa_sop_tui.sandbox.environment import SandboxEnvironment

        return SandboxEnvironment(flags=flags, settings=settings, **sandbox_options)
    return Environment(settings if settings is not None else resolve_settings(flags))
