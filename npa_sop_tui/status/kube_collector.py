"""Kubernetes collector: list + watch through the official client, in worker threads.

One daemon thread per resource runs the informer loop (status/kube_informer.py). The
blocking client never runs on the event loop; threads hand results to the loop with
`call_soon_threadsafe`. Dedicated daemon threads (not `to_thread`) are used because a watch
blocks for up to its timeout, and the default executor would make `asyncio.run()` wait for
it at shutdown.

Custom resources whose CRD is not installed yet answer 404; that is "not yet", polled again
later, and never an error.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable
from typing import Any

from npa_sop_tui.status.kube import OPERATOR_NAMESPACE, build_kube_state, build_operator
from npa_sop_tui.status.kube_informer import (
    Informer,
    KubeSettings,
    ResourceState,
    copy_state,
    short_error,
)
from npa_sop_tui.status.model import KubeState


class KubeCollector:
    """Keeps Kubernetes state current; `snapshot()` builds the `KubeState` at any moment."""

    def __init__(
        self, settings: KubeSettings, *, on_change: Callable[[], None] | None = None
    ) -> None:
        self.settings = settings
        self._on_change = on_change
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._informers: dict[str, Informer] = {}
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
            self.setup_error = str(exc) if isinstance(exc, RuntimeError) else short_error(exc)
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
            ("operator_pods", core.list_namespaced_pod, (OPERATOR_NAMESPACE,), True),
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
            inf = Informer(
                key,
                fn,
                args,
                self.settings,
                self._notify,
                self._stop,
                self._lock,
                optional=optional,
                absent_on=(403, 404) if key == "operator_pods" else (404,),
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
            return {k: copy_state(i.state) for k, i in self._informers.items()}

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
        from npa_sop_tui.status.active_checks import (
            CLUSTER,
            parse_active_checks,
            wait_job_of,
            waiting_on,
        )

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
        operator = states.get("operator_pods", empty)
        if operator.synced and not operator.missing:
            state.operator = build_operator(list(operator.objects.values()))
        job = wait_job_of(state)  # the running operator's rules (4.1.x unless 5.x runs)
        cluster = state.slurm_cluster.name if state.slurm_cluster is not None else CLUSTER
        state.active_checks = parse_active_checks(list(checks.objects.values()), job)
        state.active_checks_crd = checks.synced and not checks.missing
        state.waiting_on = [c.name for c in waiting_on(state.active_checks, job, cluster)]
        state.wait_job = job.name_for(cluster)
        return state


def _join_all(threads: list[threading.Thread], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
