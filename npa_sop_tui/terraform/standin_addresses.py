"""How a stand-in recipe names the real recipe's resources, and the way back.

A stand-in (sandbox/standin_graph.py) has the real recipe's modules and, for each real
resource `<type>.<name>` of a module, a `null_resource.<type>__<name>` with the same count or
for_each: the only provider it may run offline is `null`, and `null_resource` takes any
name. What the real resource updates in place (a node count, a version) lives in a second
one, `null_resource.<type>__<name>__update`, replaced when such an input changes — a change,
not a replacement of the resource it stands for.

Every reader of addresses (plan reading, Terraform's machine-readable output, state lists)
turns these back into the real addresses here, so plans, events, the guard and the
inventory speak of `module.k8s.nebius_mk8s_v1_node_group.worker_v2[1]`, as against the real
recipe.
"""

from __future__ import annotations

import re

SEPARATOR = "__"
UPDATE_SUFFIX = "__update"
_STANDIN = re.compile(
    r"^(?P<module>(?:module\.[\w-]+(?:\[[^\]]*\])?\.)*)null_resource\."
    r"(?P<type>[a-z0-9]+(?:_[a-z0-9]+)*)__(?P<name>[\w-]+?)(?P<update>__update)?"
    r"(?P<index>\[[^\]]*\])?$"
)


def standin_name(kind: str, name: str, *, update: bool = False) -> str:
    """The stand-in's `null_resource` name for the real `<kind>.<name>`."""
    return f"{kind}{SEPARATOR}{name}{UPDATE_SUFFIX if update else ''}"


def real_address(address: str) -> tuple[str, bool]:
    """(the real recipe's address, whether it is the in-place-update part) of a stand-in
    address; any other address comes back as it is, with False."""
    match = _STANDIN.match(address)
    if match is None:
        return address, False
    real = f"{match['module']}{match['type']}.{match['name']}{match['index'] or ''}"
    return real, match["update"] is not None


def real_type_name(kind: str, name: str) -> tuple[str, str, bool]:
    """(type, name, update part) of the real resource behind a stand-in's type and name."""
    if kind != "null_resource" or SEPARATOR not in name:
        return kind, name, False
    update = name.endswith(UPDATE_SUFFIX)
    base = name.removesuffix(UPDATE_SUFFIX) if update else name
    real_kind, _, real_name = base.partition(SEPARATOR)
    return real_kind, real_name, update
