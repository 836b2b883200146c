"""Where a pydantic model's fields are, by path: the names a did-you-mean hint offers and the
choices of a literal field (`reading.FieldIndex`), read from the model classes. The lean
validator exports the same tables (lean_export.py)."""

from __future__ import annotations

import typing
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _nested_model(annotation: Any) -> type[BaseModel] | None:
    """The model inside a field's type: list[Model] / Model | None / dict[str, …] are
    unwrapped down to their first argument; None when there is no model there."""
    current = annotation
    while not _is_model(current):
        args = [a for a in typing.get_args(current) if a is not type(None)]
        if not args:
            return None
        current = args[0]
    return current


def _model_at(model: type[BaseModel], loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The model class reached by following `loc` from `model` (for did-you-mean lists), or
    None where the path leaves the models (a dict's keys, a union's member tags)."""
    current: Any = model
    for part in loc:
        if isinstance(part, int):
            continue
        info = next(
            (f for n, f in current.model_fields.items() if part in (n, f.alias)),
            None,
        )
        if info is None:
            return None
        current = _nested_model(info.annotation)
        if current is None:
            return None
    return current


def _field_names(model: type[BaseModel]) -> list[str]:
    return [f.alias or n for n, f in model.model_fields.items()]


class ModelFields:
    """`reading.FieldIndex` read from a pydantic model class."""

    def __init__(self, root: type[BaseModel]) -> None:
        self.root = root

    def names_at(self, loc: tuple[str | int, ...]) -> list[str] | None:
        model = _model_at(self.root, loc)
        return _field_names(model) if model else None

    def literal_choices(self, name: str) -> tuple[str, ...] | None:
        fields = self.root.model_fields.items()
        info = next((f for n, f in fields if name in (n, f.alias)), None)
        return typing.get_args(info.annotation) if info is not None else None

    def model_paths(self) -> Iterator[tuple[tuple[str, ...], type[BaseModel]]]:
        """Every (path, model) below the root, by field name and by alias: what `names_at`
        can answer, listed (the lean validator stores it)."""

        def walk(
            path: tuple[str, ...], model: type[BaseModel]
        ) -> Iterator[tuple[tuple[str, ...], type[BaseModel]]]:
            yield path, model
            for name, info in model.model_fields.items():
                nested = _nested_model(info.annotation)
                if nested is not None:
                    for key in dict.fromkeys((name, info.alias or name)):
                        yield from walk((*path, key), nested)

        return walk((), self.root)
