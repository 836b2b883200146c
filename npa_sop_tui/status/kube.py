"""Kubernetes collector: list + watch through the official client, in worker threads.

One daemon thread per resource runs the informer loop: list (remember resourceVersion) →
watch from it with bookmarks and a server-side timeout → on a clean end, watch again from
the last version seen (bookmarks keep it current) → on 410 Gone re-list → on any other error
back off and re-list. The blocking client never runs on the event loop; threads hand results
to the loop with `call_soon_threadsafe`. Dedicated daemon threads (not `to_thread`) are used
because a watch blocks for up to its timeout, and the default executor would make
`asyncio.run()` wait for it at shutdown.

Custom resources whose CRD is not installed yet answer 404; that is "not yet", polled again
later, and never an error.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from npa_sop_tui.status.model import (
    ComponentPods,
    Condition,
    KubeNode,
    KubeState,
    NodeGroup,
    NodeSetInfo,
    PodInfo,
    SlurmClusterInfo,
)

NAMESPACE = "soperator"
SLURM_GROUP = "slurm.nebius.ai"
LOGIN_SERVICE = "soperator-login-svc"
CLUSTER_CR = "soperator"

NODESET_LABEL = "slurm.nebius.ai/nodeset"
NODESET_NAME_LABEL = "slurm.nebius.ai/nodeset-name"
COMPONENT_LABEL = "app.kubernetes.io/component"

# Node conditions worth a line in the dashboard (Soperator's health-check and GPU
# conditions), shown when they are "True" (for Ready: when not True).
NOTABLE_NODE_CONDITIONS = frozenset(
    {
        "SlurmNodeDrain",
        "SlurmNodeReboot",
        "SoperatorChecksNodeDegraded",
        "SoperatorChecksNodeMaintenance",
        "HardwareIssuesSuspected",
        "NebiusMaintenanceScheduled",
        "NebiusGPUError",
        "NebiusBootDiskIOError",
        "NebiusContainerRuntimeError",
        "MemoryPressure",
        "DiskPressure",
        "PIDPressure",
        "NetworkUnavailable",
    }
)


class WatchGone(Exception):
    """The server no longer has history for our resourceVersion (410)."""


class ApiFailure(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class KubeSettings:
    context: str
    kubeconfig: Path | None = None
    namespace: str = NAMESPACE
    watch_timeout: int = 60  # seconds; every watch ends after this and is resumed
    crd_poll: float = 15.0  # how often to look again for a CRD that was missing
    backoff_initial: float = 0.5
    backoff_max: float = 30.0


@dataclass
class ResourceState:
    """What one informer knows: its objects and how its last attempt went."""

    key: str
    objects: dict[str, dict[str, Any]] = field(default_factory=dict)
    synced: bool = False  # at least one list succeeded
    missing: bool = False  # 404: the CRD is not installed (yet)
    error: str | None = None
    error_since: float | None = None
    last_ok: float | None = None
    relists: int = 0
    watches: int = 0
    watches_with_events: int = 0  # since the last 410


class _Informer:
    def __init__(
        self,
        key: str,
        lister: Callable[..., Any],
        args: tuple[Any, ...],
        settings: KubeSettings,
        notify: Callable[[], None],
        stop: threading.Event,
        lock: threading.Lock,
        *,
        optional: bool = False,
    ) -> None:
        self.state = ResourceState(key)
        self._list_fn, self._args = lister, args
        self._settings, self._notify, self._stop = settings, notify, stop
        self._lock = lock
        self._optional = optional
        self._resp: Any = None
        self._rv = ""
        self.thread = threading.Thread(target=self._run, name=f"kube-{key}", daemon=True)

    # Called from the loop thread at shutdown: closing the socket unblocks the reader.
    def interrupt(self) -> None:
        resp = self._resp
        if resp is not None:
            with contextlib.suppress(Exception):
                resp.shutdown() if hasattr(resp, "shutdown") else None
            with contextlib.suppress(Exception):
                resp.close()

    def _call(self, **kwargs: Any) -> Any:
        from kubernetes.client.exceptions import ApiException

        try:
            return self._list_fn(*self._args, _preload_content=False, **kwargs)
        except ApiException as exc:
            raise ApiFailure(exc.status or 0, _api_message(exc)) from exc

    def _list(self) -> str:
        resp = self._call(_request_timeout=(5, 30))
        try:
            doc = json.loads(resp.data)
        finally:
            resp.release_conn()
        objects = {_obj_key(o): o for o in doc.get("items") or []}
        with self._lock:
            st = self.state
            st.objects = objects
            st.synced, st.missing = True, False
            st.error = st.error_since = None
            st.last_ok = time.time()
            st.relists += 1
        self._notify()
        return str((doc.get("metadata") or {}).get("resourceVersion") or "")

    def _watch(self, rv: str) -> None:
        from kubernetes.watch.watch import iter_resp_lines

        timeout = self._settings.watch_timeout
        resp = self._call(
            watch=True,
            resource_version=rv or None,
            allow_watch_bookmarks=True,
            timeout_seconds=int(timeout),
            _request_timeout=(5, timeout + 15),
        )
        self._resp = resp
        with self._lock:
            self.state.watches += 1
        try:
            for line in iter_resp_lines(resp):
                if self._stop.is_set():
                    break
                if not line:
                    continue
                event = json.loads(line)
                kind, obj = event.get("type"), event.get("object") or {}
                if kind == "ERROR":
                    code = obj.get("code") or 0
                    if code == 410:
                        raise WatchGone(obj.get("message") or "410 Gone")
                    raise ApiFailure(code, obj.get("message") or "watch error")
                rv = str((obj.get("metadata") or {}).get("resourceVersion") or rv)
                self._rv = rv
                if kind == "BOOKMARK":
                    with self._lock:
                        self.state.last_ok = time.time()  # the server is alive and current
                        self.state.watches_with_events += 1
                    continue
                with self._lock:
                    self.state.watches_with_events += 1
                    if kind == "DELETED":
                        self.state.objects.pop(_obj_key(obj), None)
                    else:
                        self.state.objects[_obj_key(obj)] = obj
                    self.state.last_ok = time.time()
                self._notify()
        finally:
            self._resp = None
            with contextlib.suppress(Exception):
                resp.release_conn()

    def _fail(self, message: str) -> None:
        with self._lock:
            st = self.state
            if st.error_since is None:
                st.error_since = time.time()
            st.error = message
        self._notify()

    def _sleep(self, seconds: float) -> None:
        self._stop.wait(seconds)

    def _backoff(self, step: float) -> None:
        """Wait `step` capped at `backoff_max`, minus up to half of it at random (jitter:
        informers that failed together do not retry together)."""
        capped = min(step, self._settings.backoff_max)
        self._sleep(capped * (1 - 0.5 * random.random()))

    def _watch_forever(self, rv: str) -> None:
        """Resume watches from the last version seen; one dropped stream is retried at once."""
        self._rv = rv
        may_retry = True
        while not self._stop.is_set():
            try:
                self._watch(self._rv)
                may_retry = True
            except (WatchGone, ApiFailure):
                raise
            except Exception:
                if self._stop.is_set() or not may_retry:
                    raise
                may_retry = False  # a dropped connection: resume once without backoff

    def _run(self) -> None:
        delay = 0.0
        s = self._settings
        gone_streak = 0
        while not self._stop.is_set():
            try:
                rv = self._list()
                delay = 0.0
                self._watch_forever(rv)
            except WatchGone:
                # History is gone: re-list at once; but a server that answers 410 right
                # after every list must not make us spin.
                gone_streak = gone_streak + 1 if self.state.watches_with_events == 0 else 1
                with self._lock:
                    self.state.watches_with_events = 0
                if gone_streak > 1:
                    self._backoff(s.backoff_initial * 2 ** (gone_streak - 2))
                continue
            except ApiFailure as exc:
                if exc.status == 404 and self._optional:
                    with self._lock:
                        self.state.missing, self.state.synced = True, True
                        self.state.objects = {}
                        self.state.error = self.state.error_since = None
                        self.state.last_ok = time.time()
                    self._notify()
                    self._sleep(s.crd_poll)
                    continue
                self._fail(f"{self.state.key}: HTTP {exc.status}: {exc}")
            except Exception as exc:  # network errors, dropped streams, bad JSON
                if self._stop.is_set():
                    break
                self._fail(f"{self.state.key}: {_short(exc)}")
            delay = s.backoff_initial if delay == 0 else min(delay * 2, s.backoff_max)
            self._backoff(delay)


class KubeCollector:
    """Keeps Kubernetes state current; `snapshot()` builds the `KubeState` at any moment."""

    def __init__(
        self, settings: KubeSettings, *, on_change: Callable[[], None] | None = None
    ) -> None:
        self.settings = settings
        self._on_change = on_change
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._informers: dict[str, _Informer] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self.changed = asyncio.Event()
        self.setup_error: str | None = None
        self.setup_error_since: float | None = None

    def _notify(self) -> None:
        loop = self._loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._changed)

    def _changed(self) -> None:
        self.changed.set()
        if self._on_change is not None:
            self._on_change()

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        try:
            api_client = await asyncio.to_thread(self._load_client)
        except Exception as exc:
            # Our own RuntimeError carries a complete, actionable message: keep it whole.
            self.setup_error = str(exc) if isinstance(exc, RuntimeError) else _short(exc)
            self.setup_error_since = time.time()
            self._changed()
            return
        from kubernetes import client

        from npa_sop_tui.status.crd_contract import group_version_plural

        core = client.CoreV1Api(api_client)
        custom = client.CustomObjectsApi(api_client)
        ns = self.settings.namespace
        specs: list[tuple[str, Callable[..., Any], tuple[Any, ...], bool]] = [
            ("nodes", core.list_node, (), False),
            ("pods", core.list_namespaced_pod, (ns,), False),
            ("services", core.list_namespaced_service, (ns,), False),
            (
                "slurmclusters",
                custom.list_namespaced_custom_object,
                (*group_version_plural("SlurmCluster")[:2], ns, "slurmclusters"),
                True,
            ),
            (
                "nodesets",
                custom.list_namespaced_custom_object,
                (*group_version_plural("NodeSet")[:2], ns, "nodesets"),
                True,
            ),
            (
                "activechecks",
                custom.list_namespaced_custom_object,
                (*group_version_plural("ActiveCheck")[:2], ns, "activechecks"),
                True,
            ),
        ]
        for key, fn, args, optional in specs:
            inf = _Informer(
                key,
                fn,
                args,
                self.settings,
                self._notify,
                self._stop,
                self._lock,
                optional=optional,
            )
            self._informers[key] = inf
            inf.thread.start()

    def _load_client(self) -> Any:
        from kubernetes import config
        from kubernetes.config.config_exception import ConfigException

        path = str(self.settings.kubeconfig) if self.settings.kubeconfig else None
        try:
            return config.new_client_from_config(config_file=path, context=self.settings.context)
        except ConfigException as exc:
            where = path or "~/.kube/config"
            raise RuntimeError(
                f"kube context {self.settings.context!r} is not usable ({where}): "
                f"{str(exc).rstrip('.')}. "
                "Run `nebius mk8s cluster get-credentials --context-name "
                f"{self.settings.context} --external --id <cluster-id>` or pass --context"
            ) from exc
        except OSError as exc:
            raise RuntimeError(f"cannot read kubeconfig {path or '~/.kube/config'}: {exc}") from exc

    async def close(self) -> None:
        self._stop.set()
        for inf in self._informers.values():
            inf.interrupt()
        threads = [inf.thread for inf in self._informers.values()]
        # Don't wait long: they are daemon threads and exit at their next read at the latest.
        # One deadline for all of them: a join each would add up (six watches, 12 s) and a
        # Ctrl-C on `status --watch` would seem to hang.
        await asyncio.to_thread(_join_all, threads, 2.0)

    def resource_states(self) -> dict[str, ResourceState]:
        with self._lock:
            return {k: _copy_state(i.state) for k, i in self._informers.items()}

    def health(self) -> tuple[bool, str | None, float | None, float | None]:
        """(synced at least once, error message, error since, last success)."""
        if self.setup_error:
            return False, self.setup_error, self.setup_error_since, None
        states = self.resource_states()
        if not states:
            return False, None, None, None
        errors = [s for s in states.values() if s.error]
        synced = all(s.synced for s in states.values())
        last_ok = min((s.last_ok or 0) for s in states.values()) or None
        if errors:
            since = min(s.error_since or time.time() for s in errors)
            return synced, "; ".join(s.error or "" for s in errors), since, last_ok
        return synced, None, None, last_ok

    def snapshot(self) -> KubeState:
        from npa_sop_tui.status.active_checks import parse_active_checks, waiting_on

        states = self.resource_states()
        empty = ResourceState("")
        checks = states.get("activechecks", empty)
        state = build_kube_state(
            self.settings.context,
            nodes=list(states.get("nodes", empty).objects.values()),
            pods=list(states.get("pods", empty).objects.values()),
            services=list(states.get("services", empty).objects.values()),
            slurmclusters=list(states.get("slurmclusters", empty).objects.values()),
            slurmclusters_missing=states.get("slurmclusters", empty).missing
            or not states.get("slurmclusters", empty).synced,
            nodesets=list(states.get("nodesets", empty).objects.values()),
            nodesets_missing=states.get("nodesets", empty).missing
            or not states.get("nodesets", empty).synced,
        )
        state.active_checks = parse_active_checks(list(checks.objects.values()))
        state.active_checks_crd = checks.synced and not checks.missing
        state.waiting_on = [c.name for c in waiting_on(state.active_checks)]
        return state


def _copy_state(st: ResourceState) -> ResourceState:
    return ResourceState(
        st.key,
        dict(st.objects),
        st.synced,
        st.missing,
        st.error,
        st.error_since,
        st.last_ok,
        st.relists,
        st.watches,
        st.watches_with_events,
    )


def _obj_key(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace') or ''}/{meta.get('name')}"


def _api_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if body:
        with contextlib.suppress(ValueError, TypeError):
            doc = json.loads(body)
            if isinstance(doc, dict) and doc.get("message"):
                return str(doc["message"])
    return str(getattr(exc, "reason", None) or exc)


def _short(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    first = text.splitlines()[0]
    # urllib3 wraps the interesting part deep inside; keep it readable.
    if "Connection refused" in text:
        return f"{type(exc).__name__}: connection refused"
    return first[:300]


# --- building the model ------------------------------------------------------------------


def _conditions(raw: list[dict[str, Any]] | None) -> list[Condition]:
    out = []
    for c in raw or []:
        if "type" in c:
            out.append(
                Condition(
                    type=str(c["type"]),
                    status=str(c.get("status", "Unknown")),
                    reason=c.get("reason") or None,
                    message=c.get("message") or None,
                )
            )
    return out


def _node(obj: dict[str, Any]) -> KubeNode:
    meta, spec, status = obj.get("metadata") or {}, obj.get("spec") or {}, obj.get("status") or {}
    labels = meta.get("labels") or {}
    conds = _conditions(status.get("conditions"))
    ready = any(c.type == "Ready" and c.status == "True" for c in conds)
    notable = [
        c
        for c in conds
        if (c.type == "Ready" and c.status != "True")
        or (c.type in NOTABLE_NODE_CONDITIONS and c.status == "True")
    ]
    return KubeNode(
        name=str(meta.get("name")),
        ready=ready,
        unschedulable=bool(spec.get("unschedulable")),
        nodeset=labels.get(NODESET_LABEL),
        nodeset_name=labels.get(NODESET_NAME_LABEL),
        node_group_id=labels.get("nebius.com/node-group-id"),
        preemptible=labels.get("nebius.com/preemptible") == "true",
        gpu=labels.get("nebius.com/gpu") == "true"
        or labels.get("slurm.nebius.ai/workload") == "gpu",
        notable_conditions=notable,
    )


def _group_name(node: KubeNode) -> str:
    if node.nodeset == "worker" and node.nodeset_name:
        return node.nodeset_name
    return node.nodeset or node.nodeset_name or "other"


def _pod(obj: dict[str, Any]) -> PodInfo:
    meta, spec, status = obj.get("metadata") or {}, obj.get("spec") or {}, obj.get("status") or {}
    labels = meta.get("labels") or {}
    conds = _conditions(status.get("conditions"))
    containers = status.get("containerStatuses") or []
    inits = status.get("initContainerStatuses") or []
    waiting, message, init = None, None, False
    for cs, is_init in [*((c, True) for c in inits), *((c, False) for c in containers)]:
        state = cs.get("state") or {}
        w = state.get("waiting")
        term = state.get("terminated")
        if (w and w.get("reason") not in (None, "PodInitializing", "ContainerCreating")) or (
            is_init and term and term.get("exitCode", 0) != 0
        ):
            src = w or term or {}
            waiting, message, init = src.get("reason") or "Error", src.get("message"), is_init
            break
    if waiting is None:
        for c in conds:
            if c.type == "PodScheduled" and c.status == "False":
                waiting, message = c.reason or "Unschedulable", c.message
        if waiting is None and status.get("phase") == "Pending":
            for cs in [*inits, *containers]:
                w = (cs.get("state") or {}).get("waiting")
                if w and w.get("reason"):
                    waiting, message = w["reason"], w.get("message")
                    break
    return PodInfo(
        job=labels.get("batch.kubernetes.io/job-name") or labels.get("job-name"),
        name=str(meta.get("name")),
        component=labels.get(COMPONENT_LABEL) or "other",
        phase=str(status.get("phase") or "Unknown"),
        ready=any(c.type == "Ready" and c.status == "True" for c in conds),
        restarts=sum(int(cs.get("restartCount") or 0) for cs in containers),
        node=spec.get("nodeName"),
        waiting_reason=waiting,
        message=message or None,
        init=init,
    )


def build_kube_state(
    context: str,
    *,
    nodes: list[dict[str, Any]],
    pods: list[dict[str, Any]],
    services: list[dict[str, Any]],
    slurmclusters: list[dict[str, Any]],
    slurmclusters_missing: bool,
    nodesets: list[dict[str, Any]],
    nodesets_missing: bool,
) -> KubeState:
    groups: dict[str, NodeGroup] = {}
    for raw in nodes:
        node = _node(raw)
        name = _group_name(node)
        g = groups.setdefault(name, NodeGroup(name=name, role=node.nodeset))
        g.nodes.append(node)
        g.total += 1
        g.ready += node.ready
        g.preemptible = g.preemptible or node.preemptible
        g.gpu = g.gpu or node.gpu
        for c in node.notable_conditions:
            if not any(x.type == c.type and x.status == c.status for x in g.notable_conditions):
                g.notable_conditions.append(c)
    for g in groups.values():
        g.nodes.sort(key=lambda n: n.name)

    comps: dict[str, ComponentPods] = {}
    for raw in pods:
        pod = _pod(raw)
        cp = comps.setdefault(pod.component, ComponentPods(component=pod.component))
        cp.pods.append(pod)
        cp.total += 1
        cp.ready += pod.ready
    for cp in comps.values():
        cp.pods.sort(key=lambda p: p.name)

    cluster = None
    for raw in slurmclusters:
        meta, status = raw.get("metadata") or {}, raw.get("status") or {}
        if meta.get("name") == CLUSTER_CR or cluster is None:
            cluster = SlurmClusterInfo(
                name=str(meta.get("name")),
                phase=status.get("phase"),
                conditions=_conditions(status.get("conditions")),
                ready_login=status.get("readyLogin"),
            )

    sets = []
    for raw in nodesets:
        meta, spec, status = (
            raw.get("metadata") or {},
            raw.get("spec") or {},
            raw.get("status") or {},
        )
        sets.append(
            NodeSetInfo(
                name=str(meta.get("name")),
                desired=int(spec.get("replicas") or 0),
                ready=int(status.get("replicas") or 0),
                phase=status.get("phase"),
                ephemeral=bool(spec.get("ephemeralNodes")),
                conditions=_conditions(status.get("conditions")),
            )
        )
    sets.sort(key=lambda s: s.name)

    login_service, login_ip = False, None
    for raw in services:
        if (raw.get("metadata") or {}).get("name") == LOGIN_SERVICE:
            login_service = True
            ingress = ((raw.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
            for ing in ingress:
                login_ip = ing.get("ip") or ing.get("hostname")
                if login_ip:
                    break

    return KubeState(
        context=context,
        node_groups=sorted(groups.values(), key=lambda g: (g.role != "worker", g.name)),
        components=sorted(comps.values(), key=lambda c: c.component),
        slurm_cluster=cluster,
        slurm_cluster_crd=not slurmclusters_missing,
        nodesets=sets,
        nodesets_crd=not nodesets_missing,
        login_service=login_service,
        login_ip=login_ip,
    )


def _join_all(threads: list[threading.Thread], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
