"""The spec models' validation schema as JSON, for the lean validator (`lean.py`).

pydantic compiles each model into a pydantic-core schema: a tree of plain dicts, except
where it names Python objects (model classes, validator functions, `SecretStr`, `list`).
Exported here, those become `{"$py": "…"}` markers naming stand-ins that need no pydantic:
model classes become plain classes with the models' `derived.py` mixins, validators the
`derived.LEAN_FUNCTIONS` the models use, `SecretStr` a `LeanSecret`. Anything else makes the
export fail (`LeanExportError`) and the CLI keeps using the models. Serialisation parts and
JSON-schema metadata are left out: the lean validator only validates.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, SecretStr

from npa_sop_tui.spec.catalog import catalog_data
from npa_sop_tui.spec.derived import LEAN_FUNCTIONS, LEAN_MIXINS
from npa_sop_tui.spec.model import SoperatorSpec
from npa_sop_tui.spec.model_fields import ModelFields

_DROPPED_KEYS = frozenset({"metadata", "serialization"})


class LeanExportError(Exception):
    """The schema names a Python object the lean validator has no stand-in for."""


def _is_model(value: Any) -> bool:
    return isinstance(value, type) and issubclass(value, BaseModel)


def _model_marker(cls: type[BaseModel]) -> dict[str, str]:
    mixins = [name for name, mixin in LEAN_MIXINS.items() if issubclass(cls, mixin)]
    if len(mixins) > 1:
        raise LeanExportError(f"{cls.__name__} has more than one derived.py mixin: {mixins}")
    return {"$py": f"model:{cls.__name__}:{''.join(mixins)}"}


def _object_marker(value: Any, where: str) -> dict[str, str]:
    if value is SecretStr:
        return {"$py": "secret"}
    if value is list:
        return {"$py": "list"}
    if _is_model(value):
        return _model_marker(value)
    function = getattr(value, "__func__", value)  # a classmethod's function
    for name, known in LEAN_FUNCTIONS.items():
        if function is known:
            return {"$py": f"fn:{name}"}
    raise LeanExportError(f"no lean stand-in for {value!r} at {where}")


def _portable(node: Any, where: str) -> Any:
    if isinstance(node, dict):
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in _DROPPED_KEYS:
                continue
            if key == "custom_init":
                # the stand-in classes have no __init__ of their own: plain field setting
                out[key] = False
            elif key == "default_factory" and _is_model(value):
                # `Field(default_factory=Model)` is the model validated from {}: say that
                # as data (a default that is validated), not as a class to call
                out["default"] = {}
                out["validate_default"] = True
            elif key == "default_factory_takes_data" and _is_model(node.get("default_factory")):
                continue
            else:
                out[key] = _portable(value, f"{where}.{key}")
        return out
    if isinstance(node, list | tuple):
        return [_portable(item, f"{where}[{i}]") for i, item in enumerate(node)]
    if node is None or isinstance(node, str | int | float | bool):
        return node
    return _object_marker(node, where)


def export(root: type[BaseModel] = SoperatorSpec) -> dict[str, Any]:
    """`root`'s schema and field index, and the parsed catalog, as JSON-ready data (without
    the validity key)."""
    fields = ModelFields(root)
    checksum, catalog = catalog_data()
    return {
        # the rules read the catalog; its YAML costs more to parse than this JSON to load
        "catalog": {"crc32": checksum, "data": catalog},
        "schema": _portable(root.__pydantic_core_schema__, root.__name__),
        # dotted field path (list indexes left out) → the names allowed there
        "fields": {
            ".".join(path): [f.alias or n for n, f in model.model_fields.items()]
            for path, model in fields.model_paths()
        },
        "literals": {
            key: list(choices)
            for name, info in root.model_fields.items()
            for key in dict.fromkeys((name, info.alias or name))
            if (choices := fields.literal_choices(key)) and all(isinstance(c, str) for c in choices)
        },
    }
