"""Which resources wait on which: the dependency graph Terraform plans with, per resource.

`terraform graph` prints the configuration's graph in DOT: resources, but also variables,
locals, outputs, providers and module boundaries, an edge `"A" -> "B"` meaning A waits for
B. A resource waits on another when it reaches it through any of those (a local built from
a resource's attribute, a module's output, `depends_on = [module.k8s]`, which goes through
the module's "close" node to every resource in it). This reduces the graph to resources
only: for each resource, the resources it reaches before any other resource.

Addresses are resources, not instances: `module.k8s.null_resource.worker["gpu-0"]` is
`module.k8s.null_resource.worker` here (`resource_of`), as the configuration has it.
"""

from __future__ import annotations

import re

_EDGE = re.compile(r'^\s*"(?P<src>[^"]+)"\s*->\s*"(?P<dst>[^"]+)"')
_NODE = re.compile(r"^\[root\] (?P<name>.+?)(?: \((?:expand|close|destroy)\))?$")
_RESOURCE = re.compile(r"^(?:module\.[A-Za-z0-9_-]+\.)*(?:data\.)?[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$")
_NOT_RESOURCE_TYPES = frozenset({"var", "local", "output", "module", "provider"})
_INSTANCE_KEY = re.compile(r'\[(?:"(?:[^"\\]|\\.)*"|[0-9]+)\]')


def resource_of(address: str) -> str:
    """The configuration's resource of an instance address (instance keys removed)."""
    return _INSTANCE_KEY.sub("", address)


def _resource_name(node: str) -> str | None:
    match = _NODE.match(node)
    if match is None:
        return None
    name = match["name"]
    if not _RESOURCE.match(name):
        return None
    parts = name.split(".")
    kind = parts[-3] if parts[-3:-2] == ["data"] else parts[-2]
    if kind in _NOT_RESOURCE_TYPES or (len(parts) >= 2 and parts[-2] == "module"):
        return None
    return name


def resource_dependencies(dot: str) -> dict[str, list[str]]:
    """Each resource of `terraform graph`'s output → the resources it waits on (sorted)."""
    edges: dict[str, set[str]] = {}
    for line in dot.splitlines():
        match = _EDGE.match(line)
        if match:
            edges.setdefault(match["src"], set()).add(match["dst"])
    nodes = {*edges, *(dst for dsts in edges.values() for dst in dsts)}
    names = {node: _resource_name(node) for node in nodes}
    found: dict[str, list[str]] = {}
    for node, name in names.items():
        if name is None:
            continue
        reached: set[str] = set()
        seen: set[str] = {node}
        stack = list(edges.get(node, ()))
        while stack:
            current = stack.pop()
            if current in seen:
                continue
            seen.add(current)
            other = names.get(current)
            if other is not None and other != name:
                reached.add(other)  # a resource: stop here, it waits on the rest itself
                continue
            stack.extend(edges.get(current, ()))
        found[name] = sorted(reached | set(found.get(name, [])))
    return dict(sorted(found.items()))
