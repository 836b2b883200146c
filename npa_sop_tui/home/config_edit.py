"""Change one setting in `config.yaml` and keep the rest of the file as the user wrote it.

The app remembers choices made on screen (the theme picked in the command palette) in the
same file people edit by hand, so the edit is a round trip through ruamel.yaml: comments,
key order and flow style (`tui: { theme: null }`) survive. The write is atomic; a file that
is not a YAML mapping is left alone and reported, and so is a file the existing npa wrote too
(its `projects:` and friends): npa's files are never rewritten without the user.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from npa_sop_tui.errors import UsageError
from npa_sop_tui.home.fsutil import atomic_write_text

# Keys only the existing npa writes (home/npa_config.py reads them): a file holding one is
# npa's as much as ours.
NPA_WRITTEN_KEYS = ("projects", "default_project", "default_workbench", "workbenches", "workbench")


def set_config_value(path: Path, keys: Sequence[str], value: Any) -> None:
    """Set `keys` (e.g. ("tui", "theme")) to `value` in the config file at `path`,
    creating the file or the intermediate mappings when missing."""
    from ruamel.yaml import YAML, YAMLError
    from ruamel.yaml.comments import CommentedMap

    yaml = YAML()  # round-trip mode
    yaml.preserve_quotes = True
    from npa_sop_tui.home.bounded_read import Unreadable, read_regular_text
    from npa_sop_tui.spec.yaml_positions import MAX_BYTES, YamlProblem, check_limits

    what = f"{path}: cannot save {'.'.join(keys)}"
    try:  # bounded, regular files only, aliases counted before ruamel builds anything
        text = read_regular_text(path, limit=MAX_BYTES, what="config file", subject="config")
        if text.strip():
            check_limits(text, source=str(path), what="config")
    except Unreadable as exc:
        if not exc.missing:
            raise UsageError(f"{what}: {exc.reason}", hint=exc.hint) from None
        text = ""
    except YamlProblem as exc:
        raise UsageError(f"{what}: {exc.findings[0].render()}") from None
    try:
        data = yaml.load(text) if text.strip() else None
    except YAMLError as exc:
        raise UsageError(
            f"{path}: cannot save {'.'.join(keys)}: the file is not valid YAML ({exc})",
            hint="fix the file; npa changes it only when it reads as a mapping",
        ) from None
    if data is None:
        data = CommentedMap()
    if not isinstance(data, dict):
        raise UsageError(f"{path}: cannot save {'.'.join(keys)}: the file is not a mapping")
    shared = [key for key in NPA_WRITTEN_KEYS if key in data]
    if shared:  # the existing npa's file too: never rewritten without the user
        raise UsageError(
            f"{path}: cannot save {'.'.join(keys)}: the file also holds the existing npa's "
            f"settings ({', '.join(shared)}), and npa-sop-tui does not rewrite them",
            hint=f"to keep it, set {'.'.join(keys)} to {value!r} in the file yourself",
        )
    node: Any = data
    for key in keys[:-1]:
        child = node.get(key)
        if not isinstance(child, dict):
            child = CommentedMap()
            node[key] = child
        node = child
    node[keys[-1]] = value
    out = io.StringIO()
    yaml.dump(data, out)
    atomic_write_text(path, out.getvalue(), mode=0o600)  # under the home: private
