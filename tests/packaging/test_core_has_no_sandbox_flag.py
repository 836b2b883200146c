"""The core never asks whether it runs in the sandbox: the `Environment` answers instead."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "npa_sop_tui"
CORE = ("spec", "recipe", "terraform", "lifecycle", "status")


def _core_files() -> list[Path]:
    return sorted(p for pkg in CORE for p in (PACKAGE / pkg).rglob("*.py"))


def _sandbox_uses(source: str) -> list[str]:
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.arg | ast.keyword) and "sandbox" in (node.arg or ""):
            found.append(f"line {node.lineno}: parameter/keyword {node.arg!r}")
        elif isinstance(node, ast.Attribute) and "sandbox" in node.attr:
            found.append(f"line {node.lineno}: attribute {node.attr!r}")
        elif isinstance(node, ast.Name) and "sandbox" in node.id:
            found.append(f"line {node.lineno}: name {node.id!r}")
        elif isinstance(node, ast.ImportFrom) and "sandbox" in (node.module or ""):
            found.append(f"line {node.lineno}: import from {node.module}")
    return found


def test_core_modules_take_and_read_no_sandbox_flag() -> None:
    files = _core_files()
    assert len(files) > 40  # every core package is scanned
    found = [
        f"{path.relative_to(PACKAGE)} {hit}"
        for path in files
        for hit in _sandbox_uses(path.read_text(encoding="utf-8"))
    ]
    assert found == []


@pytest.mark.parametrize(
    "source",
    [
        "def plan(spec, sandbox=False): pass",
        "plan(spec, sandbox=True)",
        "if options.sandbox: pass",
        "from npa_sop_tui.sandbox import cluster",
        "use_sandbox = 1",
    ],
)
def test_the_scan_finds_each_kind_of_sandbox_flag(source: str) -> None:
    assert _sandbox_uses(source)
