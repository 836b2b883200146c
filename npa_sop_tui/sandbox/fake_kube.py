"""A small Kubernetes API server (aiohttp) that speaks list and watch, for tests and the sandbox.

It keeps objects in memory with a global resourceVersion, serves the paths the official
`kubernetes` client uses for the resources npa reads (nodes, pods, services, and custom
resources once their "CRD" is registered), and implements watch the way the real API server
does: resume from `resourceVersion`, `allowWatchBookmarks`, `timeoutSeconds`, `410 Gone`
for versions older than the retained history.

Soperator's objects are checked against the real CRDs of one release before they are stored
(sandbox/crd_validation.py): an invalid one raises `InvalidObject` from the object API and is
refused with 422 `Invalid` over HTTP, as the real API server refuses it.

Faults can be scripted while it runs: fail the next N requests with 500, drop every open
watch, answer 410 Gone, expire a bookmark. Objects can be added, modified and deleted from
Python at any time (from any thread); open watches see the change at once. The HTTP side is
fake_kube_serving.py (reads, watch) and fake_kube_writes.py; the objects' shapes are built by
fake_kube_objects.py; fake_kube_demo.py plays a bring-up to watch by hand.

    with FakeKubeServer() as srv:
        srv.write_kubeconfig(path, "nebius-demo-slurm")
        srv.add("nodes", make_node("worker-0", nodeset="worker", ready=False))
        srv.patch("nodes", "worker-0", lambda obj: set_node_ready(obj, True))
"""

from __future__ import annotations

import asyncio
import copy
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from aiohttp import web

from npa_sop_tui.home.fsutil import atomic_write_text
from npa_sop_tui.sandbox import crd_validation
from npa_sop_tui.sandbox.crd_validation import DEFAULT_RELEASE
from npa_sop_tui.sandbox.fake_kube_resources import (
    CORE_RESOURCES,
    SOPERATOR_CRDS,
    Obj,
    Resource,
    status_event,
)
from npa_sop_tui.sandbox.fake_kube_serving import KubeApiServing

T = TypeVar("T")


class FakeKubeServer(KubeApiServing):
    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        token: str = "fake-token",
        bookmark_interval: float = 1.0,
        crds: bool = True,
        crd_release: str = DEFAULT_RELEASE,
    ) -> None:
        """`crd_release`: whose CRDs Soperator's objects must satisfy (crd_schemas/<release>:
        `4.1.6`, the one every 4.1.x recipe installs, or `5.0.0-main-c238d993`)."""
        self.host, self.port, self.token = host, port, token
        self.crd_release = crd_release
        self.bookmark_interval = bookmark_interval
        self.requests: list[tuple[str, str]] = []  # (method, path?query) of every request
        self._rv = 100
        self._resources: dict[str, Resource] = {
            key: Resource(kind, api, ns) for key, (kind, api, ns) in CORE_RESOURCES.items()
        }
        if crds:
            for key, (kind, api, ns) in SOPERATOR_CRDS.items():
                self._resources[key] = Resource(kind, api, ns)
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
        self._call(lambda: self._resources.setdefault(key, Resource(kind, api, ns)))

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
                w.queue.put_nowait(status_event(410, "Expired", "too old resource version"))
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

    def _key(self, res: Resource, obj: Obj) -> tuple[str, str]:
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
        if resource in SOPERATOR_CRDS:  # as the API server: defaulted, and never stored invalid
            obj = crd_validation.admit(obj, self.crd_release)
            meta = obj["metadata"]
        self._rv += 1
        meta["resourceVersion"] = str(self._rv)
        res.objects[self._key(res, obj)] = obj
        self._publish(res, kind, obj)
        return copy.deepcopy(obj)

    def _publish(self, res: Resource, kind: str, obj: Obj) -> None:
        rv = int(obj["metadata"]["resourceVersion"])
        res.history.append((rv, kind, copy.deepcopy(obj)))
        for w in res.watchers:
            w.queue.put_nowait({"type": kind, "object": copy.deepcopy(obj)})
