"""Where agent tools may read files and run Terraform: inside one workspace root only.

An agent tool must not be a file reader, nor a way to run code. A `spec_path` (a file) and a
`terraform_dir` (a recipe folder, whose Terraform runs as the server's user) are resolved
against the root (the workflow file's folder, the MCP server's `--root`, or the current
folder), symlinks included, and refused when they land outside: a sibling whose name merely
starts with the root's (`ws-private` beside `ws`) is outside. In the sandbox a
`terraform_dir` is refused whatever it names: the sandbox runs its own stand-in recipe, so an
agent given a sandbox server runs no Terraform code of its choosing. A file inside the root
that is not a Soperator spec gives ONE finding that quotes nothing from the file (no keys,
no lines, no values).
"""

from __future__ import annotations

import os
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from npa_sop_tui.errors import UsageError
from npa_sop_tui.spec.findings import Finding

# The root of the tool call in progress (`Tool.acall(root=...)`); None: the current folder.
CALL_ROOT: ContextVar[Path | None] = ContextVar("npa_tool_root", default=None)
MAX_SPEC_BYTES = 1 << 20  # a cluster.yaml is a few KiB; more is not a spec
SPEC_API_VERSIONS = ("npa.soperator/v0.0.1",)


class OutsideRoot(UsageError):
    def __init__(self, given: str, root: Path, *, what: str = "spec_path") -> None:
        if what == "terraform_dir":
            said = "tools run Terraform only on a recipe inside it"
            hint = (
                "put the recipe checkout under the root, or leave terraform_dir out: the "
                "recipe then comes from your settings (recipe.path) or its pinned commit"
            )
        else:
            said = "tools read spec files only inside it"
            hint = (
                "put the file under the root (the workflow's folder, or the MCP server's "
                "--root), or pass the spec inline as spec/spec_yaml"
            )
        super().__init__(
            f"{what} {given!r} is outside the workspace root {root}; {said}", hint=hint
        )


def workspace_root(root: str | os.PathLike[str] | None) -> Path:
    if root is None:
        root = CALL_ROOT.get()
    return Path(root if root is not None else os.getcwd()).resolve()


def resolve_in_root(
    given: str, root: str | os.PathLike[str] | None, *, what: str = "spec_path"
) -> Path:
    """The real path of `given` (relative to the root, or absolute), refused unless it is
    a regular file inside the root after following every symlink."""
    real = _real_in_root(given, root, what)
    if not real.is_file():
        raise UsageError(f"{what} {given!r} is not a file", hint="name a cluster.yaml file")
    return real


def recipe_in_root(given: str, root: str | os.PathLike[str] | None, *, sandbox: bool) -> Path:
    """The real path of a tool's `terraform_dir`: a folder inside the root, never in the
    sandbox (which runs only its own stand-in recipe)."""
    if sandbox:
        raise UsageError(
            "terraform_dir is not taken in the sandbox: it runs its own stand-in recipe, "
            "never Terraform code named by a tool call",
            hint="leave terraform_dir out (for a recipe of your own, run `npa soperator "
            "plan --terraform-dir DIR` yourself)",
        )
    real = _real_in_root(given, root, "terraform_dir")
    if not real.is_dir():
        raise UsageError(
            f"terraform_dir {given!r} is not a folder",
            hint="name a nebius-solutions-library checkout (or its soperator/ folder)",
        )
    return real


def _real_in_root(given: str, root: str | os.PathLike[str] | None, what: str) -> Path:
    base = workspace_root(root)
    raw = Path(os.path.expanduser(given)) if given.startswith("~") else Path(given)
    candidate = raw if raw.is_absolute() else base / raw
    try:
        real = candidate.resolve(strict=True)
    except (OSError, RuntimeError):
        try:
            loose = candidate.resolve(strict=False)
        except (OSError, RuntimeError):  # a symlink loop: judged by its spelled-out path
            loose = Path(os.path.abspath(candidate))
        if not _inside(loose, base):
            raise OutsideRoot(given, base, what=what) from None
        raise UsageError(
            f"{what} {given!r} does not exist under the workspace root {base}",
            hint="check the name; paths are relative to the workspace root",
        ) from None
    if not _inside(real, base):
        raise OutsideRoot(given, base, what=what)
    return real


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def not_a_spec(given: str) -> Finding:
    return Finding(
        "error",
        "",
        f"{given} is not a Soperator spec (a YAML mapping with apiVersion "
        f"{SPEC_API_VERSIONS[0]}); nothing from it is shown",
        "name a cluster.yaml, or pass the spec inline as spec/spec_yaml",
        given,
    )


def looks_like_spec(text: str) -> bool:
    """A YAML mapping that says it is one (apiVersion), or has a spec's own keys."""
    import yaml

    try:
        data: Any = yaml.safe_load(text)
    except (yaml.YAMLError, ValueError, RecursionError):
        return False
    if not isinstance(data, dict):
        return False
    if "apiVersion" in data:
        return data["apiVersion"] in SPEC_API_VERSIONS
    return "name" in data and "workers" in data


def read_spec_text(given: str, root: str | os.PathLike[str] | None) -> tuple[Path, str | None]:
    """(real path, text) of a spec file inside the root; text is None when the file is not
    a spec (the caller reports `not_a_spec`, never the content)."""
    path = resolve_in_root(given, root)
    with path.open("rb") as handle:
        data = handle.read(MAX_SPEC_BYTES + 1)
    if len(data) > MAX_SPEC_BYTES:
        return path, None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return path, None
    return path, text if looks_like_spec(text) else None
