#!/usr/bin/env python3
"""Derive what npa reads from Soperator's custom resources out of the real CRDs.

    python scripts/gen_crd_contract.py [--release 4.1.6|main]
    python scripts/gen_crd_contract.py --dir DIR --tag TAG --commit SHA --out FILE
        --schemas-out FILE

A release names its folder of CRDs, tag, commit and outputs (RELEASES below): `4.1.6`
(the CRDs every 4.1.x recipe deploys) and `main` (5.0.0, not deployable yet). `<dir>` holds
the CRDs exactly as nebius/soperator publishes them in `config/crd/bases/` at that tag. The
contract (`npa_sop_tui/status/soperator_crds*.json`) is data, the way recipe contracts come
from `variables.tf` (scripts/gen_recipe_contract.py):

- per kind: group, served/storage versions, plural/singular names, scope;
- every enumeration and every list of required fields in the stored version's schema, by
  field path (`spec.checkType`, `status.k8sJobsStatus`, …);
- the fields npa reads (`FIELDS_READ` below), each with its type and enum: the script fails
  when one of them does not exist in the schema, so a new operator version that renames a
  field is caught here, not on a user's cluster;
- the upstream tag, commit and each file's SHA-256.

The schemas (`npa_sop_tui/sandbox/crd_schemas/<tag>.json.gz`) are each served kind's stored
`openAPIV3Schema` without its descriptions: the fake Kubernetes API server validates every
object it stores against them (sandbox/crd_validation.py), as the real API server does.

A path names object properties with `.`, list items with `[]` and map values with `{}`.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

REPOSITORY = "nebius/soperator"
CRD_PATH = "config/crd/bases"
ROOT = Path(__file__).resolve().parent.parent
CRDS = ROOT / "tests" / "data" / "soperator-crds"
STATUS = ROOT / "npa_sop_tui" / "status"
SCHEMAS = ROOT / "npa_sop_tui" / "sandbox" / "crd_schemas"


@dataclass(frozen=True)
class Release:
    tag: str
    commit: str
    out: Path

    @property
    def dir(self) -> Path:
        return CRDS / self.tag

    @property
    def schemas_out(self) -> Path:
        return SCHEMAS / f"{self.tag}.json.gz"


RELEASES = {
    "4.1.6": Release(
        "4.1.6", "65e088abe53b2a52bed18b9536196139f693ab20", STATUS / "soperator_crds.json"
    ),
    "main": Release(
        "5.0.0-main-c238d993",
        "c238d993341a9f52b132062fbc3cb22f0fb63578",
        STATUS / "soperator_crds_main.json",
    ),
}

# What npa reads (status/kube.py, status/active_checks.py, status/verdict*.py, the sandbox).
FIELDS_READ: dict[str, tuple[str, ...]] = {
    "SlurmCluster": (
        "spec.slurmNodes.login.size",
        "spec.plugStackConfig",
        "status.phase",
        "status.conditions[].type",
        "status.conditions[].status",
        "status.conditions[].reason",
        "status.conditions[].message",
        "status.readyLogin",
    ),
    "NodeSet": (
        "spec.replicas",
        "spec.ephemeralNodes",
        "status.phase",
        "status.replicas",
        "status.conditions[].type",
        "status.conditions[].status",
    ),
    "ActiveCheck": (
        "spec.name",
        "spec.slurmClusterRefName",
        "spec.checkType",
        "spec.runAfterCreation",
        "spec.suspend",
        "spec.schedule",
        "spec.failureReactions.commentSlurmNode",
        "spec.failureReactions.drainSlurmNode",
        "status.k8sJobsStatus.lastJobName",
        "status.k8sJobsStatus.lastJobStatus",
        "status.k8sJobsStatus.lastJobScheduleTime",
        "status.slurmJobsStatus.lastRunId",
        "status.slurmJobsStatus.lastRunStatus",
        "status.slurmJobsStatus.lastRunSubmitTime",
        "status.slurmJobsStatus.lastRunFailJobsAndReasons[].jobID",
        "status.slurmJobsStatus.lastRunFailJobsAndReasons[].reason",
        "status.slurmJobsStatus.lastRunErrorJobsAndReasons[].reason",
    ),
}


def _walk(schema: dict[str, Any], path: str, out: dict[str, dict[str, Any]]) -> None:
    """Every field of `schema` by path: its type, enum and required children."""
    entry: dict[str, Any] = {"type": schema.get("type", "any")}
    if "enum" in schema:
        entry["enum"] = list(schema["enum"])
    if schema.get("required"):
        entry["required"] = sorted(schema["required"])
    if schema.get("x-kubernetes-preserve-unknown-fields"):
        entry["preserve_unknown_fields"] = True
    out[path or "(root)"] = entry
    for name, sub in (schema.get("properties") or {}).items():
        _walk(sub, f"{path}.{name}" if path else name, out)
    if isinstance(schema.get("items"), dict):
        _walk(schema["items"], f"{path}[]", out)
    if isinstance(schema.get("additionalProperties"), dict):
        _walk(schema["additionalProperties"], f"{path}{{}}", out)


def _structural(schema: Any) -> Any:
    """A schema without what validation does not read (descriptions, examples)."""
    if isinstance(schema, dict):
        return {k: _structural(v) for k, v in schema.items() if k not in ("description", "example")}
    if isinstance(schema, list):
        return [_structural(v) for v in schema]
    return schema


def schemas(folder: Path) -> dict[str, Any]:
    """The stored version's schema of each kind npa reads (FIELDS_READ's kinds), by kind."""
    out: dict[str, Any] = {}
    for path in sorted(folder.glob("*.yaml")):
        crd = yaml.load(path.read_bytes(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        kind = crd["spec"]["names"]["kind"]
        if kind in FIELDS_READ:
            stored = next(v for v in crd["spec"]["versions"] if v.get("storage"))
            out[kind] = _structural(stored["schema"]["openAPIV3Schema"])
    return out


def schema_bytes(folder: Path) -> bytes:
    """The gzip'd schemas file; mtime 0 and sorted keys, so the bytes depend on the CRDs only."""
    text = json.dumps(schemas(folder), sort_keys=True, separators=(",", ":"))
    return gzip.compress(text.encode(), compresslevel=9, mtime=0)


def derive(folder: Path, tag: str, commit: str) -> dict[str, Any]:
    kinds: dict[str, Any] = {}
    files: dict[str, str] = {}
    for path in sorted(folder.glob("*.yaml")):
        raw = path.read_bytes()
        files[path.name] = hashlib.sha256(raw).hexdigest()
        crd = yaml.load(raw, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        spec = crd["spec"]
        kind = spec["names"]["kind"]
        stored = next(v for v in spec["versions"] if v.get("storage"))
        fields: dict[str, dict[str, Any]] = {}
        _walk(stored["schema"]["openAPIV3Schema"], "", fields)
        read = {}
        for wanted in FIELDS_READ.get(kind, ()):
            if wanted not in fields:
                raise SystemExit(f"{path.name}: npa reads {kind} {wanted}, not in the schema")
            read[wanted] = fields[wanted]
        kinds[kind] = {
            "file": path.name,
            "group": spec["group"],
            "plural": spec["names"]["plural"],
            "singular": spec["names"]["singular"],
            "scope": spec["scope"],
            "versions": [
                {
                    "name": v["name"],
                    "served": bool(v.get("served")),
                    "storage": bool(v.get("storage")),
                }
                for v in spec["versions"]
            ],
            "storage_version": stored["name"],
            "fields_read": read,
            "enums": {p: f["enum"] for p, f in fields.items() if "enum" in f},
            "required": {p: f["required"] for p, f in fields.items() if "required" in f},
        }
    missing = set(FIELDS_READ) - set(kinds)
    if missing:
        raise SystemExit(f"{folder}: no CRD for {', '.join(sorted(missing))}")
    return {
        "source": {"repository": REPOSITORY, "tag": tag, "commit": commit, "path": CRD_PATH},
        "generated_by": "scripts/gen_crd_contract.py",
        "files": files,
        "kinds": kinds,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--release", choices=sorted(RELEASES), default="4.1.6")
    parser.add_argument("--dir", type=Path)
    parser.add_argument("--tag")
    parser.add_argument("--commit")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--schemas-out", type=Path)
    args = parser.parse_args(argv)
    release = RELEASES[args.release]
    folder = args.dir or release.dir
    tag, commit = args.tag or release.tag, args.commit or release.commit
    out, schemas_out = args.out or release.out, args.schemas_out or release.schemas_out
    data = derive(folder, tag, commit)
    out.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    schemas_out.parent.mkdir(parents=True, exist_ok=True)
    schemas_out.write_bytes(schema_bytes(folder))
    print(f"wrote {out} and {schemas_out} ({', '.join(data['kinds'])})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
