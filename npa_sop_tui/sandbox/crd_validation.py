"""The fake Kubernetes API server's check of Soperator's objects against their CRDs, as the
real API server makes it: an object that breaks its kind's `openAPIV3Schema` is refused (HTTP
422, reason `Invalid`), never stored.

The schemas are the stored versions of the real CRDs without their descriptions
(`crd_schemas/<tag>.json.gz`, derived by scripts/gen_crd_contract.py, one file per Soperator
release). What is checked is the structural subset the API server itself enforces: `type`
(with `nullable` and `x-kubernetes-int-or-string`), `properties` (a field no schema lists is
refused unless `additionalProperties` or `x-kubernetes-preserve-unknown-fields` allows it; the
real server would drop it silently, and a fake serving one shows what no cluster shows),
`required`, `enum`, `items`, `additionalProperties`, `minimum`/`maximum`,
`minLength`/`maxLength`, `minItems`/`maxItems`, `pattern` and `anyOf`/`oneOf`/`allOf`.
`metadata` is checked by the server's own rules, not the CRD's (name present). CEL rules
(`x-kubernetes-validations`) and `format` are not evaluated. Before validating, the server
fills in every missing field whose schema has a `default` (inside objects that are there),
and stores what it validated: so does `defaulted()` (5.0's NodeSet `updateStrategy` is
required and defaults to `rollingUpdate`).
"""

from __future__ import annotations

import copy
import gzip
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

SCHEMAS = Path(__file__).with_name("crd_schemas")
DEFAULT_RELEASE = "4.1.6"
_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "boolean": (bool,),
    "integer": (int,),
    "number": (int, float),
}


class InvalidObject(ValueError):
    """An object its CRD refuses; `errors` are `path: message` lines."""

    def __init__(self, kind: str, name: str, errors: list[str]) -> None:
        self.kind, self.name, self.errors = kind, name, errors
        shown = "; ".join(errors[:5]) + (f"; and {len(errors) - 5} more" if len(errors) > 5 else "")
        super().__init__(f'{kind} "{name}" is invalid: {shown}')


@cache
def schemas(release: str = DEFAULT_RELEASE) -> dict[str, Any]:
    """Every kind's schema of `release` (a file name in crd_schemas/, e.g. `4.1.6`)."""
    raw = (SCHEMAS / f"{release}.json.gz").read_bytes()
    data: dict[str, Any] = json.loads(gzip.decompress(raw))
    return data


def releases() -> list[str]:
    return sorted(p.name.removesuffix(".json.gz") for p in SCHEMAS.glob("*.json.gz"))


def defaulted(obj: dict[str, Any], release: str = DEFAULT_RELEASE) -> dict[str, Any]:
    """A copy of `obj` with the schema's defaults filled in where fields are missing."""
    out = copy.deepcopy(obj)
    schema = schemas(release).get(str(obj.get("kind")))
    if schema is not None:
        _fill(out, schema)
    return out


def _fill(value: Any, schema: dict[str, Any]) -> None:
    if isinstance(value, dict):
        props: dict[str, Any] = schema.get("properties") or {}
        for key, sub in props.items():
            if key not in value and "default" in sub:
                value[key] = copy.deepcopy(sub["default"])
            if key in value:
                _fill(value[key], sub)
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            for key in set(value) - set(props):
                _fill(value[key], extra)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for item in value:
            _fill(item, schema["items"])


def errors(obj: dict[str, Any], release: str = DEFAULT_RELEASE) -> list[str]:
    """Every way `obj` (by its `kind`) breaks its CRD in `release`; [] for a kind the release
    has no CRD for (core kinds are not checked)."""
    schema = schemas(release).get(str(obj.get("kind")))
    if schema is None:
        return []
    obj = defaulted(obj, release)
    found: list[str] = []
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or not meta.get("name"):
        found.append("metadata.name: Required value")
    rest = {k: v for k, v in obj.items() if k != "metadata"}
    _check(rest, {**schema, "properties": {**schema.get("properties", {}), "metadata": {}}}, "",
           found)  # fmt: skip
    return found


def admit(obj: dict[str, Any], release: str = DEFAULT_RELEASE) -> dict[str, Any]:
    """What the API server stores of `obj` (defaults filled in); `InvalidObject` when it
    breaks its CRD."""
    found = errors(obj, release)
    if found:
        name = str((obj.get("metadata") or {}).get("name") or "")
        raise InvalidObject(str(obj.get("kind")), name, found)
    return defaulted(obj, release)


def _at(path: str, key: str | int) -> str:
    return f"{path}[{key}]" if isinstance(key, int) else (f"{path}.{key}" if path else key)


def _type_ok(value: Any, schema: dict[str, Any]) -> bool:
    if schema.get("x-kubernetes-int-or-string"):
        return isinstance(value, int | str) and not isinstance(value, bool)
    wanted = schema.get("type")
    if wanted is None:
        return True
    if isinstance(value, bool) and wanted in ("integer", "number"):
        return False
    return isinstance(value, _TYPES.get(wanted, (object,)))


def _check(value: Any, schema: dict[str, Any], path: str, out: list[str]) -> None:
    where = path or "(root)"
    if value is None:
        if not schema.get("nullable") and "type" in schema:
            out.append(f"{where}: null is not allowed (type {schema['type']})")
        return
    if not _type_ok(value, schema):
        out.append(f"{where}: {value!r} is not of type {schema.get('type')}")
        return
    if "enum" in schema and value not in schema["enum"]:
        out.append(f"{where}: {value!r} is not one of {schema['enum']}")
    _bounds(value, schema, where, out)
    for combinator in ("allOf", "anyOf", "oneOf"):
        if combinator in schema:
            _combined(value, combinator, schema[combinator], path, out)
    if isinstance(value, dict):
        _object(value, schema, path, out)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            _check(item, schema["items"], _at(path, i), out)


def _bounds(value: Any, schema: dict[str, Any], where: str, out: list[str]) -> None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            out.append(f"{where}: {value} is less than the minimum of {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            out.append(f"{where}: {value} is greater than the maximum of {schema['maximum']}")
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            out.append(f"{where}: {value!r} is shorter than {schema['minLength']}")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            out.append(f"{where}: {value!r} is longer than {schema['maxLength']}")
        if "pattern" in schema and re.search(schema["pattern"], value) is None:
            out.append(f"{where}: {value!r} does not match {schema['pattern']!r}")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            out.append(f"{where}: {len(value)} items, fewer than {schema['minItems']}")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            out.append(f"{where}: {len(value)} items, more than {schema['maxItems']}")


def _combined(value: Any, combinator: str, options: list[Any], path: str, out: list[str]) -> None:
    results = []
    for option in options:
        found: list[str] = []
        _check(value, option, path, found)
        results.append(found)
    passed = sum(1 for r in results if not r)
    if combinator == "allOf":
        out.extend(e for r in results for e in r)
    elif (combinator == "anyOf" and passed == 0) or (combinator == "oneOf" and passed != 1):
        out.append(f"{path or '(root)'}: does not match {combinator} of its schema")


def _object(value: dict[str, Any], schema: dict[str, Any], path: str, out: list[str]) -> None:
    props: dict[str, Any] = schema.get("properties") or {}
    extra = schema.get("additionalProperties")
    for name in schema.get("required") or []:
        if name not in value:
            out.append(f"{_at(path, name)}: Required value")
    open_ = schema.get("x-kubernetes-preserve-unknown-fields") or extra is True
    for key, item in value.items():
        if key in props:
            _check(item, props[key], _at(path, key), out)
        elif isinstance(extra, dict):
            _check(item, extra, _at(path, key), out)
        elif extra is False or (props and not open_):
            out.append(f"{_at(path, key)}: field not declared in the schema")
