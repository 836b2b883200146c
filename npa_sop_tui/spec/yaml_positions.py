"""YAML → plain Python data, remembering where every key and value was written.

PyYAML's loaders drop positions and keep the last of two duplicate keys silently. Specs need
both: every error points at `file:line:col`, and a duplicate key is an error. So the text is
*composed* into nodes (which carry marks) and turned into data here, recording positions by
field path (`workers[1].fabric`) as it goes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from npa_sop_tui.spec.findings import Finding, error
from npa_sop_tui.spec.yaml_syntax import SAFE_LOADER, control_characters, syntax_error_finding

MAX_BYTES = 1024 * 1024
MAX_DEPTH = 64
# Aliases can expand a small file exponentially ("billion laughs"); a real spec has a few
# hundred values, so stop well before that costs anything.
MAX_VALUES = 50_000

_STR = "tag:yaml.org,2002:str"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_NUMERIC = ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float")
# How PyYAML's own constructors fail on some tagged values: `!!bool maybe` (KeyError),
# `!!timestamp soon` (AttributeError), `!!int ''` (IndexError)
_CONSTRUCTOR_SLIPS = (KeyError, AttributeError, IndexError)


class YamlProblem(Exception):
    """The text is not a single YAML mapping we can read; `findings` say why and where."""

    def __init__(self, findings: list[Finding]) -> None:
        super().__init__("; ".join(f.render() for f in findings))
        self.findings = findings


@dataclass
class Positions:
    """Where each field path was written (1-based line and column)."""

    source: str
    values: dict[str, tuple[int, int]] = field(default_factory=dict)
    keys: dict[str, tuple[int, int]] = field(default_factory=dict)
    # Source text of numeric scalars, so `k8s_version: 1.30` can be read as "1.30", not 1.3.
    numeric_text: dict[str, str] = field(default_factory=dict)

    def lookup(self, path: str, *, prefer_key: bool = False) -> tuple[int, int] | None:
        """The position of `path`, else of its nearest written ancestor."""
        current = path
        while True:
            first, second = (self.keys, self.values) if prefer_key else (self.values, self.keys)
            pos = first.get(current) or second.get(current)
            if pos is not None:
                return pos
            if not current:
                return None
            current = parent_path(current)

    def place(self, finding: Finding, *, prefer_key: bool = False) -> Finding:
        if finding.line is not None:
            return finding
        pos = self.lookup(finding.path, prefer_key=prefer_key)
        if pos is None:
            return finding.at(self.source, None, None)
        return finding.at(self.source, pos[0], pos[1])


@dataclass
class YamlDocument:
    data: dict[str, Any]
    positions: Positions


def join_path(parent: str, part: str | int) -> str:
    if isinstance(part, int):
        return f"{parent}[{part}]"
    return f"{parent}.{part}" if parent else part


def parent_path(path: str) -> str:
    if path.endswith("]"):
        return path[: path.rindex("[")]
    return path.rsplit(".", 1)[0] if "." in path else ""


def _secret_path(path: str) -> bool:
    from npa_sop_tui.spec.derived import SECRET_FIELDS

    return any(part in SECRET_FIELDS for part in re.split(r"[.\[\]]", path))


def _mark(node: Node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


class _Builder:
    def __init__(self, source: str) -> None:
        self.positions = Positions(source)
        self.problems: list[Finding] = []
        self.constructor = SafeConstructor()
        self.remaining = MAX_VALUES

    def problem(self, node: Node, path: str, message: str, hint: str | None = None) -> None:
        line, col = _mark(node)
        self.problems.append(error(path, message, hint).at(self.positions.source, line, col))

    def build(self, node: Node, path: str, depth: int, active: frozenset[int]) -> Any:
        self.remaining -= 1
        if self.remaining < 0:
            if self.remaining == -1:
                self.problem(
                    node,
                    path,
                    f"more than {MAX_VALUES} values (YAML aliases expanding?)",
                    "write the spec without nested aliases",
                )
            return None
        if depth > MAX_DEPTH:
            self.problem(node, path, f"nesting deeper than {MAX_DEPTH} levels")
            return None
        if id(node) in active:
            self.problem(node, path, "recursive YAML alias", "remove the self-referencing alias")
            return None
        self.positions.values.setdefault(path, _mark(node))
        if isinstance(node, MappingNode):
            return self._mapping(node, path, depth, active | {id(node)})
        if isinstance(node, SequenceNode):
            if node.tag != _SEQ:
                self.problem(node, path, f"unsupported YAML tag {node.tag!r}")
                return None
            nested = active | {id(node)}
            return [
                self.build(item, join_path(path, i), depth + 1, nested)
                for i, item in enumerate(node.value)
            ]
        return self._scalar(node, path)

    def _scalar(self, node: Node, path: str) -> Any:
        if node.tag in _NUMERIC:
            self.positions.numeric_text[path] = str(node.value)
        try:
            return self.constructor.construct_object(node, deep=True)
        except (yaml.YAMLError, ValueError, OverflowError, TypeError, *_CONSTRUCTOR_SLIPS) as exc:
            problem = getattr(exc, "problem", None) or str(exc)
            if isinstance(exc, _CONSTRUCTOR_SLIPS):  # its text says nothing useful
                problem = f"{node.value!r} is not a valid {node.tag.rsplit(':', 1)[-1]}"
            if _secret_path(path):  # the problem quotes the value
                problem = f"a {node.tag.rsplit(':', 1)[-1]} (value hidden: the field is a secret)"
            self.problem(node, path, f"cannot read this YAML value: {problem}")
            return None

    def _mapping(self, node: MappingNode, path: str, depth: int, active: frozenset[int]) -> Any:
        if node.tag != _MAP:
            self.problem(node, path, f"unsupported YAML tag {node.tag!r}")
            return None
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                self.problem(
                    key_node,
                    path,
                    "YAML merge keys (<<) are not supported in this file",
                    "write the fields out in full",
                )
                continue
            if not isinstance(key_node, ScalarNode) or key_node.tag != _STR:
                shown = key_node.value if isinstance(key_node, ScalarNode) else "a collection"
                self.problem(
                    key_node,
                    path,
                    f"keys must be plain strings, got {shown!r}",
                    "quote the key or remove it",
                )
                continue
            key = str(key_node.value)
            child = join_path(path, key)
            if key in result:
                first = self.positions.keys.get(child)
                where = f" (first set at line {first[0]})" if first else ""
                self.problem(
                    key_node,
                    child,
                    f"duplicate key {key!r}{where}",
                    "keep one of them; YAML would silently use the last one",
                )
                continue
            self.positions.keys[child] = _mark(key_node)
            result[key] = self.build(value_node, child, depth + 1, active)
        return result


def _check_size(text: str, source: str, what: str) -> None:
    if len(text.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        raise YamlProblem(
            [
                Finding(
                    "error", "", f"{what} is larger than 1 MiB", "is this the right file?", source
                )
            ]
        )


def _expanded_size(root: Node, source: str) -> None:
    """Raise the builder's own `YamlProblem` when `root` would expand to more than
    `MAX_VALUES` values, nest deeper than `MAX_DEPTH` or refer to itself, without expanding
    anything: an alias is the same node object, so each node's expanded size is counted
    once and reused (a "billion laughs" file costs its node count, not its expansion)."""
    sizes: dict[int, int] = {}
    active: set[int] = set()

    def fail(node: Node, message: str, hint: str | None = None) -> YamlProblem:
        line, col = _mark(node)
        return YamlProblem([error("", message, hint).at(source, line, col)])

    def size(node: Node, depth: int) -> int:
        if depth > MAX_DEPTH:
            raise fail(node, f"nesting deeper than {MAX_DEPTH} levels")
        known = sizes.get(id(node))
        if known is not None:
            return known
        if id(node) in active:
            raise fail(node, "recursive YAML alias", "remove the self-referencing alias")
        total = 1
        if isinstance(node, MappingNode | SequenceNode):
            active.add(id(node))
            children = (
                [v for pair in node.value for v in pair]
                if isinstance(node, MappingNode)
                else node.value
            )
            for child in children:
                total += size(child, depth + 1)
                if total > MAX_VALUES:
                    raise fail(
                        node,
                        f"more than {MAX_VALUES} values (YAML aliases expanding?)",
                        "write the spec without nested aliases",
                    )
            active.discard(id(node))
        sizes[id(node)] = total
        return total

    size(root, 0)


def check_limits(text: str, *, source: str, what: str = "file") -> None:
    """Refuse `text` with `load_yaml_mapping`'s own messages when it is larger than
    `MAX_BYTES`, is not YAML, nests deeper than `MAX_DEPTH` or would expand (aliases) to more
    than `MAX_VALUES` values, before any other YAML library builds objects from it (ruamel's
    round-trip loader in `set` and the wizard expands nothing itself, but everything after it
    walks the expanded tree). Composing is linear in the text: aliases stay shared nodes."""
    _check_size(text, source, what)
    try:
        for node in yaml.compose_all(text, Loader=SAFE_LOADER):
            if node is not None:
                _expanded_size(node, source)
    except yaml.YAMLError as exc:
        raise YamlProblem([syntax_error_finding(exc, source, text)]) from None
    except RecursionError:
        raise YamlProblem([Finding("error", "", "YAML nested too deeply", None, source)]) from None


def load_yaml_mapping(text: str, *, source: str, what: str = "file") -> YamlDocument:
    """Parse `text` as exactly one YAML mapping; raise `YamlProblem` listing every problem."""
    _check_size(text, source, what)
    if not text.strip():
        raise YamlProblem([Finding("error", "", f"{what} is empty", None, source)])
    controls = control_characters(text, source)
    if controls:
        raise YamlProblem(controls)
    try:
        documents = yaml.compose_all(text, Loader=SAFE_LOADER)
        first = next(documents, None)
        second = next(documents, None)
    except yaml.YAMLError as exc:
        raise YamlProblem([syntax_error_finding(exc, source, text)]) from None
    except RecursionError:
        raise YamlProblem([Finding("error", "", "YAML nested too deeply", None, source)]) from None
    if second is not None:
        line, col = _mark(second)
        raise YamlProblem(
            [
                Finding(
                    "error",
                    "",
                    f"{what} holds more than one YAML document",
                    "keep one document; remove the extra `---` section",
                    source,
                    line,
                    col,
                )
            ]
        )
    if first is None or (isinstance(first, ScalarNode) and first.tag == "tag:yaml.org,2002:null"):
        raise YamlProblem([Finding("error", "", f"{what} is empty", None, source)])
    if not isinstance(first, MappingNode):
        line, col = _mark(first)
        kind = "a list" if isinstance(first, SequenceNode) else "a single value"
        raise YamlProblem(
            [
                Finding(
                    "error",
                    "",
                    f"{what} must be a YAML mapping (key: value), not {kind}",
                    None,
                    source,
                    line,
                    col,
                )
            ]
        )
    builder = _Builder(source)
    try:
        data = builder.build(first, "", 0, frozenset())
    except RecursionError:
        raise YamlProblem([Finding("error", "", "YAML nested too deeply", None, source)]) from None
    if builder.problems:
        raise YamlProblem(builder.problems)
    return YamlDocument(data=data, positions=builder.positions)
