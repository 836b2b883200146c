"""The core never asks whether it runs in the sandbox: the `Environment` answers instead."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "npa_sop_tui"
CORE = ("spec", "recipe", "terraform", "lifecycle", "status")


def _core_files() -> list[Path]:
    return sorted(p for pkg in CORE for p in (PACKAGE / pkg).rglob("*.py"))


@pytest.mark.parametrize("path", _core_files(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_core_module_takes_and_reads_no_sandbox_flag(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.arg | ast.keyword) and "sandbox" in (node.arg or ""):
            found.append(f"line {node.lineno}: parameter/keyword {node.arg!r}")
        elif isinstance(node, ast.Attribute) and "sandbox" in node.attr:
            found.append(f"line {node.lineno}: attribute {node.attr!r}")
        elif isinstance(node, ast.Name) and "sandbox" in node.id:
            found.append(f"line {node.lineno}: name {node.id!r}")
        elif isinstance(node, ast.ImportFrom) and "sandbox" in (node.module or ""):
            found.append(f"line {node.lineno}: import from {node.module}")
    assert found == []
