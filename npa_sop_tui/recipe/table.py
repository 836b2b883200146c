"""The recipe table: which upstream commit ships each Soperator version (`data/recipes.yaml`).

The variable layout belongs to a recipe commit, not to a version number, so everything that
renders or checks variables first asks this table which commit it is dealing with.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from importlib import resources

import yaml

from npa_sop_tui.errors import UsageError

SHA_RE = re.compile(r"^[0-9a-f]{40}$")
# The commit used when nothing picks one: the recipe table's default for Soperator 4.1.6.
# Deploys pick the commit for the spec's version (compat.py); a config may pin one.
DEFAULT_RECIPE_REF = "01e8c67a6182305bf2751a931fc5ee2f642f51a1"


@dataclass(frozen=True)
class CommitInfo:
    sha: str
    version: str
    terraform: str | None = None
    obtainable: bool = True
    has_contract: bool = True
    notes: str = ""

    @property
    def short(self) -> str:
        return self.sha[:8]


@dataclass(frozen=True)
class VersionEntry:
    version: str
    default: str | None
    layout: str | None = None  # whose contract renders follow when `default` has none
    alternates: tuple[str, ...] = ()
    supported: bool = True
    note: str = ""

    @property
    def contract_commit(self) -> str | None:
        return self.layout or self.default


@dataclass(frozen=True)
class RecipeTable:
    versions: dict[str, VersionEntry] = field(default_factory=dict)
    commits: dict[str, CommitInfo] = field(default_factory=dict)

    def supported_versions(self) -> list[str]:
        return [v for v, e in self.versions.items() if e.supported]

    def entry(self, version: str) -> VersionEntry:
        found = self.versions.get(version)
        if found is None or not found.supported:
            reason = f" ({found.note})" if found is not None and found.note else ""
            raise UsageError(
                f"Soperator {version} has no recipe contract{reason}",
                hint=f"supported versions: {', '.join(self.supported_versions())}",
            )
        return found

    def commit(self, sha: str) -> CommitInfo | None:
        return self.commits.get(sha.lower())

    def contract_commit(self, version: str, ref: str | None = None) -> str:
        """The commit whose contract a render for `version` (at recipe `ref`) follows."""
        if ref:
            info = self.commit(ref)
            if info is not None and info.has_contract:
                return info.sha
            if info is not None and info.version != version:
                raise UsageError(
                    f"recipe commit {ref[:12]} ships Soperator {info.version}, but the spec "
                    f"asks for {version}",
                    hint=f"set slurm_operator_version: {info.version!r}, or pick another "
                    "--recipe-ref",
                )
        commit = self.entry(version).contract_commit
        assert commit is not None  # a supported version always has a contract commit
        return commit


def _build(raw: dict[str, object]) -> RecipeTable:
    commits: dict[str, CommitInfo] = {}
    for sha, body in (raw.get("commits") or {}).items():  # type: ignore[union-attr]
        sha = str(sha)
        if not SHA_RE.match(sha):
            raise ValueError(f"recipes.yaml: {sha} is not a full commit SHA")
        commits[sha] = CommitInfo(
            sha=sha,
            version=str(body["version"]),
            terraform=body.get("terraform"),
            obtainable=bool(body.get("obtainable", True)),
            has_contract=bool(body.get("contract", True)),
            notes=" ".join(str(body.get("notes", "")).split()),
        )
    versions: dict[str, VersionEntry] = {}
    for version, body in (raw.get("versions") or {}).items():  # type: ignore[union-attr]
        versions[str(version)] = VersionEntry(
            version=str(version),
            default=body.get("default"),
            layout=body.get("layout"),
            alternates=tuple(body.get("alternates") or ()),
            supported=bool(body.get("supported", True)),
            note=" ".join(str(body.get("note", "")).split()),
        )
    return RecipeTable(versions=versions, commits=commits)


@cache
def load_table() -> RecipeTable:
    text = resources.files("npa_sop_tui.recipe.data").joinpath("recipes.yaml").read_text("utf-8")
    return _build(yaml.safe_load(text))


def default_commit(version: str) -> str | None:
    """The commit a spec with `slurm_operator_version: version` deploys on (None: unknown)."""
    return load_table().entry(version).default
