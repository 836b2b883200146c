"""What `npa soperator upgrade` will change, before anything runs.

Read from the cluster's spec as deployed and the recipe's derived graphs (recipe/graph.py),
the same way for a real recipe and the sandbox's stand-in:

- **Kubernetes moves one minor version at a time** (the cloud refuses a jump of two): from the
  deployed version to the target, each minor is one step. In each, the control plane
  (`module.k8s.nebius_mk8s_v1_cluster.this`) is updated first, then every node group whose
  `version` follows it (`k8s_ng_system.tf`, `k8s_ng_workers_v2.tf`, …): system, controller,
  login, accounting, then each worker node group, GPU pools included, in place. A node group
  rolls its nodes 50 % at a time (the recipe's `max_unavailable`), so every worker is drained
  once per step.
- **The operator step** updates the recipe's Helm/Flux releases that carry the operator
  version in place and renders the nodesets file again (a replacement the recipe makes on
  purpose). A recipe release accepts only some Kubernetes versions (4.1.12+: 1.35 and 1.36,
  its `driver_presets.tf`), so Kubernetes steps the target cannot run come first, on the
  current operator; the rest after, on the new one.
- Times are estimates (constants below), said as such.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from npa_sop_tui.errors import UsageError
from npa_sop_tui.recipe.footprint import has_login_node_group
from npa_sop_tui.recipe.graph import RecipeGraph, graph_for
from npa_sop_tui.recipe.nodesets import recipe_node_groups, spec_nodesets
from npa_sop_tui.spec.catalog import SUPPORTED_VERSIONS
from npa_sop_tui.spec.derived import DEFAULT_K8S_VERSION, recipe_generation
from npa_sop_tui.spec.model import SoperatorSpec, spec_from_mapping
from npa_sop_tui.spec.validate_cluster import K8S_VERSIONS_4_1_12

# Rough minutes, for the estimate only: a control-plane minor upgrade; one batch of a node
# group's rolling update (a node drained, replaced, joined); the operator's releases
# reconciled (the active checks the recipe waits on come on top).
CONTROL_PLANE_MINUTES = 20
NODE_BATCH_MINUTES = 10
OPERATOR_MINUTES = 15
MAX_UNAVAILABLE = 0.5  # the recipe's node group strategy: max_unavailable 50 %
# Kubernetes versions a recipe generation renders (None: not restricted by the recipe)
ACCEPTED_K8S: dict[str, tuple[str, ...] | None] = {"4.1.6": None, "4.1.12": K8S_VERSIONS_4_1_12}


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PlannedUpdate(_Model):
    address: str
    what: str
    change: str
    action: Literal["update", "replace", "create"] = "update"
    minutes: int = 0


class UpgradeStep(_Model):
    kind: Literal["kubernetes", "operator"]
    title: str
    operator_version: str  # the spec's slurm_operator_version while this step runs
    k8s_version: str  # the spec's k8s_version after this step
    updates: list[PlannedUpdate] = Field(default_factory=list)

    @property
    def minutes(self) -> int:
        return sum(u.minutes for u in self.updates)


class UpgradePlan(_Model):
    name: str
    from_operator: str
    to_operator: str
    from_k8s: str
    to_k8s: str
    steps: list[UpgradeStep] = Field(default_factory=list)
    drained_workers: list[str] = Field(default_factory=list)  # Slurm nodes, once per k8s step
    expected_minutes: int = 0
    notes: list[str] = Field(default_factory=list)


def minor(version: str) -> tuple[int, int]:
    major, _, rest = version.partition(".")
    return int(major), int(rest.split(".", 1)[0])


def minor_steps(current: str, target: str) -> list[str]:
    """The versions after `current` up to `target`, one minor at a time."""
    (major, low), (t_major, high) = minor(current), minor(target)
    if major != t_major:
        raise UsageError(f"Kubernetes {current} → {target}: only minor upgrades within {major}.x")
    if high < low:
        raise UsageError(
            f"Kubernetes cannot go back from {current} to {target}",
            hint=f"pick --k8s-version {current} or newer",
        )
    return [f"{major}.{m}" for m in range(low + 1, high + 1)]


def _accepts(version: str, k8s: str) -> bool:
    accepted = ACCEPTED_K8S.get(recipe_generation(version) or "")
    return accepted is None or k8s in accepted


def _node_groups(spec: SoperatorSpec, graph: RecipeGraph) -> list[tuple[str, str, int]]:
    """(address, description, nodes) of every node group whose version follows Kubernetes,
    in the order the recipe declares them after the control plane."""
    out: list[tuple[str, str, int]] = []
    cp = spec.control_plane
    controls = [
        ("system", f"system ({cp.system.min_size}..{cp.system.effective_max_size} nodes)",
         int(cp.system.min_size)),
        ("controller", "controller (1 node)", 1),
    ]  # fmt: skip
    if has_login_node_group(spec):  # GB300 on 4.1.13: login pods on the workers, no group
        controls.append(("login", "login (1 node)", 1))
    if spec.accounting:
        controls.append(("accounting", "accounting (1 node)", 1))
    for name, what, nodes in controls:
        address = f"module.k8s.nebius_mk8s_v1_node_group.{name}"
        resource = graph.resource(address)
        if resource is not None:
            counted = resource["instances"]["kind"] != "one"
            out.append((address + ("[0]" if counted else ""), f"node group {what}", nodes))
    for index, group in enumerate(recipe_node_groups(spec)):
        address = f"module.k8s.nebius_mk8s_v1_node_group.worker_v2[{index}]"
        nodes = f"{group.size} node" + ("s" if group.size != 1 else "")
        what = f"node group {group.name} (pool {group.pool}, {nodes})"
        out.append((address, what, group.size))
    return out


def _batches(nodes: int) -> int:
    return max(1, math.ceil(nodes / max(1, math.ceil(nodes * MAX_UNAVAILABLE))))


def kubernetes_step(
    spec: SoperatorSpec, graph: RecipeGraph, before: str, after: str, operator: str
) -> UpgradeStep:
    ng_before, ng_after = (f"{v}-nebius-node.{spec.effective_node_group_version}"
                           for v in (before, after))  # fmt: skip
    updates = [
        PlannedUpdate(address="module.k8s.nebius_mk8s_v1_cluster.this",
                      what="Kubernetes control plane", change=f"{before} → {after}",
                      minutes=CONTROL_PLANE_MINUTES)
    ]  # fmt: skip
    for address, what, nodes in _node_groups(spec, graph):
        worker = "worker_v2" in address
        updates.append(
            PlannedUpdate(
                address=address,
                what=what,
                change=f"{ng_before} → {ng_after}" if worker else f"{before} → {after}",
                minutes=NODE_BATCH_MINUTES * _batches(nodes),
            )
        )
    title = f"Kubernetes {before} → {after} (operator {operator})"
    return UpgradeStep(kind="kubernetes", title=title, operator_version=operator,
                       k8s_version=after, updates=updates)  # fmt: skip


def operator_step(
    current: RecipeGraph, graph: RecipeGraph, before: str, after: str, k8s: str
) -> UpgradeStep:
    updates = []
    for res in graph.resources():
        carried = res["inputs"]
        if "operator_version" in carried["update"]:
            updates.append(PlannedUpdate(address=res["address"], what="Helm/Flux release",
                                         change=f"{before} → {after}, in place",
                                         minutes=OPERATOR_MINUTES))  # fmt: skip
        elif "operator_version" in carried["replace"]:
            why = res.get("safe_replace", "replaced")
            updates.append(PlannedUpdate(address=res["address"], what=why,
                                         change="rendered again", action="replace"))  # fmt: skip
    new = sorted(set(graph.addresses()) - set(current.addresses()))
    for address in new:  # the newer recipe layout's own resources
        updates.append(PlannedUpdate(address=address, what="new in this recipe layout",
                                     change="created", action="create"))  # fmt: skip
    title = f"operator {before} → {after} (Kubernetes {k8s})"
    return UpgradeStep(kind="operator", title=title, operator_version=after, k8s_version=k8s,
                       updates=updates)  # fmt: skip


def plan_upgrade(deployed: SoperatorSpec, to: str, k8s_version: str | None = None) -> UpgradePlan:
    """The steps from the cluster as deployed to operator `to` (and Kubernetes `k8s_version`,
    else the target recipe's default), each one deploy."""
    if to not in SUPPORTED_VERSIONS:
        raise UsageError(
            f"Soperator {to} has no recipe release npa can deploy",
            hint="supported: " + ", ".join(sorted(SUPPORTED_VERSIONS))
            + ("; Soperator 5.0 is read by status, but no recipe release deploys it yet"
               if to.startswith("5.") else ""),
        )  # fmt: skip
    before = deployed.slurm_operator_version
    current, target = graph_for(version=before), graph_for(version=to)
    if current is None or target is None:
        raise UsageError(
            f"no derived recipe graph for Soperator {before if current is None else to}"
        )
    k8s_now = deployed.effective_k8s_version
    goal = k8s_version or DEFAULT_K8S_VERSION.get(recipe_generation(to) or "", k8s_now)
    plan = UpgradePlan(name=deployed.name, from_operator=before, to_operator=to,
                       from_k8s=k8s_now, to_k8s=goal)  # fmt: skip
    version, graph, operator = k8s_now, current, before
    for step in minor_steps(k8s_now, goal):
        if operator != to and _accepts(to, version):
            plan.steps.append(operator_step(current, target, operator, to, version))
            operator, graph = to, target
        if not _accepts(operator, step):
            raise UsageError(f"Soperator {operator}'s recipe does not run Kubernetes {step}")
        plan.steps.append(kubernetes_step(deployed, graph, version, step, operator))
        version = step
    if operator != to:
        if not _accepts(to, version):
            raise UsageError(
                f"Soperator {to}'s recipe does not run Kubernetes {version}",
                hint="upgrade Kubernetes one minor at a time: --k8s-version "
                + ", ".join(v for v in ACCEPTED_K8S.get(recipe_generation(to) or "") or ()),
            )
        plan.steps.append(operator_step(current, target, operator, to, version))
    k8s_steps = sum(1 for s in plan.steps if s.kind == "kubernetes")
    workers = [n for ns in spec_nodesets(deployed) for n in ns.node_names]
    plan.drained_workers = workers if k8s_steps else []
    plan.expected_minutes = sum(s.minutes for s in plan.steps)
    if k8s_steps:
        plan.notes.append(
            f"every worker is drained {k8s_steps} time(s), half a node group at a time: jobs on "
            "a draining node finish or are requeued"
        )
    if not plan.steps:
        plan.notes.append(f"nothing to do: already Soperator {to} on Kubernetes {goal}")
    return plan


def plan_lines(plan: UpgradePlan) -> list[str]:
    """The plan in words, the same in a terminal, the app and the sandbox."""
    lines = [
        f"Upgrade {plan.name!r}: Soperator {plan.from_operator} → {plan.to_operator}, "
        f"Kubernetes {plan.from_k8s} → {plan.to_k8s} "
        f"({len(plan.steps)} step(s), about {plan.expected_minutes} min)"
    ]
    for number, step in enumerate(plan.steps, 1):
        lines.append(f"  {number}. {step.title}: about {step.minutes} min")
        for update in step.updates:
            lines.append(f"     {update.action:7} {update.address}: {update.what}, {update.change}")
    if plan.drained_workers:
        shown = ", ".join(plan.drained_workers[:12])
        more = (
            f" and {len(plan.drained_workers) - 12} more" if len(plan.drained_workers) > 12 else ""
        )
        lines.append(f"  drained: {shown}{more}")
    lines += [f"  note: {note}" for note in plan.notes]
    return lines


def step_spec(deployed: SoperatorSpec, step: UpgradeStep) -> SoperatorSpec:
    """The spec one step deploys: the deployed one with the step's versions pinned (never
    left to a recipe default, which could be another Kubernetes version)."""
    data = deployed.model_dump(mode="json", exclude_none=True)
    data["slurm_operator_version"] = step.operator_version
    data["k8s_version"] = step.k8s_version
    data["node_group_version"] = deployed.effective_node_group_version
    return spec_from_mapping(data)


def check_kubernetes_kept(spec: SoperatorSpec, store: object) -> None:
    """A spec that leaves `k8s_version` to the recipe must not move a deployed cluster to
    another Kubernetes version unasked (a newer recipe's default can be two minors away):
    refused, with the two ways on."""
    if spec.k8s_version is not None:
        return
    from npa_sop_tui.errors import NpaError
    from npa_sop_tui.spec.model import load_spec

    try:
        path = store.spec_file(spec.name)  # type: ignore[attr-defined]
        deployed = load_spec(path, validate=False).spec if path is not None else None
    except NpaError:
        return  # no readable spec as deployed: nothing to compare with
    if deployed is None or deployed.effective_k8s_version == spec.effective_k8s_version:
        return
    raise UsageError(
        f"k8s_version is not set, so Soperator {spec.slurm_operator_version}'s recipe would "
        f"move {spec.name!r} from Kubernetes {deployed.effective_k8s_version} to "
        f"{spec.effective_k8s_version}",
        hint=f'pin k8s_version: "{deployed.effective_k8s_version}" in the spec to keep it, or '
        f"run `npa soperator upgrade --name {spec.name} --to {spec.slurm_operator_version}`, "
        "which moves Kubernetes one minor at a time",
    )
