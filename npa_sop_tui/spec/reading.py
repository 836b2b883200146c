"""Reading a spec: file → YAML with positions → validated spec + findings, or `SpecError`.

One implementation for both validators: the pydantic models (`model.py`, what every front
door uses) and the lean validator (`lean.py`, the cold CLI `validate`). Each comes as a
`SpecReader`: a function that validates plain data into a spec object, raising
pydantic-core's `ValidationError`, and a `FieldIndex` that names the fields allowed at a path
(for did-you-mean hints). Nothing here imports pydantic's model machinery.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pydantic_core import ValidationError

from npa_sop_tui.errors import UsageError
from npa_sop_tui.spec.derived import SECRET_FIELDS, VERSION_FIELDS
from npa_sop_tui.spec.findings import Finding, did_you_mean, error, errors_of, summary_line, warning
from npa_sop_tui.spec.yaml_positions import (
    MAX_BYTES,
    Positions,
    YamlProblem,
    join_path,
    load_yaml_mapping,
)

if TYPE_CHECKING:
    from npa_sop_tui.spec.model import SoperatorSpec


class FieldIndex(Protocol):
    """The field names a model allows, found by an error location."""

    def names_at(self, loc: tuple[str | int, ...]) -> list[str] | None:
        """Field names (aliases where set) of the model reached by following `loc` from the
        root (list indexes are skipped), or None where `loc` leaves the models."""
        ...

    def literal_choices(self, name: str) -> tuple[str, ...] | None:
        """The allowed values of the root's `Literal` field `name` (or alias), else None."""
        ...


class SpecReader:
    """How plain data becomes a spec object: `validate` raises pydantic-core's
    `ValidationError`; `fields` explains its locations."""

    # A plain class, as LoadedSpec: making a dataclass costs about 0.5 ms at import, and a
    # cold `validate` is budgeted in milliseconds.
    __slots__ = ("fields", "validate")

    def __init__(self, validate: Callable[[Any], Any], fields: FieldIndex) -> None:
        self.validate = validate
        self.fields = fields


class SpecError(UsageError, ValueError):
    """A spec that cannot be used; `.findings` lists every problem (and the warnings).

    Also a `ValueError`, as npa's `SoperatorSpecError` is, so its callers' handlers hold.

    `source` names the file in the head of a many-error message; a lone finding names its own.
    """

    def __init__(self, findings: list[Finding], *, source: str | None = None) -> None:
        # errors first, each group in file order, so the output reads top to bottom
        self.findings = sorted(findings, key=lambda f: (not f.is_error, f.line or 0, f.column or 0))
        findings = self.findings
        errors = errors_of(findings)
        where = f"{source}: " if source else ""
        if len(errors) == 1:
            head = f"invalid spec: {errors[0].render()}"  # the finding names its own file
        elif errors:
            head = f"{where}invalid spec ({summary_line(findings)})"
        else:
            head = f"{where}invalid spec"
        super().__init__(head)

    def render(self) -> str:
        errors = errors_of(self.findings)
        if len(errors) <= 1:
            return self.message
        return "\n".join([self.message, *(f"  {f.render()}" for f in self.findings)])

    def json_extra(self) -> dict[str, Any]:
        return {"findings": [f.to_dict() for f in self.findings]}


class LoadedSpec:
    """A spec that loaded and validated without errors, with its warnings and positions.

    `spec` is a `SoperatorSpec`, except from the lean validator, where it is a plain object
    with the same fields and derived values (`derived.SpecFacts`).
    """

    def __init__(
        self,
        spec: SoperatorSpec,
        path: Path | None,
        source: str,
        findings: list[Finding] | None = None,
        positions: Positions | None = None,
    ) -> None:
        self.spec = spec
        self.path = path
        self.source = source
        self.findings: list[Finding] = findings if findings is not None else []
        self.positions = positions

    def __repr__(self) -> str:
        return f"LoadedSpec(source={self.source!r}, findings={len(self.findings)})"

    def position(self, path: str) -> tuple[int, int] | None:
        return self.positions.lookup(path) if self.positions else None


# --- validation errors → findings -----------------------------------------------------------


def loc_path(loc: tuple[str | int, ...]) -> str:
    return functools.reduce(join_path, loc, "")


class _Hidden:
    """A secret field's value in a message: its kind, never its content."""

    def __init__(self, value: Any) -> None:
        self.kind = type(value).__name__

    def __repr__(self) -> str:
        article = "an" if self.kind[:1] in ("a", "e", "i", "o", "u") else "a"
        return f"{article} {self.kind} (value hidden: the field is a secret)"


def _show(value: Any) -> str:
    if isinstance(value, _Hidden):
        return repr(value)
    try:
        text = repr(value)
    except RecursionError:  # a value nested deeper than repr can follow (Python callers)
        return f"a {type(value).__name__} nested too deeply"
    return text if len(text) <= 60 else text[:57] + "..."


def findings_from_errors(
    exc: ValidationError, fields: FieldIndex, positions: Positions | None
) -> list[Finding]:
    """Turn pydantic's errors into user-facing findings, placed at their YAML position."""
    out: list[Finding] = []
    for err in exc.errors():
        loc = tuple(err["loc"])
        path = loc_path(loc)
        kind = err["type"]
        value = err.get("input")
        if any(part in SECRET_FIELDS for part in loc if isinstance(part, str)):
            value = _Hidden(value)  # a secret given as a list or a number is still a secret
        hint: str | None = None
        expected = fields.literal_choices(path) if kind == "literal_error" else None
        if kind == "extra_forbidden":
            key = str(loc[-1])  # an unknown key always has a name
            choices = fields.names_at(loc[:-1]) or []
            hint = did_you_mean(key, choices) or (
                f"allowed fields: {', '.join(choices)}" if choices else None
            )
            message = f"unknown field {key!r}"
        elif kind == "missing":
            message = "required field is missing"
        elif kind == "bool_type":
            message = f"must be true or false, got {_show(value)}"
            hint = "write a YAML boolean without quotes: true or false"
        elif kind in ("int_type", "int_parsing", "int_from_float"):
            message = f"must be a whole number, got {_show(value)}"
            hint = "write a number without quotes, e.g. 2"
        elif kind == "string_type":
            message = f"must be a string, got {_show(value)}"
            hint = "quote the value"
        elif expected and path == "apiVersion":
            # Other files (workflows) reuse this; name the version *their* model expects.
            one = " or ".join(expected)
            message = f"unsupported apiVersion {_show(value)}; expected {one}"
            hint = f"use apiVersion: {one}"
        elif kind in ("list_type", "model_type", "dict_type"):
            wanted = "a list" if kind == "list_type" else "a mapping (key: value)"
            message = f"must be {wanted}, got {_show(value)}"
        else:
            message = str(err["msg"])
            if isinstance(value, _Hidden) and str(err.get("input")) in message:
                message = message.replace(str(err.get("input")), "<hidden>")
        finding = error(path, message, hint)
        if positions is not None:
            # an unknown key is shown where the key is written, not at its value
            finding = positions.place(finding, prefer_key=kind == "extra_forbidden")
        out.append(finding)
    return out


# --- data → spec ----------------------------------------------------------------------------


def _coerce_versions(data: dict[str, Any], positions: Positions | None) -> list[Finding]:
    """Read unquoted version numbers as written (`1.30` stays "1.30", not 1.3) and warn."""
    out: list[Finding] = []
    for name in VERSION_FIELDS:
        value = data.get(name)
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue
        text = positions.numeric_text.get(name) if positions else None
        if text is None and isinstance(value, float):
            continue  # ambiguous (1.3 or 1.30?); the model reports "must be a string"
        data[name] = text if text is not None else str(value)
        out.append(
            warning(
                name,
                f"unquoted version {data[name]} read as the string {data[name]!r}",
                f'quote it: {name}: "{data[name]}" (YAML would read 1.30 as 1.3)',
            )
        )
    return out


def build_spec(
    data: Any,
    reader: SpecReader,
    *,
    source: str,
    positions: Positions | None,
    run_validation: bool,
    capacity: dict[str, str] | None = None,
) -> tuple[Any, list[Finding]]:
    """Validate `data` with `reader` and, when `run_validation`, every rule; `SpecError`
    lists all errors (and the warnings) when there is any."""
    if not isinstance(data, dict):
        raise SpecError([Finding("error", "", "spec must be a mapping (key: value)", None, source)])
    data = dict(data)
    pre = _coerce_versions(data, positions)
    if positions is not None:
        pre = [positions.place(f) for f in pre]
    try:
        spec = reader.validate(data)
    except ValidationError as exc:
        found = findings_from_errors(exc, reader.fields, positions)
        if run_validation:
            found += _rules_despite_model_errors(data, exc, reader, positions, capacity)
        raise SpecError([*errors_of(pre), *found, *_warnings(pre)], source=source) from None
    except (TypeError, ValueError, RecursionError) as exc:  # exotic inputs from Python callers
        raise SpecError([Finding("error", "", f"cannot read spec: {exc}", None, source)]) from None
    findings = list(pre)
    if run_validation:
        from npa_sop_tui.spec.validate import validate_spec

        rules = validate_spec(spec, capacity=capacity)
        findings += [positions.place(f) for f in rules] if positions else rules
    if errors_of(findings):
        ordered = [*errors_of(findings), *_warnings(findings)]
        raise SpecError(ordered, source=source)
    return spec, findings


def _rules_despite_model_errors(
    data: dict[str, Any],
    exc: ValidationError,
    reader: SpecReader,
    positions: Positions | None,
    capacity: dict[str, str] | None,
) -> list[Finding]:
    """Rule findings for the parts of a spec the model could read, so a user sees every
    problem in one go rather than one layer per run.

    Fields the model rejected are dropped (falling back to defaults; a missing or unreadable
    name gets a placeholder), the rest is validated, and findings about the dropped fields are
    left out.
    """
    import copy
    import difflib

    from npa_sop_tui.spec.validate import validate_spec

    failed: list[str] = []
    # best effort only: the model errors are what the user must fix first, so anything odd
    # here (an exotic Python value that will not copy, say) just means no rule findings
    try:
        patched = copy.deepcopy(data)
        for err in exc.errors():
            loc = tuple(err["loc"])
            failed.append(loc_path(loc))
            parent: Any = functools.reduce(operator.getitem, loc[:-1], patched)
            if err["type"] == "extra_forbidden":
                # `fabrc:` is a misspelt `fabric:`; do not also report fabric as missing.
                # Where `fabric:` is there too, it is no misspelling: its findings stay.
                names = reader.fields.names_at(loc[:-1]) or []
                close = difflib.get_close_matches(str(loc[-1]), names, n=1)
                if close and not (isinstance(parent, dict) and close[0] in parent):
                    failed.append(loc_path((*loc[:-1], close[0])))
            if isinstance(parent, list):
                return []  # a whole list item is unreadable; its siblings' indexes would shift
            if err["type"] == "missing" or loc == ("name",):
                # the name is required: a stand-in lets the rest of the spec be checked
                parent[loc[-1]] = "placeholder"
            else:
                del parent[loc[-1]]
        spec = reader.validate(patched)
        rules = validate_spec(spec, capacity=capacity)
    except Exception:
        return []

    def covered(path: str) -> bool:
        return any(path == bad or path.startswith((f"{bad}.", f"{bad}[")) for bad in failed)

    # warnings are left for the next run: they may be about the dropped fields' defaults
    kept = [f for f in rules if f.is_error and not covered(f.path)]
    return [positions.place(f) for f in kept] if positions else kept


def _warnings(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if not f.is_error]


# --- text and files -------------------------------------------------------------------------


def parse_spec_text(
    text: str,
    reader: SpecReader,
    *,
    source: str,
    validate: bool,
    capacity: dict[str, str] | None = None,
) -> LoadedSpec:
    """Parse and validate spec YAML; raise `SpecError` listing every problem with positions."""
    if not isinstance(text, str):
        raise SpecError([Finding("error", "", "spec text must be a string", None, source)])
    try:
        doc = load_yaml_mapping(text, source=source, what="spec")
    except YamlProblem as exc:
        raise SpecError(exc.findings, source=source) from None
    spec, findings = build_spec(
        doc.data,
        reader,
        source=source,
        positions=doc.positions,
        run_validation=validate,
        capacity=capacity,
    )
    return LoadedSpec(
        spec=spec, path=None, source=source, findings=findings, positions=doc.positions
    )


def read_spec_file(path: Path, source: str) -> str:
    """The text of a spec file; a missing, unreadable, special (device, FIFO), oversized or
    non-UTF-8 file raises `SpecError` saying which, before more than `MAX_BYTES` are read."""
    from npa_sop_tui.home.bounded_read import Unreadable, read_regular_text

    try:
        return read_regular_text(path, limit=MAX_BYTES, what="spec file", subject="spec")
    except Unreadable as exc:
        raise SpecError([Finding("error", "", exc.reason, exc.hint, source)]) from None


def load_spec_file(
    path: str | Path,
    reader: SpecReader,
    *,
    validate: bool = True,
    capacity: dict[str, str] | None = None,
) -> LoadedSpec:
    """Read and validate a spec file; problems raise `SpecError`."""
    source = str(path)
    path = Path(path)
    text = read_spec_file(path, source)
    loaded = parse_spec_text(text, reader, source=source, validate=validate, capacity=capacity)
    loaded.path = path
    return loaded
