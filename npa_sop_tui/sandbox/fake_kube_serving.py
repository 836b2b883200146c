"""The read side of the fake Kubernetes API server: the routes the official client uses (get,
list, watch for core and custom resources), bearer-token checking and request recording.

Watch works as the real API server's does: resume from `resourceVersion` (410 Gone for a
version older than the retained history), `allowWatchBookmarks`, `timeoutSeconds`.
`FakeKubeServer` (fake_kube.py) holds the objects; the writes are fake_kube_writes.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
from typing import Any

from aiohttp import web

from npa_sop_tui.sandbox.fake_kube_resources import (
    Obj,
    Resource,
    Watcher,
    matches_selectors,
    status_event,
    status_response,
)


class KubeApiServing:
    """The HTTP handlers of `FakeKubeServer`, which provides the state named here."""

    token: str
    bookmark_interval: float
    requests: list[tuple[str, str]]
    _rv: int
    _resources: dict[str, Resource]

    def _bookmark(self, res: Resource) -> Obj:
        return {
            "type": "BOOKMARK",
            "object": {
                "kind": res.kind,
                "apiVersion": res.api_version,
                "metadata": {"resourceVersion": str(self._rv)},
            },
        }

    def _make_app(self) -> web.Application:
        @web.middleware
        async def record(request: web.Request, handler: Any) -> web.StreamResponse:
            self.requests.append((request.method, request.path_qs))
            if request.headers.get("Authorization") != f"Bearer {self.token}":
                return status_response(401, "Unauthorized", "no or wrong bearer token")
            return await handler(request)

        app = web.Application(middlewares=[record])
        app.router.add_get("/api/v1/{plural}", self._handle)
        app.router.add_get("/api/v1/namespaces/{ns}/{plural}", self._handle)
        app.router.add_get("/apis/{group}/{version}/{plural}", self._handle)
        app.router.add_get("/apis/{group}/{version}/namespaces/{ns}/{plural}", self._handle)
        app.router.add_get("/api/v1/{plural}/{name}", self._get_one)
        app.router.add_get("/api/v1/namespaces/{ns}/{plural}/{name}", self._get_one)
        app.router.add_get("/apis/{group}/{version}/{plural}/{name}", self._get_one)
        app.router.add_get("/apis/{group}/{version}/namespaces/{ns}/{plural}/{name}", self._get_one)
        from npa_sop_tui.sandbox.fake_kube_writes import add_write_routes

        add_write_routes(self, app, status_response)
        app.router.add_route("*", "/{tail:.*}", self._not_found)
        return app

    async def _not_found(self, request: web.Request) -> web.Response:
        return status_response(404, "NotFound", f"the server could not find {request.path}")

    def _lookup(self, request: web.Request) -> Resource | None:
        info = request.match_info
        plural = info["plural"]
        res = self._resources.get(plural)
        if res is None:
            return None
        group = info.get("group")
        api = f"{group}/{info['version']}" if group else "v1"
        if api != res.api_version:
            return None
        if ("ns" in info) != res.namespaced and "ns" in info:
            return None
        return res

    async def _get_one(self, request: web.Request) -> web.Response:
        res = self._lookup(request)
        if res is None:
            return await self._not_found(request)
        if res.fail_next:
            return status_response(res.fail_next.pop(0), "InternalError", "scripted failure")
        ns = request.match_info.get("ns") or ""
        obj = res.objects.get((ns, request.match_info["name"]))
        if obj is None:
            return status_response(
                404,
                "NotFound",
                f'{request.match_info["plural"]} "{request.match_info["name"]}" not found',
            )
        return web.json_response(obj)

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        res = self._lookup(request)
        if res is None:
            return await self._not_found(request)
        if res.fail_next:
            code = res.fail_next.pop(0)
            return status_response(code, "InternalError", "scripted failure")
        ns = request.match_info.get("ns")
        if request.query.get("watch", "").lower() in ("true", "1"):
            return await self._watch(request, res, ns)
        items = [
            copy.deepcopy(o)
            for (ons, _), o in sorted(res.objects.items())
            if ns is None or ons == ns
        ]
        items = [o for o in items if matches_selectors(o, request.query)]
        return web.json_response(
            {
                "apiVersion": res.api_version,
                "kind": f"{res.kind}List",
                "metadata": {"resourceVersion": str(self._rv)},
                "items": items,
            }
        )

    async def _watch(
        self, request: web.Request, res: Resource, ns: str | None
    ) -> web.StreamResponse:
        since_raw = request.query.get("resourceVersion") or "0"
        since = int(since_raw) if since_raw.isdigit() else 0
        timeout = float(request.query.get("timeoutSeconds") or 1800)
        bookmarks = request.query.get("allowWatchBookmarks", "").lower() in ("true", "1")
        resp = web.StreamResponse(headers={"Content-Type": "application/json"})
        await resp.prepare(request)
        queue: asyncio.Queue[Obj | None] = asyncio.Queue()

        def visible(ev: Obj) -> bool:
            obj = ev["object"]
            if ev["type"] in ("BOOKMARK", "ERROR"):
                return True
            if ns is not None and obj["metadata"].get("namespace") != ns:
                return False
            return matches_selectors(obj, request.query)

        if since and since < res.oldest_rv:
            queue.put_nowait(status_event(410, "Expired", f"too old resource version: {since}"))
            queue.put_nowait(None)
        else:
            for rv, kind, obj in res.history:
                if rv > since:
                    queue.put_nowait({"type": kind, "object": copy.deepcopy(obj)})
        watcher = Watcher(queue, resp)
        res.watchers.append(watcher)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        next_bookmark = loop.time() + self.bookmark_interval
        try:
            while True:
                now = loop.time()
                if now >= deadline:
                    break
                wait = deadline - now
                if bookmarks:
                    wait = min(wait, max(0.0, next_bookmark - now))
                try:
                    ev = await asyncio.wait_for(queue.get(), wait)
                except TimeoutError:
                    if bookmarks and loop.time() >= next_bookmark:
                        next_bookmark = loop.time() + self.bookmark_interval
                        await resp.write((json.dumps(self._bookmark(res)) + "\n").encode())
                    continue
                if ev is None:
                    break
                if visible(ev):
                    await resp.write((json.dumps(ev) + "\n").encode())
            with contextlib.suppress(ConnectionResetError, RuntimeError):
                await resp.write_eof()
        except (ConnectionResetError, asyncio.CancelledError, RuntimeError):
            pass
        finally:
            with contextlib.suppress(ValueError):
                res.watchers.remove(watcher)
        return resp
