"""`npa soperator config show`: every setting, its value, and where it came from."""

from __future__ import annotations

import argparse
from typing import Any

from npa_sop_tui.cli.common import add_output_flag, emit_json, wants_json
from npa_sop_tui.safe_text import safe_text


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    config = subparsers.add_parser(
        "config",
        help="show the settings npa uses and where each one comes from",
        description=(
            "Settings resolve as flags > environment (NPA_*) > config.yaml > defaults. "
            "config.yaml may also hold the existing npa's `projects:` sections: identity "
            "comes from `--project ALIAS`'s, else from default_project's when nothing else "
            "sets it. `config show` prints each value with its source (file and section); "
            "secrets show as <set>."
        ),
    )
    actions = config.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    show = actions.add_parser("show", help="print every setting with its source")
    show.add_argument(
        "--sandbox", action="store_true", help="the sandbox's settings (its own npa home)"
    )
    show.add_argument(
        "--project",
        metavar="ALIAS",
        help="read identity from this `projects:` section (the existing npa's), or a project ID",
    )
    add_output_flag(show)
    show.set_defaults(handler=handle_show)


def handle_show(args: argparse.Namespace) -> int:
    from npa_sop_tui.home.settings import resolve_settings

    settings = resolve_settings({"project": args.project})
    rows = [*settings.rows(), _state_keys_row(settings)]
    if wants_json(args):
        emit_json(
            {
                "ok": True,
                "config_file": str(settings.config_file) if settings.config_file else None,
                "settings": rows,
            }
        )
        return 0
    print(f"config file: {safe_text(settings.config_file)}")
    width = max(len(row["key"]) for row in rows)
    # a value is one line whatever it holds (an environment variable, a file's text)
    values = [safe_text("-" if row["value"] in (None, {}, "") else row["value"]) for row in rows]
    # as wide as the longest value (no wide empty column), at most 40 before the source
    value_width = min(40, max(len(v) for v in values))
    for row, value in zip(rows, values, strict=True):
        source = safe_text(row["source"])
        print(f"  {row['key'].ljust(width)}  {value.ljust(value_width)}  {source}")
    return 0


def _state_keys_row(settings: Any) -> dict[str, Any]:
    """Where the state bucket's access key would come from (never the key; nothing minted)."""
    from npa_sop_tui.state.credentials import key_source

    if not settings["state.bucket"] and settings["state.backend"] != "s3":
        return {"key": "state.access_key", "value": None, "source": "not needed (local state)"}
    source = key_source(settings)
    return {"key": "state.access_key", "value": source.kind, "source": source.detail}
