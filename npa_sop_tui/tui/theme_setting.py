"""The app's theme: applied from config.yaml (`tui.theme`) and remembered when changed.

A theme picked in the command palette is written back to the config file the app read, so
the next start looks the same. An unknown name in the config is reported on screen (with
the names that exist) instead of being ignored silently.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.app import App

THEME_KEYS = ("tui", "theme")


def follow_theme(app: App[Any], configured: str | None, config_path: Path | None) -> None:
    """Apply `configured` (reporting an unknown name) and save later changes to
    `config_path` (not saved when None)."""
    if configured:
        if configured in app.available_themes:
            app.theme = configured
        else:
            known = ", ".join(sorted(app.available_themes))
            where = f"{config_path}: " if config_path else ""
            app.notify(
                f"{where}tui.theme {configured!r} is not a theme; using {app.theme!r}. "
                f"Themes: {known}",
                title="Unknown theme",
                severity="warning",
                timeout=15,
            )
    if config_path is None:
        return
    saved = {"name": app.theme}

    def changed(theme: Any) -> None:
        name = getattr(theme, "name", None)
        if not name or name == saved["name"]:
            return
        saved["name"] = name
        app.run_worker(
            lambda: _save(app, config_path, name),
            thread=True,
            group="config",
            exit_on_error=False,
        )

    app.theme_changed_signal.subscribe(app, changed)


def _save(app: App[Any], config_path: Path, name: str) -> None:
    from npa_sop_tui.errors import NpaError
    from npa_sop_tui.home.config_edit import set_config_value

    try:
        set_config_value(config_path, THEME_KEYS, name)
    except (NpaError, OSError) as exc:
        app.call_from_thread(
            app.notify,
            f"the theme was not saved: {exc}",
            title="Theme",
            severity="warning",
        )
