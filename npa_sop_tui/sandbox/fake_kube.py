"""A small Kubernetes API server (aiohttp) that speaks list and watch, for tests and the sandbox.

It keeps objects in memory with a global resourceVersion, serves the paths the official
`kubernetes` client uses for the resources npa reads (nodes, pods, services, and custom
resources once their "CRD" is registered), and implements watch the way the real API server
does: resume from `resourceVersion`, `allowWatchBookmarks`, `timeoutSeconds`, `410 Gone`
for versions older than the retained history.

Faults can be scripted while it runs: fail the next N requests with 500, drop every open
watch, answer 410 Gone, expire a bookmark. Objects can be added, modified and deleted from
Python at any time (from any thread); open watches see the change at once.

    with FakeKubeServer() as srv:
        srv.write_kubeconfig(path, "nebius-demo-slurm")
        srv.add("nodes", make_node("worker-0", nodeset="worker", ready=False))
        srv.patch_status("nodes", "worker-0", ready_status(True))
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from aiohttp import web

from npa_sop_tui.fsutil import atomic_write_text
from npa_sop_tui.sandbox.fake_kube_objects import (  # the builders, re-exported for callers
    SLURMCLUSTER_CONDITIONS,
    make_login_service,
    make_node,
    make_nodeset,
    make_pod,
    make_slurmcluster,
    set_node_ready,
)
from npa_sop_tui.status.crd_contract import api_version, group_version_plural

T = TypeVar("T")
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
class _Watcher:
    queue: asyncio.Queue[Obj | None]
    response: web.StreamResponse


@dataclass
class _Resource:
    kind: str
    api_version: str
    namespaced: bool
    objects: dict[tuple[str, str], Obj] = field(default_factory=dict)  # (ns, name) → obj
    history: list[tuple[int, str, Obj]] = field(default_factory=list)  # (rv, type, obj)
    oldest_rv: int = 0  # watches from a version below this get 410 Gone
    fail_next: list[int] = field(default_factory=list)  # HTTP statuses to answer next
    watchers: list[_Watcher] = field(default_factory=list)


class FakeKubeServer:
    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        token: str = "fake-token",
        bookmark_interval: float = 1.0,
        crds: bool = True,
    ) -> None:
        self.host, self.port, self.token = host, port, token
        self.bookmark_interval = bookmark_interval
        self.requests: list[tuple[str, str]] = []  # (method, path?query) of every request
        self._rv = 100
        self._resources: dict[str, _Resource] = {
            key: _Resource(kind, api, ns) for key, (kind, api, ns) in CORE_RESOURCES.items()
        }
        if crds:
            for key, (kind, api, ns) in SOPERATOR_CRDS.items():
                self._resources[key] = _Resource(kind, api, ns)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._ready = threading.Event()

    # --- running -------------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    async def start_in_loop(self) -> None:
        """Serve from the running loop (the TUI sandbox does this)."""
        self._loop = asyncio.get_running_loop()
        self._runner = web.AppRunner(self._make_app(), handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        server = site._server
        assert server is not None
        self.port = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]

    async def stop_in_loop(self) -> None:
        for res in self._resources.values():
            for w in list(res.watchers):
                w.queue.put_nowait(None)
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    def start(self) -> FakeKubeServer:
        """Serve from a background thread (for the blocking client and sync tests).

        May be called again after `stop()`: the same port and objects come back (an outage).
        """
        error: list[BaseException] = []
        self._ready.clear()

        def run() -> None:
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self.start_in_loop())
            except BaseException as exc:
                error.append(exc)
                self._ready.set()
                return
            self._ready.set()
            loop.run_forever()
            loop.run_until_complete(self.stop_in_loop())
            loop.close()

        self._thread = threading.Thread(target=run, name="fake-kube", daemon=True)
        self._thread.start()
        self._ready.wait(10)
        if error:
            raise error[0]
        return self

    def stop(self) -> None:
        if self._thread is not None and self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
            self._thread = None

    def __enter__(self) -> FakeKubeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _call(self, fn: Callable[[], T]) -> T:
        """Run a mutation on the server's loop, from whichever thread the caller is on."""
        loop = self._loop
        if loop is None:
            return fn()
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            return fn()

        async def wrapper() -> T:
            return fn()

        return asyncio.run_coroutine_threadsafe(wrapper(), loop).result(10)

    def write_kubeconfig(self, path: Path, context: str, *, namespace: str = "soperator") -> Path:
        """A kubeconfig whose `context` points here; current-context is a decoy on purpose."""
        doc = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "fake", "cluster": {"server": self.url}}],
            "contexts": [
                {
                    "name": context,
                    "context": {"cluster": "fake", "user": "tester", "namespace": namespace},
                },
                {"name": "decoy", "context": {"cluster": "nowhere", "user": "tester"}},
            ],
            "current-context": "decoy",
            "users": [{"name": "tester", "user": {"token": self.token}}],
        }
        extra_cluster = {"name": "nowhere", "cluster": {"server": "http://127.0.0.1:9"}}
        doc["clusters"].append(extra_cluster)  # type: ignore[attr-defined]
        atomic_write_text(Path(path), json.dumps(doc, indent=2), mode=0o600)
        return Path(path)

    # --- the object API ------------------------------------------------------------------

    def register_crd(self, key: str) -> None:
        kind, api, ns = SOPERATOR_CRDS[key]
        self._call(lambda: self._resources.setdefault(key, _Resource(kind, api, ns)))

    def unregister_crd(self, key: str) -> None:
        self._call(lambda: self._resources.pop(key, None))

    def add(self, resource: str, obj: Obj) -> Obj:
        return self._call(lambda: self._apply(resource, "ADDED", obj))

    def modify(self, resource: str, obj: Obj) -> Obj:
        return self._call(lambda: self._apply(resource, "MODIFIED", obj))

    def upsert(self, resource: str, obj: Obj) -> Obj:
        def do() -> Obj:
            res = self._resources[resource]
            exists = self._key(res, obj) in res.objects
            return self._apply(resource, "MODIFIED" if exists else "ADDED", obj)

        return self._call(do)

    def patch(
        self, resource: str, name: str, mutate: Callable[[Obj], None], *, namespace: str = ""
    ) -> Obj:
        """Change an object in place with `mutate(obj)`; watchers get MODIFIED."""

        def do() -> Obj:
            res = self._resources[resource]
            ns = namespace if res.namespaced else ""
            obj = copy.deepcopy(
                res.objects[(ns or "soperator", name) if res.namespaced else ("", name)]
            )
            mutate(obj)
            return self._apply(resource, "MODIFIED", obj)

        return self._call(do)

    def delete(self, resource: str, name: str, *, namespace: str = "soperator") -> None:
        def do() -> None:
            res = self._resources[resource]
            key = (namespace if res.namespaced else "", name)
            obj = res.objects.pop(key)
            self._rv += 1
            gone = copy.deepcopy(obj)
            gone["metadata"]["resourceVersion"] = str(self._rv)
            self._publish(res, "DELETED", gone)

        self._call(do)

    def get(self, resource: str, name: str, *, namespace: str = "soperator") -> Obj | None:
        res = self._resources[resource]
        obj = res.objects.get((namespace if res.namespaced else "", name))
        return copy.deepcopy(obj) if obj is not None else None

    # --- faults --------------------------------------------------------------------------

    def fail_next(self, resource: str, count: int = 1, status: int = 500) -> None:
        """The next `count` list/watch requests for `resource` answer HTTP `status`."""
        self._call(lambda: self._resources[resource].fail_next.extend([status] * count))

    def drop_watches(self, resource: str | None = None) -> int:
        """Cut every open watch stream (like a load balancer dropping idle connections)."""

        def do() -> int:
            dropped = 0
            for key, res in self._resources.items():
                if resource not in (None, key):
                    continue
                for w in list(res.watchers):
                    transport = w.response._req.transport if w.response._req else None
                    if transport is not None:
                        transport.abort()
                    w.queue.put_nowait(None)
                    dropped += 1
            return dropped

        return self._call(do)

    def gone(self, resource: str) -> None:
        """Compact history and tell open watches 410 Gone: clients must re-list."""

        def do() -> None:
            res = self._resources[resource]
            res.oldest_rv = self._rv  # a watch from an older version than now gets 410
            res.history.clear()
            for w in list(res.watchers):
                w.queue.put_nowait(_status_event(410, "Expired", "too old resource version"))
                w.queue.put_nowait(None)

        self._call(do)

    def expire_bookmark(self, resource: str) -> None:
        """Send a bookmark, then compact past it and drop the watch.

        The client resumes from the bookmark's version, which is now too old → 410 → re-list.
        """

        def do() -> None:
            res = self._resources[resource]
            self._rv += 1
            for w in list(res.watchers):
                w.queue.put_nowait(self._bookmark(res))
            self._rv += 1
            res.oldest_rv = self._rv  # the bookmark's version is now too old
            res.history.clear()
            for w in list(res.watchers):
                w.queue.put_nowait(None)

        self._call(do)

    # --- internals -----------------------------------------------------------------------

    def _key(self, res: _Resource, obj: Obj) -> tuple[str, str]:
        meta = obj.get("metadata") or {}
        ns = (meta.get("namespace") or "soperator") if res.namespaced else ""
        return ns, str(meta["name"])

    def _apply(self, resource: str, kind: str, obj: Obj) -> Obj:
        res = self._resources[resource]
        obj = copy.deepcopy(obj)
        obj.setdefault("apiVersion", res.api_version)
        obj.setdefault("kind", res.kind)
        meta = obj.setdefault("metadata", {})
        if res.namespaced:
            meta.setdefault("namespace", "soperator")
        meta.setdefault("uid", f"uid-{resource}-{meta['name']}")
        meta.setdefault("creationTimestamp", "2026-11-30T00:00:00Z")
        self._rv += 1
        meta["resourceVersion"] = str(self._rv)
        res.objects[self._key(res, obj)] = obj
        self._publish(res, kind, obj)
        return copy.deepcopy(obj)

    def _publish(self, res: _Resource, kind: str, obj: Obj) -> None:
        rv = int(obj["metadata"]["resourceVersion"])
        res.history.append((rv, kind, copy.deepcopy(obj)))
        for w in res.watchers:
            w.queue.put_nowait({"type": kind, "object": copy.deepcopy(obj)})

    def _bookmark(self, res: _Resource) -> Obj:
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
                return _status(401, "Unauthorized", "no or wrong bearer token")
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

        add_write_routes(self, app, _status)
        app.router.add_route("*", "/{tail:.*}", self._not_found)
        return app

    async def _not_found(self, request: web.Request) -> web.Response:
        return _status(404, "NotFound", f"the server could not find {request.path}")

    def _lookup(self, request: web.Request) -> _Resource | None:
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
            return _status(res.fail_next.pop(0), "InternalError", "scripted failure")
        ns = request.match_info.get("ns") or ""
        obj = res.objects.get((ns, request.match_info["name"]))
        if obj is None:
            return _status(
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
            return _status(code, "InternalError", "scripted failure")
        ns = request.match_info.get("ns")
        if request.query.get("watch", "").lower() in ("true", "1"):
            return await self._watch(request, res, ns)
        items = [
            copy.deepcopy(o)
            for (ons, _), o in sorted(res.objects.items())
            if ns is None or ons == ns
        ]
        items = [o for o in items if _matches(o, request.query)]
        return web.json_response(
            {
                "apiVersion": res.api_version,
                "kind": f"{res.kind}List",
                "metadata": {"resourceVersion": str(self._rv)},
                "items": items,
            }
        )

    async def _watch(
        self, request: web.Request, res: _Resource, ns: str | None
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
            return _matches(obj, request.query)

        if since and since < res.oldest_rv:
            queue.put_nowait(_status_event(410, "Expired", f"too old resource version: {since}"))
            queue.put_nowait(None)
        else:
            for rv, kind, obj in res.history:
                if rv > since:
                    queue.put_nowait({"type": kind, "object": copy.deepcopy(obj)})
        watcher = _Watcher(queue, resp)
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


def _matches(obj: Obj, query: Any) -> bool:
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


def _status_body(code: int, reason: str, message: str) -> Obj:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "reason": reason,
        "message": message,
        "code": code,
    }


def _status(code: int, reason: str, message: str) -> web.Response:
    return web.json_response(_status_body(code, reason, message), status=code)


def _status_event(code: int, reason: str, message: str) -> Obj:
    return {"type": "ERROR", "object": _status_body(code, reason, message)}


# --- standalone demo server ----------------------------------------------------------------


def bring_up(srv: FakeKubeServer, *, workers: int, login_ip: str, step: float) -> None:
    """Play a Soperator bring-up: system nodes, operator CRs, workers turning Ready, login IP."""
    import time

    srv.add("nodes", make_node("system-0", nodeset="system"))
    srv.add("nodes", make_node("controller-0", nodeset="controller"))
    srv.add("services", make_login_service(None))
    srv.add(
        "slurmclusters",
        make_slurmcluster("Pending", conditions=dict.fromkeys(SLURMCLUSTER_CONDITIONS, "Unknown")),
    )
    srv.add("nodesets", make_nodeset("worker", replicas=workers, ready=0, phase="Provisioning"))
    for i in range(workers):
        srv.add(
            "pods",
            make_pod(
                f"worker-{i}",
                "nodeset",
                phase="Pending",
                ready=False,
                nodeset="worker",
                unschedulable_message=(
                    "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector"
                ),
            ),
        )
    time.sleep(step)
    srv.upsert(
        "slurmclusters", make_slurmcluster("Not available", conditions={"LoginAvailable": False})
    )
    srv.add("pods", make_pod("controller-0", "controller", node="controller-0"))
    for i in range(workers):
        time.sleep(step)
        srv.add("nodes", make_node(f"worker-node-{i}", pool="worker", gpu=True, ready=False))
        time.sleep(step / 2)
        srv.patch("nodes", f"worker-node-{i}", lambda o: set_node_ready(o, True))
        srv.upsert(
            "pods", make_pod(f"worker-{i}", "nodeset", nodeset="worker", node=f"worker-node-{i}")
        )
        srv.upsert(
            "nodesets",
            make_nodeset(
                "worker",
                replicas=workers,
                ready=i + 1,
                phase="Ready" if i + 1 == workers else "Provisioning",
            ),
        )
    time.sleep(step)
    srv.add("pods", make_pod("login-0", "login"))
    srv.upsert("slurmclusters", make_slurmcluster("Available"))
    time.sleep(step)
    srv.upsert("services", make_login_service(login_ip))


def _main(argv: list[str] | None = None) -> int:
    import argparse
    import signal

    p = argparse.ArgumentParser(
        prog="python -m npa_sop_tui.sandbox.fake_kube",
        description="Serve a fake Kubernetes API with Soperator objects and write a kubeconfig.",
    )
    p.add_argument("--kubeconfig", type=Path, required=True, help="where to write the kubeconfig")
    p.add_argument("--context", default="nebius-lab-slurm")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--login-ip", default="127.0.0.1")
    p.add_argument("--step", type=float, default=2.0, help="seconds between bring-up steps")
    args = p.parse_args(argv)
    with FakeKubeServer() as srv:
        srv.write_kubeconfig(args.kubeconfig, args.context)
        print(
            f"fake API at {srv.url}; kubeconfig {args.kubeconfig} context {args.context}",
            flush=True,
        )
        bring_up(srv, workers=args.workers, login_ip=args.login_ip, step=args.step)
        print("bring-up done; Ctrl-C to stop", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            signal.pause()
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
