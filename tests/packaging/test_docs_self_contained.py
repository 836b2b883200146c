"""The docs stand alone: no reference to planning notes a user never has, no link or path
that is not in the repository. OUTSIDE is built from fragments of those notes' names, so
this file names no such note itself."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_NOTES = (
    "npa-" + "anchor",
    "upstream-" + "recipe",
    "test-" + "substrate",
    "soperator-" + "runtime",
)
OUTSIDE = re.compile(
    r"\.\./" + "shared|" + "shared/(design|reference)|" + "|".join(_NOTES) + r"|design\.md"
)
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
REPO_PATH = re.compile(r"`((?:npa_sop_tui|screens|scripts|tests|bench|assets|docs)/[\w./-]+)`")


def _tracked(*patterns: str) -> list[Path]:
    out = subprocess.run(
        ["git", "ls-files", *patterns], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    return [ROOT / p for p in out if (ROOT / p).is_file()]


DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _outside_references(paths: list[Path], base: Path = ROOT) -> list[str]:
    return [
        f"{path.relative_to(base)}:{n}: {line.strip()}"
        for path in paths
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if OUTSIDE.search(line)
    ]


def test_no_reference_to_notes_outside_the_repository() -> None:
    """One scan of every tracked text file (this file names the patterns, so it is left
    out of the list rather than passed over inside a test)."""
    files = [
        p
        for p in _tracked("*.md", "*.py", "*.sh", "*.yaml", "*.tf", "*.toml")
        if p.resolve() != Path(__file__).resolve()
    ]
    assert len(files) > 100  # the scan reaches the tree, not an empty list
    assert _outside_references(files) == []


@pytest.mark.parametrize(
    "line", ["see ../" + "shared/x.md", "as design" + ".md says", "(" + _NOTES[2] + " §3)"]
)
def test_the_scan_finds_a_reference_to_outside_notes(tmp_path: Path, line: str) -> None:
    probe = tmp_path / "probe.md"
    probe.write_text(f"intro\n{line}\n", encoding="utf-8")
    assert _outside_references([probe], tmp_path) == [f"probe.md:2: {line}"]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_links_and_paths_in_docs_exist(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    missing = []
    for target in LINK.findall(text):
        if "://" in target or target.startswith("mailto:"):
            continue
        if not (doc.parent / target).exists():
            missing.append(target)
    for target in REPO_PATH.findall(text):
        candidate = target.rstrip(".,;:")
        if "*" in candidate or "<" in candidate:
            continue
        if not (ROOT / candidate).exists():
            missing.append(candidate)
    assert missing == []
