"""The distribution lists every package, so a wheel install has everything an editable one has."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _declared() -> tuple[set[str], dict[str, str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    return set(config["packages"]), dict(config.get("package-dir", {}))


def _on_disk() -> set[str]:
    found = {"npa.sdk"}  # PEP 420 namespace shim: no __init__.py by design
    for init in (ROOT / "npa_sop_tui").rglob("__init__.py"):
        if "__pycache__" not in init.parts:
            found.add(".".join(init.parent.relative_to(ROOT).parts))
    for init in (ROOT / "screens").rglob("__init__.py"):
        rel = init.parent.relative_to(ROOT / "screens").parts
        found.add(".".join(("npa_sop_tui", "screens", *rel)))
    return found


def test_every_package_on_disk_is_declared() -> None:
    declared, _ = _declared()
    missing = _on_disk() - declared
    assert not missing, f"add to [tool.setuptools] packages in pyproject.toml: {sorted(missing)}"


def test_every_declared_package_exists() -> None:
    declared, package_dir = _declared()
    for package in declared:
        mapped = package_dir.get(package)
        folder = ROOT / (mapped if mapped else package.replace(".", "/"))
        assert folder.is_dir(), f"{package} is declared but {folder} does not exist"


def test_namespace_shim_has_no_init() -> None:
    # `from npa.sdk import soperator` must coexist with the real npa distribution.
    assert not (ROOT / "npa" / "__init__.py").exists()
    assert not (ROOT / "npa" / "sdk" / "__init__.py").exists()


def test_sdk_shim_imports() -> None:
    from npa.sdk import soperator

    assert hasattr(soperator, "deploy") and hasattr(soperator, "SoperatorSpec")
