"""Edit a cluster.yaml in place: comments, key order, quoting and flow style survive.

    doc = SpecDocument.read(path)
    doc.set("workers[1].size", 4)
    new_text = doc.render()          # == doc.original when nothing changed (byte-identical)
    doc.write()                      # validated, atomic, to the path it was read from

How only changed lines change: ruamel.yaml's round-trip mode keeps comments, order, quotes
and flow style, but it normalises some spacing (`{ a: 1 }` → `{a: 1}`). So the edited
document is dumped twice: once as loaded (the *baseline*) and once with the edits. Lines
where baseline and edit agree are taken from the original text, lines the edit changed from
the new dump (a three-way line merge, see `merge_lines`). An unchanged document renders to
the original text exactly. The merge is checked by parsing it back; if it ever disagreed with
the edited data, the full round-trip dump is used instead (correct, if a little noisier).

This module only edits text. `validated_text` runs the spec model and rules on the result
and raises `SpecError` (file:line) when it is invalid; `write` writes nothing in that case.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from npa_sop_tui.spec.derived import SECRET_FIELDS
from npa_sop_tui.spec.findings import error
from npa_sop_tui.spec.line_merge import merge_lines
from npa_sop_tui.spec.model import VERSION_FIELDS, SpecError, parse_spec_text
from npa_sop_tui.spec.spec_paths import PathError, format_path, parse_path
from npa_sop_tui.spec.yaml_comments import emptied, put_lead, put_tail, take_tail
from npa_sop_tui.spec.yaml_head import dump_body, split_head
from npa_sop_tui.spec.yaml_style import closest_style, round_trip_yaml

SECRET_KEYS = SECRET_FIELDS
"""Keys whose values are secrets: never written into cluster.yaml (given at run time)."""


@dataclass
class SpecDocument:
    """A spec file's text and its round-trip tree; edits go to the tree."""

    original: str
    path: Path | None = None
    data: Any = None
    changed: list[str] = field(default_factory=list)
    """Field paths set or removed since reading, in order."""
    on_disk: bool = False
    """`original` is what the file at `path` held when read: `write` refuses to replace
    that file once it holds anything else (another editor saved it meanwhile)."""

    @classmethod
    def parse(cls, text: str, path: Path | None = None) -> SpecDocument:
        """The document of `text`; `SpecError` when it is not YAML, or (before ruamel builds
        anything) larger, deeper or more alias-expanded than `validate` accepts."""
        from npa_sop_tui.spec.yaml_positions import YamlProblem, check_limits, load_yaml_mapping

        source = str(path or "<text>")
        if text.strip():
            try:
                check_limits(text, source=source, what="spec")
            except YamlProblem as exc:
                raise SpecError(exc.findings) from None
        y = round_trip_yaml()
        try:
            data = y.load(text) if text.strip() else None
        except Exception as exc:
            try:  # validate's reading names the field and place (and hides a secret value)
                load_yaml_mapping(text, source=source, what="spec")
            except YamlProblem as problem:
                raise SpecError(problem.findings) from None
            where = getattr(exc, "problem_mark", None)
            line = where.line + 1 if where is not None else None
            raise SpecError(
                [
                    error("", f"not valid YAML: {getattr(exc, 'problem', exc)}").at(
                        str(path or "<text>"), line, None
                    )
                ]
            ) from None
        if data is None:
            data = _comments_only(split_head(text)[1])
        if not isinstance(data, dict):
            raise SpecError([error("", "spec must be a mapping (key: value)")])
        return cls(original=text, path=path, data=data)

    @classmethod
    def read(cls, path: str | Path) -> SpecDocument:
        """The document of the spec file at `path`: a regular file of at most 1 MiB (the
        same checks and messages as `validate`; devices and FIFOs are refused at once)."""
        from npa_sop_tui.spec.reading import read_spec_file

        path = Path(path)
        doc = cls.parse(read_spec_file(path, str(path)), path)
        doc.on_disk = True
        return doc

    # -- edits ---------------------------------------------------------------------------

    def get(self, path: str | Sequence[str | int]) -> Any:
        parts = parse_path(path) if isinstance(path, str) else list(path)
        node: Any = self.data
        for part in parts:
            node = _child(node, part, format_path(parts))
        return node

    def set(self, path: str | Sequence[str | int], value: Any) -> None:
        """Set one field; missing mappings on the way are created. Lists are not grown."""
        parts = parse_path(path) if isinstance(path, str) else list(path)
        key = parts[-1]
        if isinstance(key, str) and key in SECRET_KEYS:
            raise PathError(
                f"{format_path(parts)} holds a secret and is never written to cluster.yaml; "
                "give it at run time (NPA_CAPACITY_BLOCK_GROUPS or --capacity-block-group)"
            )
        parent = self._parent(parts, create=True)
        value = _new_value(key, value, _existing(parent, key))
        if isinstance(key, int):
            if not isinstance(parent, list) or not 0 <= key < len(parent):
                size = len(parent) if isinstance(parent, list) else 0
                raise PathError(
                    f"{format_path(parts)}: {format_path(parts[:-1])} has {size} item(s)"
                    + (f" (0–{size - 1})" if size else "")
                )
            if _same(parent[key], value):
                return
            parent[key] = value
        else:
            if not isinstance(parent, dict):
                raise PathError(f"{format_path(parts)}: {format_path(parts[:-1])} is not a mapping")
            if key in parent and _same(parent[key], value):
                return
            if key not in parent and parent:  # appended: it now ends the block
                last = list(parent)[-1]
                tail = take_tail(parent, last)
                parent[key] = value
                put_tail(parent, key, tail)
            else:
                parent[key] = value
        self.changed.append(format_path(parts))

    def delete(self, path: str | Sequence[str | int]) -> None:
        parts = parse_path(path) if isinstance(path, str) else list(path)
        parent = self._parent(parts, create=False)
        key = parts[-1]
        if isinstance(parent, dict) and key in parent:
            keys = list(parent)
            previous = keys[keys.index(key) - 1] if keys.index(key) else None
        elif isinstance(parent, list) and isinstance(key, int) and 0 <= key < len(parent):
            previous = key - 1 if key else None
        else:
            return
        tail = take_tail(parent, key)  # blank lines / comments after it stay in the file
        del parent[key]
        if previous is not None:
            put_tail(parent, previous, tail, replace_blank=True)
        elif parent:  # the lines after a first item lead the next one in: they stay above it
            put_lead(parent, tail)
        elif len(parts) > 1:  # emptied: its comments go below its `key: []` line
            emptied(self.get(parts[:-2]), parts[-2], tail)
        self.changed.append(format_path(parts))

    def _parent(self, parts: list[str | int], *, create: bool) -> Any:
        from ruamel.yaml.comments import CommentedMap

        node: Any = self.data
        for i, part in enumerate(parts[:-1]):
            here = format_path(parts[: i + 1])
            if isinstance(part, str) and isinstance(node, dict) and part not in node and create:
                node[part] = CommentedMap()
            node = _child(node, part, here)
        return node

    def apply_changes(self, before: Mapping[str, Any], after: Mapping[str, Any]) -> None:
        """Apply what changed from `before` to `after` (plain data, e.g. the wizard's form).

        Only differing fields are touched, so what the user did not change keeps its exact
        text even when `before` is a normalised reading of the file. Lists of named items
        (worker pools) are matched by name, so removing one pool removes its lines only.
        """
        self._apply([], before, after)

    def _apply(self, at: list[str | int], before: Any, after: Any) -> None:
        if isinstance(before, Mapping) and isinstance(after, Mapping):
            for key in before:
                if key not in after:
                    self.delete([*at, key])
            for key, value in after.items():
                if key in before:
                    self._apply([*at, key], before[key], value)
                elif key not in SECRET_KEYS:
                    self.set([*at, key], _without_secrets(plain(value)))
            return
        if (
            isinstance(before, list)
            and isinstance(after, list)
            and self._apply_list(at, before, after)
        ):
            return
        if not _same(before, after):
            self.set(at, plain(after))

    def _apply_list(self, at: list[str | int], before: list[Any], after: list[Any]) -> bool:
        names_b = [_name(x) for x in before]
        names_a = [_name(x) for x in after]
        if len(before) == len(after) and (None in names_b or names_a == names_b):
            for i, (b, a) in enumerate(zip(before, after, strict=True)):
                self._apply([*at, i], b, a)
            return True
        if None in names_b or None in names_a or len(set(names_a)) != len(names_a):
            return False
        kept = [n for n in names_b if n in names_a]
        if kept != [n for n in names_a if n in names_b]:
            return False  # reordered: the whole list is rewritten
        for i in reversed(range(len(before))):
            if names_b[i] not in names_a:
                self.delete([*at, i])
        node = self.get(at)
        for i, name in enumerate(names_a):
            if name in names_b:
                self._apply([*at, i], before[names_b.index(name)], after[i])
            else:
                tail = take_tail(node, i - 1) if i == len(node) and i else ""
                node.insert(i, _new_value(i, _without_secrets(plain(after[i]))))
                put_tail(node, i, tail)
                self.changed.append(format_path([*at, i]))
        return True

    # -- output --------------------------------------------------------------------------

    def render(self) -> str:
        """The document's text: the original when nothing changed, else a minimal edit."""
        if not self.changed:
            return self.original
        head, body = split_head(self.original)
        explicit = not head and self.original.lstrip().startswith("---")
        head = _with_newline(head)  # the `---`/directive lines the dump would drop or move
        loaded = SpecDocument.parse(self.original).data  # as read: the merge's baseline
        style = closest_style(self.original, loaded)
        edited = dump_body(self.data, style, explicit, head)
        baseline = dump_body(loaded, style, explicit, head)
        merged = head + merge_lines(body, baseline, edited)
        try:
            agrees = plain(round_trip_yaml().load(merged)) == plain(self.data)
        except Exception:  # the merge mixed two indentations into something unreadable
            agrees = False
        return merged if agrees else head + edited  # if not, ruamel's whole dump: correct, noisier

    def diff(self, *, label: str | None = None) -> str:
        """Unified diff from the original text to `render()` ("" when unchanged), every
        secret in it masked (`_mask_secrets`): a changed line's neighbours are shown too,
        and a capacity block group ID beside the edited size must not be among them."""
        name = label or str(self.path or "cluster.yaml")
        if self.render() == self.original:
            return ""
        text = "".join(
            difflib.unified_diff(
                # both sides end in a newline: else a file without one would show its last
                # line glued to the next diff line (`-a: 1+a: 2`)
                _with_newline(self.original).splitlines(keepends=True),
                _with_newline(self.render()).splitlines(keepends=True),
                fromfile=f"{name} (on disk)",
                tofile=f"{name} (after)",
            )
        )
        secrets = _secret_values(SpecDocument.parse(self.original).data) | _secret_values(self.data)
        return _mask_secrets(text, secrets)

    def validated_text(self, *, capacity: dict[str, str] | None = None) -> str:
        """`render()`, after checking that it is a valid spec (`SpecError` with lines if not)."""
        text = self.render()
        parse_spec_text(text, source=str(self.path or "<spec>"), capacity=capacity)
        return text

    def write(self, path: Path | None = None, *, capacity: dict[str, str] | None = None) -> Path:
        """Validate, then write atomically to `path` (default: where it was read from): a
        symlink's target is written, its mode and owner kept (`file_edit`); the file it was
        read from must still hold what was read (`FileChanged` if not, nothing written)."""
        from npa_sop_tui.home.file_edit import edit_target, replace_checked

        target = Path(path or self.path or "cluster.yaml")
        text = self.validated_text(capacity=capacity)
        if text != self.original or not target.exists():
            same = (
                self.on_disk
                and self.path is not None
                and edit_target(self.path) == edit_target(target)
            )
            expected = self.original.encode("utf-8") if same else None
            replace_checked(target, text.encode("utf-8"), expected=expected)
            self.on_disk = True
        self.original = text
        self.path = target
        self.changed = []
        return target


SECRET_MASK = "<redacted>"
# `capacity_block_group: <value>` in block or flow style: the value up to the end of the
# line, a comma or a closing brace (a comment after it is kept)
_SECRET_ENTRY = re.compile(
    r"(\b(?:" + "|".join(re.escape(k) for k in sorted(SECRET_KEYS)) + r")\s*:[ \t]*)"
    r"((?:\"[^\"\n]*\"|'[^'\n]*'|[^,}#\n])*)"
)


def _secret_values(data: Any) -> set[str]:
    """Every value held under a secret key anywhere in `data`, as text."""
    found: set[str] = set()
    if isinstance(data, Mapping):
        for key, value in data.items():
            if key in SECRET_KEYS and value not in (None, ""):
                found.add(str(value))
            found |= _secret_values(value)
    elif isinstance(data, list):
        for item in data:
            found |= _secret_values(item)
    return found


def _mask_secrets(text: str, secrets: set[str]) -> str:
    """`text` (YAML or a diff of it) with every secret masked: each known value wherever it
    is, and whatever is written after a secret key (quoted, escaped or not)."""
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, SECRET_MASK)
    return _SECRET_ENTRY.sub(
        lambda m: m.group(1) + SECRET_MASK if m.group(2).strip() else m.group(0), text
    )


def _with_newline(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"


def _comments_only(text: str) -> Any:
    """An empty tree holding `text`'s comments (no field yet) above its first field."""
    from ruamel.yaml.comments import CommentedMap
    from ruamel.yaml.error import CommentMark
    from ruamel.yaml.tokens import CommentToken

    data = CommentedMap()
    if text.strip() and all(line.lstrip()[:1] in ("", "#") for line in text.splitlines()):
        data.ca.comment = [None, [CommentToken(_with_newline(text), CommentMark(0))]]
    return data


def _child(node: Any, part: str | int, where: str) -> Any:
    if isinstance(part, int):
        if not isinstance(node, list):
            raise PathError(f"{where}: not a list")
        if not 0 <= part < len(node):
            raise PathError(f"{where}: the list has {len(node)} item(s)")
        return node[part]
    if not isinstance(node, dict):
        raise PathError(f"{where}: not a mapping")
    if part not in node:
        raise PathError(f"{where}: no such field in the file")
    return node[part]


def _name(item: Any) -> str | None:
    return str(item["name"]) if isinstance(item, Mapping) and "name" in item else None


def _same(a: Any, b: Any) -> bool:
    """Equal values of the same kind (True is not 1, "3" is not 3)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, str) != isinstance(b, str):
        return False
    return bool(plain(a) == plain(b))


def plain(value: Any) -> Any:
    """ruamel's commented types → plain dicts/lists/scalars (for comparing and inserting)."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    return value


def _without_secrets(value: Any) -> Any:
    """Plain `value` without its secret keys at any depth: a pool the wizard adds carries
    the revealed capacity ID, which is given at run time, never written."""
    if isinstance(value, dict):
        return {k: _without_secrets(v) for k, v in value.items() if k not in SECRET_KEYS}
    if isinstance(value, list):
        return [_without_secrets(v) for v in value]
    return value


def _existing(parent: Any, key: str | int) -> Any:
    if isinstance(parent, dict) and key in parent:
        return parent[key]
    if isinstance(parent, list) and isinstance(key, int) and 0 <= key < len(parent):
        return parent[key]
    return None


def _new_value(key: str | int, value: Any, old: Any = None) -> Any:
    """A value as it should be written: in the quoting of the value it replaces, else version
    strings double-quoted (YAML would read 1.30 as 1.3); new mappings in block style."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString, ScalarString

    quotable = isinstance(value, str) or (key in VERSION_FIELDS and not isinstance(value, bool))
    if isinstance(old, ScalarString) and quotable:
        return type(old)(str(value))
    if isinstance(key, str) and key in VERSION_FIELDS and isinstance(value, str | int | float):
        return DoubleQuotedScalarString(str(value))
    if isinstance(value, Mapping) and not isinstance(value, CommentedMap):
        out = CommentedMap()
        for k, v in value.items():
            out[k] = _new_value(k, v)
        return out
    if isinstance(value, list) and not isinstance(value, CommentedSeq):
        seq = CommentedSeq()
        seq.extend(_new_value(i, v) for i, v in enumerate(value))
        return seq
    return value
