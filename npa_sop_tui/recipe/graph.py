"""The upstream recipe's resource graph, per layout: derived from the recipe's own Terraform
files by `scripts/gen_recipe_graph.py` into `recipe/graphs/<layout commit>.json`, which
records each file and the commit it was read at.

What npa takes from it: the module tree and resource addresses a stand-in reproduces
(sandbox/standin_graph.py), how many instances each has and which inputs replace or update
it, and which replacements are the recipe's own bookkeeping — a `local_file` it renders
again, a `terraform_data` wait or value (several re-run on every apply: `triggers_replace =
[timestamp()]`) — so the deploy guard lets those through and refuses every other deletion or
replacement.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

GRAPHS = Path(__file__).parent / "graphs"


@dataclass(frozen=True)
class RecipeGraph:
    layout: str
    versions: tuple[str, ...]
    recipe_commits: tuple[str, ...]
    root_inputs: dict[str, Any]
    files: dict[str, Any]
    modules: dict[str, Any]
    module_order: tuple[str, ...] = ()

    def resources(self) -> list[dict[str, Any]]:
        return [r for m in self.modules.values() for r in m["resources"]]

    def addresses(self) -> list[str]:
        """Every resource's address (without instance keys), sorted."""
        return sorted(r["address"] for r in self.resources())

    def safe_replacements(self) -> dict[str, str]:
        """Address (without instance keys) → why replacing it is harmless."""
        return {r["address"]: r["safe_replace"] for r in self.resources() if "safe_replace" in r}

    def resource(self, address: str) -> dict[str, Any] | None:
        return next((r for r in self.resources() if r["address"] == address), None)


@cache
def load_graph(layout: str) -> RecipeGraph:
    data = json.loads((GRAPHS / f"{layout}.json").read_text(encoding="utf-8"))
    return RecipeGraph(
        layout=data["layout"],
        versions=tuple(data["versions"]),
        recipe_commits=tuple(data["recipe_commits"]),
        root_inputs=dict(data["root_inputs"]),
        files=dict(data["files"]),
        modules=dict(data["modules"]),
        module_order=tuple(data.get("module_order", ())),
    )


def layouts() -> list[str]:
    return sorted(p.stem for p in GRAPHS.glob("*.json"))


def graph_for(commit: str | None = None, version: str | None = None) -> RecipeGraph | None:
    """The graph of a recipe commit (or a commit prefix), else of the layout that ships
    `version`; None when neither is known (then nothing is safe to replace)."""
    graphs = [load_graph(layout) for layout in layouts()]
    if commit:
        for graph in graphs:
            if any(c.startswith(commit) or commit.startswith(c) for c in graph.recipe_commits):
                return graph
            if graph.layout.startswith(commit):
                return graph
    if version:
        return next((g for g in graphs if version in g.versions), None)
    return None


def safe_replacements(commit: str | None = None, version: str | None = None) -> dict[str, str]:
    graph = graph_for(commit, version)
    return graph.safe_replacements() if graph is not None else {}
