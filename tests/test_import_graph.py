"""The import graph has no cycles, counting what Python really runs.

Importing `a.b.c` first runs the package face `a.b` (its `__init__`), so an edge to a module
is also an edge to every package face above it; a face that imports its own submodules
while they import each other is a cycle even though no two files name each other. Imports
under `if TYPE_CHECKING:` are left out: they never run.
"""

from __future__ import annotations

import sys

import grimp

ROOT = "npa_sop_tui"


def _faces(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(2, len(parts))]


def runtime_edges(graph: grimp.ImportGraph) -> dict[str, set[str]]:
    modules = set(graph.modules)
    edges: dict[str, set[str]] = {}
    for module in modules:
        targets = set(graph.find_modules_directly_imported_by(module)) & modules
        for target in list(targets):
            targets |= {f for f in _faces(target) if f in modules and f != module}
        edges[module] = targets
    return edges


def strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm: every component of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        for v in sorted(edges):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    return found


def test_the_checker_finds_a_face_cycle_and_a_file_cycle() -> None:
    graph = grimp.ImportGraph()
    for name in ("p", "p.pkg", "p.pkg.a", "p.pkg.b", "p.x", "p.y", "p.z"):
        graph.add_module(name)
    graph.add_import(importer="p.pkg", imported="p.pkg.a")  # the face re-exports a
    graph.add_import(importer="p.pkg.a", imported="p.pkg.b")  # a sibling import runs the face
    graph.add_import(importer="p.x", imported="p.y")
    graph.add_import(importer="p.y", imported="p.x")
    graph.add_import(importer="p.z", imported="p.pkg.b")  # from outside: no cycle
    assert sorted(strongly_connected(runtime_edges(graph))) == [
        ["p.pkg", "p.pkg.a"],
        ["p.x", "p.y"],
    ]


def test_no_import_cycles_in_the_package() -> None:
    graph = grimp.build_graph(ROOT, exclude_type_checking_imports=True)
    cycles = strongly_connected(runtime_edges(graph))
    assert cycles == [], (
        "import cycles (each line one strongly connected component):\n"
        + "\n".join(" <-> ".join(c) for c in cycles)
    )


def test_the_package_root_holds_only_the_ground_floor() -> None:
    """Families of modules live in packages; the root keeps what every layer uses."""
    from pathlib import Path

    import npa_sop_tui

    root = Path(npa_sop_tui.__file__).parent
    modules = sorted(p.stem for p in root.glob("*.py") if p.stem != "__init__")
    assert len(modules) <= 7, modules
    assert set(modules) <= {
        "environment",
        "environment_choice",
        "errors",
        "events",
        "redact",
        "safe_text",
    }, modules
