"""Adopting clusters this product did not deploy: the existing npa's, and ones made with the
recipe directly.

`adopt` reads an installation's variables through Terraform (adopt_read.py), writes them
back as a spec (recipe/adopted.py, the reverse of render) and registers the cluster in the
inventory where it is: Terraform keeps running in that folder with its own state (nothing
is moved; `state migrate` moves it when asked), the variables as deployed are kept beside
the record, and the identity is pinned — the existing npa's sidecar for its clusters. The
installation's files are never written.

`require_cluster` is the inventory's `require` that also adopts a cluster the existing npa
deployed on first use, so `status`, `plan`, `deploy` and `destroy` work on it by name;
`listed` adds the ones not adopted yet to a listing, marked as found.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from npa_sop_tui.errors import UsageError
from npa_sop_tui.home import inventory, npa_installs
from npa_sop_tui.home.inventory import Adoption, InventoryDamaged, InventoryEntry, RecipeInfo
from npa_sop_tui.lifecycle import adopt_read
from npa_sop_tui.lifecycle.results import LifecycleOptions

if TYPE_CHECKING:
    from npa_sop_tui.home.npa_installs import NpaInstall
    from npa_sop_tui.spec.findings import Finding
    from npa_sop_tui.state.store import StateStore


@dataclass
class AdoptionResult:
    entry: InventoryEntry
    spec_yaml: str  # the cluster.yaml, with comments on what was defaulted and kept
    spec_path: str | None  # where it was written, when asked
    kept: list[str] = field(default_factory=list)  # spec paths kept as deployed
    kept_variables: list[str] = field(default_factory=list)  # variables a render would change
    defaulted: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.entry.name,
            "origin": self.entry.adoption.origin if self.entry.adoption else None,
            "install_dir": self.entry.install_dir,
            "state": self.entry.state,
            "spec_path": self.spec_path,
            "kept": self.kept,
            "kept_variables": self.kept_variables,
            "defaulted": self.defaulted,
            "findings": [f.to_dict() for f in self.findings],
            "entry": self.entry.model_dump(mode="json"),
        }


def variables_path(name: str) -> Path:
    from npa_sop_tui.home.paths import cluster_dir

    return cluster_dir(name) / inventory.ADOPTED_VARIABLES


def read_adopted_variables(name: str) -> dict[str, Any]:
    try:
        data = json.loads(variables_path(name).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(
            f"the variables {name!r} was adopted with are missing or damaged "
            f"({variables_path(name)}: {exc})",
            hint=f"adopt it again: `npa soperator adopt --name {name}` (or --install-dir)",
        ) from None
    if not isinstance(data, dict):
        raise UsageError(f"{variables_path(name)} is not a JSON object")
    return data


# --- finding clusters -----------------------------------------------------------------------


async def arequire_cluster(
    name: str, *, store: StateStore | None = None, options: LifecycleOptions | None = None
) -> InventoryEntry:
    """The inventory entry of `name`; a cluster the existing npa deployed is adopted on first
    use; otherwise `inventory.require`'s error, naming the known clusters."""
    entry = inventory.get(name, store=store)
    if entry is not None:
        return entry
    found = npa_installs.find(name, _explicit_ref(options))
    if found is None:
        return inventory.require(name, store=store)
    return await _adopt_once(name, found.install_dir, store, options)


def _explicit_ref(options: LifecycleOptions | None) -> str | None:
    """The recipe commit the caller named (`--ref`): it picks among npa's clones."""
    if options is None:
        return None
    from npa_sop_tui.lifecycle import steps

    explicit, _ = steps.environment_of(options).recipe_refs()
    return explicit


# One adoption of an installation at a time in this process: the app may ask for a cluster's
# status twice while the first adoption runs, and Terraform locks the state while it reads.
_ADOPTING: dict[Path, asyncio.Lock] = {}


async def _adopt_once(
    name: str, install_dir: Path, store: StateStore | None, options: LifecycleOptions | None
) -> InventoryEntry:
    async with _ADOPTING.setdefault(install_dir, asyncio.Lock()):
        entry = inventory.get(name, store=store)
        if entry is not None:  # adopted while this call waited
            return entry
        return (await adopt(install_dir, store=store, options=options)).entry


async def adopt_if_npa(
    name: str, *, store: StateStore | None = None, options: LifecycleOptions | None = None
) -> None:
    """Before a plan or deploy of `name`: a cluster the existing npa deployed under that name
    and not adopted yet is adopted first, so the operation converges it where it is instead
    of creating a second one."""
    if inventory.get(name, store=store) is not None:
        return
    found = npa_installs.find(name, _explicit_ref(options))
    if found is not None:
        await _adopt_once(name, found.install_dir, store, options)


def require_cluster(
    name: str, *, store: StateStore | None = None, options: LifecycleOptions | None = None
) -> InventoryEntry:
    """`arequire_cluster` for synchronous callers (front doors outside an event loop)."""
    import asyncio

    entry = inventory.get(name, store=store)
    if entry is not None:
        return entry
    return asyncio.run(arequire_cluster(name, store=store, options=options))


def found_entry(install: NpaInstall) -> InventoryEntry:
    """An entry (not saved) for a listing: what the existing npa's files say."""
    from npa_sop_tui.spec.model import kube_context

    state = "deployed" if install.has_state else "planned"
    return InventoryEntry(
        name=install.name,
        region=install.identity().get("region"),
        kube_context=kube_context(install.name),
        state=state,
        install_dir=str(install.install_dir),
        recipe=RecipeInfo(origin="npa", path=str(install.recipe_dir), ref=install.recipe_ref),
        adoption=Adoption(
            origin="npa",
            adopted=0.0,  # not adopted yet: found
            identity=install.identity(),
            fleet=install.fleet,
            project_key=install.project_key,
        ),
    )


@dataclass
class Listing:
    entries: list[InventoryEntry]  # the inventory
    damaged: list[InventoryDamaged]  # records that cannot be read
    found: list[InventoryEntry]  # the existing npa's clusters not adopted yet (not saved)
    unusable: list[str]  # the existing npa's installations npa itself would refuse, and why


def listed(*, store: StateStore | None = None) -> Listing:
    """The inventory, and the existing npa's clusters in this home not adopted yet."""
    entries, damaged = inventory.scan(store=store)
    known = {e.name for e in entries} | {_damaged_name(d) for d in damaged}
    found, unusable = [], []
    for install in npa_installs.discover():
        if install.name in known:
            continue
        if install.problem is not None:
            unusable.append(f"the existing npa's {install.name!r}: {install.problem}")
        else:
            found.append(found_entry(install))
    return Listing(entries, damaged, found, unusable)


def _damaged_name(damaged: InventoryDamaged) -> str:
    return Path(str(damaged.path)).parent.name


# --- adopting -------------------------------------------------------------------------------


async def adopt(
    install_dir: Path,
    *,
    identity: dict[str, str] | None = None,
    spec_out: Path | None = None,
    force: bool = False,
    options: LifecycleOptions | None = None,
    store: StateStore | None = None,
) -> AdoptionResult:
    """Register the cluster of `install_dir` (an `installations/<name>/` folder of the recipe
    that has been applied) in the inventory, in place; write its cluster.yaml to `spec_out`."""
    from npa_sop_tui.lifecycle import steps

    options = options or LifecycleOptions()
    environment = steps.environment_of(options)
    store = store or environment.state_store()
    install_dir = _installation(install_dir)
    npa = _npa_install(install_dir)
    recipe = await environment.recipe(install_dir.parent.parent)
    setup = await environment.terraform(recipe)
    pinned = npa.identity() if npa else {}
    env = adopt_read.console_env(
        setup,
        environment,
        adopt_read.npa_environment(npa) if npa else adopt_read.identity_env(identity or {}),
    )
    binary = setup.binary.path
    await adopt_read.ensure_initialised(binary, install_dir, env)
    variables = await adopt_read.variables(binary, install_dir, env)
    if npa is None:
        pinned = await _recipe_identity(binary, install_dir, env, identity or {}, environment)
        env.update(adopt_read.identity_env(pinned))
        telemetry = bool(variables.get("public_o11y_enabled"))
        env.update(await adopt_read.o11y_environment(binary, install_dir, env, telemetry))
    resources = await adopt_read.state_resources(binary, install_dir, env)
    from npa_sop_tui.lifecycle.adopt_spec import reverse

    reversed_ = await reverse(variables, pinned, recipe, environment)
    name = reversed_.spec.name
    if npa is not None and npa.name != name:
        raise UsageError(
            f"{install_dir}: the folder is npa's installation of {npa.name!r}, but its "
            f"variables name the cluster {name!r}",
            hint="npa keeps each cluster in installations/<its name>; repair the folder first",
        )
    _check_free(name, install_dir, store)
    entry = InventoryEntry(
        name=name,
        region=pinned.get("region"),
        kube_context=reversed_.spec.kube_context,
        state="deployed" if resources else "planned",
        install_dir=str(install_dir),
        recipe=RecipeInfo(
            origin="npa" if npa else "adopted",
            path=str(recipe.root),
            ref=recipe.ref or (npa.recipe_ref if npa else None),
            version=recipe.version,
        ),
        adoption=Adoption(
            origin="npa" if npa else "recipe",
            identity=pinned,
            env={k: v for k, v in env.items() if k.startswith("TF_VAR_o11y_")},
            kept=reversed_.kept,
            fleet=npa.fleet if npa else None,
            project_key=npa.project_key if npa else None,
        ),
    )
    text = reversed_.annotated(install_dir, variables_path(name), npa is not None)
    written = _write_spec(spec_out, text, force) if spec_out is not None else None
    _register(entry, variables, reversed_.spec_yaml, store)
    return AdoptionResult(
        entry=entry,
        spec_yaml=text,
        spec_path=str(written) if written else None,
        kept=reversed_.kept,
        kept_variables=reversed_.kept_variables,
        defaulted=reversed_.defaulted,
        findings=reversed_.findings,
    )


def _installation(path: Path) -> Path:
    path = Path(path).expanduser()
    if not path.is_dir() or path.is_symlink():
        raise UsageError(
            f"--install-dir {path} is not a folder",
            hint="point at soperator/installations/<name> of the checkout you applied",
        )
    path = path.resolve()
    if path.parent.name != "installations" or not (path.parent.parent / "modules").is_dir():
        raise UsageError(
            f"{path} is not an installation of the soperator recipe (expected "
            "<checkout>/soperator/installations/<name>, beside soperator/modules)",
            hint="point at the folder you ran `terraform apply` in",
        )
    if not any(path.glob("*.tf")):
        raise UsageError(f"{path} has no Terraform files", hint="point at the applied folder")
    return path


def _npa_install(install_dir: Path) -> NpaInstall | None:
    """npa's installation at `install_dir` (its sidecar is there), refusing a bad sidecar."""
    if not (install_dir / npa_installs.SIDECAR).exists():
        return None
    found = next((i for i in npa_installs.discover() if i.install_dir == install_dir), None)
    found = found or npa_installs.install_at(install_dir)  # npa's sidecar outside npa's home
    if found.problem:
        raise UsageError(
            f"cannot adopt the existing npa's cluster {found.name!r}: {found.problem}",
            hint="npa refuses to act on it too; restore the sidecar from a backup",
        )
    return found


async def _recipe_identity(
    binary: str, install_dir: Path, env: dict[str, str], given: dict[str, str], environment: Any
) -> dict[str, str]:
    from npa_sop_tui.environment import placeholder_identity
    from npa_sop_tui.home.config import Identity, require_identity

    found = dict(await adopt_read.identity_variables(binary, install_dir, env))
    for key, value in (await adopt_read.identity_from_state(binary, install_dir, env)).items():
        found.setdefault(key, value)
    settings = environment.settings.identity(None).model_dump()
    merged = {
        k: given.get(k) or found.get(k) or settings.get(k) for k in adopt_read.IDENTITY_FIELDS
    }
    identity = Identity(**merged)
    recipe_root = install_dir.parent.parent
    if (recipe_root / ".npa-standin").is_file():
        identity = placeholder_identity(identity)  # a stand-in has no cloud behind it
    else:
        require_identity(identity, environment.settings.config_file)
    return {k: v for k, v in identity.model_dump().items() if v}


def _check_free(name: str, install_dir: Path, store: StateStore) -> None:
    current = inventory.get(name, store=store)
    if current is None:
        return
    same = current.adoption is not None and current.install_dir == str(install_dir)
    if not same and current.state != "destroyed":
        raise UsageError(
            f"a cluster named {name!r} is already in the inventory "
            f"({current.install_dir or 'no installation'})",
            hint="cluster names and kube contexts are global; destroy or rename the other one",
        )


def _write_spec(path: Path, text: str, force: bool) -> Path:
    from npa_sop_tui.home.fsutil import atomic_write_text

    path = Path(path).expanduser()
    if path.exists() and not force:
        raise UsageError(
            f"{path} exists; adopt does not overwrite it",
            hint="name another file with --spec-out, or pass --force",
        )
    atomic_write_text(path, text, mode=0o644)
    return path


def _register(
    entry: InventoryEntry, variables: dict[str, Any], spec_yaml: str, store: StateStore
) -> None:
    """The record, the spec as deployed and the variables as deployed, under the lock."""
    from npa_sop_tui.home.fsutil import SECRET_MODE, atomic_write_text

    lock = store.lock(entry.name, operation="adopt")
    lock.acquire()
    try:
        previous = inventory.get(entry.name, store=store)
        if previous is not None:
            entry.operations = previous.operations
            entry.created = previous.created
        atomic_write_text(
            variables_path(entry.name),
            json.dumps(variables, indent=2, sort_keys=True) + "\n",
            mode=SECRET_MODE,  # as terraform.tfvars: it may hold the backups password
        )
        store.save_spec(entry.name, spec_yaml)
        if entry.install_dir and entry.recipe is not None:
            from npa_sop_tui.home.recorded_paths import remember_adoption

            remember_adoption(entry.name, Path(entry.install_dir), Path(entry.recipe.path))
        entry.updated = time.time()
        store.save(entry)
    finally:
        lock.release()
