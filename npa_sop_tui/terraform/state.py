"""Reading a local Terraform state file: the one place that knows its JSON layout.

Only used after Terraform has exited (the file is then complete); while it runs, ask
Terraform (`terraform state list`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

STATE_FILE = "terraform.tfstate"


def read_state(path: Path) -> dict[str, Any] | None:
    """The parsed state at `path`, or None when there is none or it is unreadable."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def instances(state: dict[str, Any]) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """(resource, instance) pairs of a state document."""
    for res in state.get("resources") or []:
        for inst in res.get("instances") or []:
            yield res, inst


def address(res: dict[str, Any], inst: dict[str, Any]) -> str:
    """Terraform's address of one instance: `module.m.type.name["key"]`, `data.…`, `[0]`."""
    prefix = f"{res['module']}." if res.get("module") else ""
    kind = "data." if res.get("mode") == "data" else ""
    base = f"{prefix}{kind}{res['type']}.{res['name']}"
    key = inst.get("index_key")
    if key is None:
        return base
    if isinstance(key, int):
        return f"{base}[{key}]"
    return f"{base}[{json.dumps(key)}]"


def resource_addresses(install_dir: Path, *, managed_only: bool = False) -> list[str] | None:
    """Sorted addresses in an installation's local state; None when it has no readable state."""
    state = read_state(install_dir / STATE_FILE)
    if state is None:
        return None
    return sorted(
        address(res, inst)
        for res, inst in instances(state)
        if not managed_only or res.get("mode") == "managed"
    )
