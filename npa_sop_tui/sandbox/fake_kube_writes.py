"""Create and patch for the fake Kubernetes API server: what the post-deploy repairs write.

POST on a collection creates (409 AlreadyExists when the name is taken); PATCH on an object
applies a JSON patch (`application/json-patch+json`: add, replace, remove, test) or a merge
patch (merge and strategic merge are treated alike). Watchers see the change as MODIFIED.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from aiohttp import web

from npa_sop_tui.sandbox.crd_validation import InvalidObject

Obj = dict[str, Any]


def _pointer(path: str) -> list[str]:
    return [p.replace("~1", "/").replace("~0", "~") for p in path.lstrip("/").split("/")]


def json_patch(obj: Obj, ops: list[Obj]) -> Obj:
    doc = copy.deepcopy(obj)
    for op in ops:
        *parents, last = _pointer(op["path"])
        target: Any = doc
        for part in parents:
            target = target[int(part)] if isinstance(target, list) else target[part]
        kind = op["op"]
        if kind in ("add", "replace"):
            if isinstance(target, list):
                index = len(target) if last == "-" else int(last)
                if kind == "add":
                    target.insert(index, op["value"])
                else:
                    target[index] = op["value"]
            else:
                if kind == "replace" and last not in target:
                    raise KeyError(op["path"])
                target[last] = op["value"]
        elif kind == "remove":
            del target[int(last) if isinstance(target, list) else last]
        elif kind == "test":
            have = target[int(last)] if isinstance(target, list) else target.get(last)
            if have != op["value"]:
                raise ValueError(f"test failed at {op['path']}")
        else:
            raise ValueError(f"unsupported op {kind}")
    return doc


def merge_patch(obj: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(obj) if isinstance(obj, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def add_write_routes(
    server: Any, app: web.Application, _status: Callable[[int, str, str], web.Response]
) -> None:
    """Routes on `app` for `server` (a FakeKubeServer); `_status` builds its error bodies."""

    async def create(request: web.Request) -> web.Response:
        res = server._lookup(request)
        if res is None:
            return _status(404, "NotFound", f"the server could not find {request.path}")
        body = await request.json()
        meta = body.setdefault("metadata", {})
        if res.namespaced:
            meta["namespace"] = request.match_info["ns"]
        key = server._key(res, body)
        if key in res.objects:
            plural = request.match_info["plural"]
            return _status(409, "AlreadyExists", f'{plural} "{meta.get("name")}" already exists')
        try:
            stored = server._apply(request.match_info["plural"], "ADDED", body)
        except InvalidObject as exc:
            return _status(422, "Invalid", str(exc))
        return web.json_response(stored, status=201)

    async def patch(request: web.Request) -> web.Response:
        res = server._lookup(request)
        if res is None:
            return _status(404, "NotFound", f"the server could not find {request.path}")
        ns = request.match_info.get("ns") or ""
        name = request.match_info["name"]
        obj = res.objects.get((ns, name))
        if obj is None:
            return _status(404, "NotFound", f'{request.match_info["plural"]} "{name}" not found')
        body = await request.json()
        try:
            if "json-patch" in request.content_type:
                new = json_patch(obj, body)
            else:
                new = merge_patch(obj, body)
        except (KeyError, IndexError, ValueError, TypeError) as exc:
            return _status(422, "Invalid", f"the patch cannot be applied: {exc}")
        try:
            return web.json_response(server._apply(request.match_info["plural"], "MODIFIED", new))
        except InvalidObject as exc:
            return _status(422, "Invalid", str(exc))

    for base in ("/api/v1", "/apis/{group}/{version}"):
        app.router.add_post(base + "/{plural}", create)
        app.router.add_post(base + "/namespaces/{ns}/{plural}", create)
        app.router.add_patch(base + "/{plural}/{name}", patch)
        app.router.add_patch(base + "/namespaces/{ns}/{plural}/{name}", patch)
