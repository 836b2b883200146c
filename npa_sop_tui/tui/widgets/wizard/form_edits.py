"""What each wizard field does to the spec mapping, as plain functions of (mapping, value):
an emptied field removes its key, a field still showing the default of a file that did not
set it changes nothing, and no other key is touched (an opened file keeps every setting the
form has no field for)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from npa_sop_tui.safe_text import safe_markup
from npa_sop_tui.tui.widgets.wizard.steps import DEFAULT_SYSTEM_MIN, OPERATOR_VERSIONS

PRESET_ROLES = {"sys-preset": "system", "ctl-preset": "controller", "login-preset": "login"}
"""The control-plane preset selects, by field id, and the role each sets."""


def edit_field(data: dict[str, Any], field_id: str, value: Any) -> None:
    """Apply field `field_id`'s new `value` (None: a select with nothing chosen)."""
    _EDITS[field_id](data, field_id, value)


def _system_size(data: dict[str, Any], field_id: str, value: Any) -> None:
    control_plane = data["control_plane"]
    system = dict(control_plane.get("system") or {})
    key = "min_size" if field_id == "sys-min" else "max_size"
    text = str(value).strip()
    if not text.lstrip("-").isdigit():
        system.pop(key, None)
    elif key in system or not (key == "min_size" and int(text) == DEFAULT_SYSTEM_MIN):
        system[key] = int(text)  # the shown default of a file without it is no change
    if system != (control_plane.get("system") or {}):
        control_plane["system"] = system


def _role_preset(data: dict[str, Any], field_id: str, value: Any) -> None:
    section = data["control_plane"].setdefault(PRESET_ROLES[field_id], {})
    if value is None:
        section.pop("preset", None)
    else:
        section["preset"] = str(value)


def _switch(key: str) -> Callable[[dict[str, Any], str, Any], None]:
    def edit(data: dict[str, Any], field_id: str, value: Any) -> None:
        data[key] = bool(value)

    return edit


def _rest(data: dict[str, Any], field_id: str, value: Any) -> None:
    if value == "auto":
        data.pop("slurm_rest_enabled", None)
    else:
        data["slurm_rest_enabled"] = value == "on"


def _operator_version(data: dict[str, Any], field_id: str, value: Any) -> None:
    key = "slurm_operator_version"
    # the select shows the default for a file without the key; that is not a change
    if value is not None and (key in data or value != OPERATOR_VERSIONS[0]):
        data[key] = str(value)


def _text(key: str) -> Callable[[dict[str, Any], str, Any], None]:
    def edit(data: dict[str, Any], field_id: str, value: Any) -> None:
        text = str(value or "").strip()
        if text:
            data[key] = text
        else:
            data.pop(key, None)

    return edit


_EDITS: dict[str, Callable[[dict[str, Any], str, Any], None]] = {
    "sys-min": _system_size,
    "sys-max": _system_size,
    **dict.fromkeys(PRESET_ROLES, _role_preset),
    "accounting": _switch("accounting"),
    "apparmor": _switch("use_default_apparmor_profile"),
    "rest": _rest,
    "operator-version": _operator_version,
    "k8s-version": _text("k8s_version"),
    "ng-version": _text("node_group_version"),
}

FIELD_IDS = tuple(_EDITS)
"""Every field edited here (the screen listens to exactly these)."""


def worker_count(data: dict[str, Any]) -> int:
    """Worker nodes the mapping asks for (a size that is not a number yet counts none)."""
    total = 0
    for pool in data.get("workers", []):
        size = pool.get("size", 1)
        total += size if isinstance(size, int) else 0
    return total


def preset_options(cat: Any, role: str, workers: int, current: str | None) -> list[tuple[str, str]]:
    """The presets sufficient for `role` at the sizing tier of `workers`, and the one the
    file names even if it is not (validation flags it instead of losing it)."""
    options = [
        (f"{p.name}  ({p.vcpu} vCPU, {p.memory_gb} GB)", p.name)
        for p in cat.role_presets(role, workers)
    ]
    if current and current not in [v for _, v in options]:
        # the file's own text: an option's prompt is markup, so it is escaped (and safe)
        options.append((f"{safe_markup(current)}  (not sufficient at this size)", current))
    return options
