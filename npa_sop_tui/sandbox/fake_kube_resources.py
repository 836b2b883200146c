"""What the fake Kubernetes API server serves: its resource kinds, each one's in-memory state
(objects, history for resuming watches, scripted failures, open watches), the equality-only
selectors npa uses, and the API's `Status` bodies for errors."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from npa_sop_tui.status.crd_contract import api_version, group_version_plural

Obj = dict[str, Any]

CORE_RESOURCES: dict[str, tuple[str, str, bool]] = {
    # resource key → (kind, apiVersion, namespaced)
    "nodes": ("Node", "v1", False),
    "pods": ("Pod", "v1", True),
    "services": ("Service", "v1", True),
    "events": ("Event", "v1", True),
    # read and written by the post-deploy repairs (see fake_kube_writes.py)
    "configmaps": ("ConfigMap", "v1", True),
    "customresourcedefinitions": ("CustomResourceDefinition", "apiextensions.k8s.io/v1", False),
}
SLURM_GROUP = "slurm.nebius.ai"
# Soperator's kinds, as its CRDs name them (derived data: status/crd_contract.py).
SOPERATOR_CRDS: dict[str, tuple[str, str, bool]] = {
    group_version_plural(kind)[2]: (kind, api_version(kind), True)
    for kind in ("SlurmCluster", "NodeSet", "ActiveCheck")
}


@dataclass
class Watcher:
    queue: asyncio.Queue[Obj | None]
    response: web.StreamResponse


@dataclass
class Resource:
    kind: str
    api_version: str
    namespaced: bool
    objects: dict[tuple[str, str], Obj] = field(default_factory=dict)  # (ns, name) → obj
    history: list[tuple[int, str, Obj]] = field(default_factory=list)  # (rv, type, obj)
    oldest_rv: int = 0  # watches from a version below this get 410 Gone
    fail_next: list[int] = field(default_factory=list)  # HTTP statuses to answer next
    watchers: list[Watcher] = field(default_factory=list)


def matches_selectors(obj: Obj, query: Any) -> bool:
    """Equality-only label and field selectors (what npa uses)."""
    labels = (obj.get("metadata") or {}).get("labels") or {}
    for term in filter(None, (query.get("labelSelector") or "").split(",")):
        key, _, value = term.partition("=")
        if labels.get(key) != value.lstrip("="):
            return False
    for term in filter(None, (query.get("fieldSelector") or "").split(",")):
        key, _, value = term.partition("=")
        if key == "metadata.name" and obj["metadata"].get("name") != value.lstrip("="):
            return False
        if key == "metadata.namespace" and obj["metadata"].get("namespace") != value.lstrip("="):
            return False
    return True


def status_body(code: int, reason: str, message: str) -> Obj:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "reason": reason,
        "message": message,
        "code": code,
    }


def status_response(code: int, reason: str, message: str) -> web.Response:
    return web.json_response(status_body(code, reason, message), status=code)


def status_event(code: int, reason: str, message: str) -> Obj:
    return {"type": "ERROR", "object": status_body(code, reason, message)}
