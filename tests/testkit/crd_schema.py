"""Validate objects against the real CRDs' `openAPIV3Schema`: Soperator's own CRD files
(SlurmCluster, NodeSet, ActiveCheck) as Nebius publishes them in Soperator's public GitHub
repository. Copies of them, unchanged, ship with these tests: `CRDS` below is their folder
in the tests' own data, one folder per Soperator release tag, and the tag is the one the
product's CRD contract records (read with `crd_contract()`).

The OpenAPI subset Kubernetes uses becomes JSON Schema for the `jsonschema` package:
`nullable` adds `null` to the type, `x-kubernetes-int-or-string` allows both, and an object
schema that lists its `properties` (and neither `additionalProperties` nor
`x-kubernetes-preserve-unknown-fields`) forbids any other field: the API server would prune
it, so a fake that serves one shows what a real cluster never does.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from npa_sop_tui.status.crd_contract import crd_contract

# the tag lives in one place: the contract that was generated from these very files
CRDS = (
    Path(__file__).resolve().parent.parent
    / "data"
    / "soperator-crds"
    / crd_contract()["source"]["tag"]
)


def _convert(schema: Any) -> Any:
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "description" or key.startswith("x-kubernetes-"):
            continue
        if key == "properties":
            out[key] = {name: _convert(sub) for name, sub in value.items()}
        elif key in ("items", "additionalProperties", "not"):
            out[key] = _convert(value)
        elif key in ("allOf", "anyOf", "oneOf"):
            out[key] = [_convert(v) for v in value]
        else:
            out[key] = value
    if schema.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    if schema.get("nullable") and "type" in out:
        out["type"] = [out["type"], "null"]
    out.pop("nullable", None)
    closed = (
        "properties" in schema
        and "additionalProperties" not in schema
        and not schema.get("x-kubernetes-preserve-unknown-fields")
    )
    if closed:
        out["additionalProperties"] = False
    return out


@cache
def validator(kind: str) -> jsonschema.Draft7Validator:
    for path in sorted(CRDS.glob("*.yaml")):
        crd = yaml.load(path.read_bytes(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        if crd["spec"]["names"]["kind"] == kind:
            stored = next(v for v in crd["spec"]["versions"] if v.get("storage"))
            schema = _convert(stored["schema"]["openAPIV3Schema"])
            return jsonschema.Draft7Validator(schema)
    raise KeyError(kind)


def schema_errors(obj: dict[str, Any]) -> list[str]:
    """Every way `obj` (with its `kind`) breaks its CRD's schema, as `path: message`."""
    found = validator(obj["kind"]).iter_errors(obj)
    return sorted(f"{'.'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}" for e in found)
