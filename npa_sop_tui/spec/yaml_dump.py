"""The spec as YAML: every field that was set, `apiVersion` and `name` first, versions quoted,
capacity block group IDs (secrets) left out unless asked for."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from npa_sop_tui.spec.derived import API_VERSION, VERSION_FIELDS

if TYPE_CHECKING:
    from npa_sop_tui.spec.model import SoperatorSpec

REVEAL_SECRETS = "reveal_secrets"  # serialization context key: dump secret values as they are


def dump_spec_yaml(spec: SoperatorSpec, *, include_secrets: bool = False) -> str:
    """YAML for `spec`, keeping every field that was set.

    Capacity block group IDs are secrets (they must not land in a committed cluster.yaml),
    so they are left out unless `include_secrets` is true; supply them at run time instead.
    """
    import yaml

    data = spec.model_dump(
        mode="json",
        by_alias=True,
        exclude_unset=True,
        context={REVEAL_SECRETS: include_secrets},
    )
    ordered = {"apiVersion": API_VERSION, "name": spec.name}
    ordered.update({k: v for k, v in data.items() if k not in ordered})
    if not include_secrets:
        for pool in ordered.get("workers", []):
            pool.pop("capacity_block_group", None)
    for key in VERSION_FIELDS:
        if isinstance(ordered.get(key), str):
            ordered[key] = _Quoted(ordered[key])
    return yaml.dump(ordered, Dumper=_make_dumper(), sort_keys=False)


class _Quoted(str):
    """A version string: always written quoted, so `1.30` never becomes the number 1.3."""


@functools.cache
def _make_dumper() -> type:
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    Dumper.add_representer(
        _Quoted, lambda dumper, value: dumper.represent_scalar("tag:yaml.org,2002:str", value, '"')
    )
    return Dumper
