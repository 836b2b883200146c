"""What npa's own code uses of the Nebius SDK, and what the installed SDK marks deprecated.

The marks are read from the SDK itself, as it reads them when it warns:

- a service client's `__service_deprecation_details__` (`nebius/aio/client.py`: the client
  logs it when it is built);
- a method's `deprecated` option in the service descriptor (`get_descriptor()`);
- a message class's `__DEPRECATION_DETAILS__`, a field's `deprecation_details`, and an enum
  value's deprecation (`nebius/base/protos/direct.py`: logged when they are built or set).

The uses are found in the source with `ast`: every name imported from `nebius.api.…` (or an
attribute of such a module), every `<Client>(sdk).<method>(…)` call (also through a local
name the client was assigned to, and through the client helpers `_list` / `_get_or_none`,
which call `list` / `get`), and every keyword given to a message constructor.
"""

from __future__ import annotations

import ast
import importlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

API_PREFIX = "nebius.api."
HELPER_METHODS = {"_list": "list", "_get_or_none": "get"}  # cloud/nebius_calls.py


@dataclass(frozen=True)
class Mark:
    file: str
    line: int
    what: str  # "service nebius.iam.v1.ProjectService", "field …", "method …"
    details: str


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _is_client(obj: Any) -> bool:
    return isinstance(obj, type) and hasattr(obj, "__service_name__")


def _is_message(obj: Any) -> bool:
    return isinstance(obj, type) and hasattr(obj, "__FIELDS__")


def service_mark(client: Any) -> str | None:
    return getattr(client, "__service_deprecation_details__", None) or None


def method_mark(client: Any, python_name: str) -> str | None:
    for method in client.get_descriptor().methods:
        if _snake(method.name) == python_name and method.GetOptions().deprecated:
            return f"{client.__service_name__}.{method.name} is marked deprecated"
    return None


def message_mark(message: Any) -> str | None:
    return getattr(message, "__DEPRECATION_DETAILS__", None) or None


def field_mark(message: Any, python_name: str) -> str | None:
    for field in message.__FIELDS__:
        if field.python_name == python_name and field.deprecation_details:
            return str(field.deprecation_details)
    return None


class _Uses(ast.NodeVisitor):
    def __init__(self, file: str) -> None:
        self.file = file
        self.modules: dict[str, str] = {}  # local name → nebius.api module
        self.objects: dict[str, Any] = {}  # local name → SDK object
        self.clients: dict[str, Any] = {}  # local variable → client class it was built from
        self.marks: list[Mark] = []

    # -- what a name means -------------------------------------------------------------

    def resolve(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Name):
            return self.objects.get(node.id)
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id in self.modules:
                return getattr(importlib.import_module(self.modules[node.value.id]), node.attr)
            owner = self.resolve(node.value)
            if owner is not None:
                return getattr(owner, node.attr, None)
        return None

    def mark(self, node: ast.AST, what: str, details: str | None) -> None:
        if details:
            self.marks.append(Mark(self.file, getattr(node, "lineno", 0), what, details))

    # -- imports -----------------------------------------------------------------------

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if module.startswith(API_PREFIX) or module == API_PREFIX.rstrip("."):
            for alias in node.names:
                local = alias.asname or alias.name
                full = f"{module}.{alias.name}"
                try:
                    importlib.import_module(full)
                    self.modules[local] = full
                    continue
                except ImportError:
                    pass
                obj = getattr(importlib.import_module(module), alias.name)
                self.objects[local] = obj
                self.check_object(node, obj)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name.startswith(API_PREFIX) and alias.asname:
                self.modules[alias.asname] = alias.name

    def check_object(self, node: ast.AST, obj: Any) -> None:
        if _is_client(obj):
            self.mark(node, f"service {obj.__service_name__}", service_mark(obj))
        elif _is_message(obj):
            self.mark(node, f"message {obj.__PROTO_FULL_NAME__}", message_mark(obj))

    # -- uses ----------------------------------------------------------------------------

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if isinstance(node.value, ast.Name) and node.value.id in self.modules:
            obj = self.resolve(node)
            if obj is not None:
                self.check_object(node, obj)
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        value = node.value
        if isinstance(value, ast.Call) and _is_client(self.resolve(value.func)):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    self.clients[target.id] = self.resolve(value.func)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        called = self.resolve(func)
        if _is_message(called):
            for keyword in node.keywords:
                if keyword.arg:
                    what = f"field {called.__PROTO_FULL_NAME__}.{keyword.arg}"
                    self.mark(node, what, field_mark(called, keyword.arg))
        if isinstance(func, ast.Attribute):
            client = None
            if isinstance(func.value, ast.Call):
                client = self.resolve(func.value.func)
            elif isinstance(func.value, ast.Name):
                client = self.clients.get(func.value.id)
            if _is_client(client):
                self.mark(node, f"method {client.__service_name__}.{func.attr}",
                          method_mark(client, func.attr))  # fmt: skip
            if func.attr in HELPER_METHODS:
                for arg in node.args:
                    helper_client = self.resolve(arg)
                    if _is_client(helper_client):
                        name = HELPER_METHODS[func.attr]
                        self.mark(node, f"method {helper_client.__service_name__}.{name}",
                                  method_mark(helper_client, name))  # fmt: skip
        self.generic_visit(node)


def deprecated_uses(source: str, file: str) -> list[Mark]:
    """Every deprecated service, method, message or field `source` uses."""
    visitor = _Uses(file)
    visitor.visit(ast.parse(source))
    return visitor.marks


def product_marks(root: Path) -> list[Mark]:
    marks: list[Mark] = []
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if "nebius.api" not in text:
            continue
        marks += deprecated_uses(text, str(path.relative_to(root.parent)))
    return marks
