"""The stand-in's modules, generated from the real recipe's derived graph (recipe/graph.py).

Each module of the graph becomes `modules/<name>/main.tf`; each real resource `<type>.<name>`
in it becomes `null_resource.<type>__<name>` (terraform/standin_addresses.py) with the real
resource's count or for_each, its `create_before_destroy`, and as `triggers` the inputs that
replace it; the inputs it updates in place go to `null_resource.<type>__<name>__update`. So
`terraform plan` on the stand-in replaces, updates, creates and deletes what the real recipe
would, at the same addresses once read back.

Every module takes one `inputs` object, computed by the stand-in's root main.tf from the
recipe's variables: the values the graph's input names stand for (INPUT_EXPRESSIONS).
"""

from __future__ import annotations

import json
from typing import Any

from npa_sop_tui.recipe.graph import RecipeGraph
from npa_sop_tui.terraform.standin_addresses import standin_name

# graph input → its stand-in expression, for one resource (`local.i` is the module's inputs)
INPUT_EXPRESSIONS = {
    "cluster_id": "null_resource.nebius_mk8s_v1_cluster__this.id",
    "every_apply": "timestamp()",
    "fabric": "each.value",
}
# inputs that differ per worker node group (a count over local.i.worker_groups)
WORKER_FIELDS = {
    "worker_size": "size",
    "worker_name": "name",
    "worker_shape": "shape",
    "worker_fabric": "fabric",
    "worker_boot_disk": "boot_disk",
    "worker_capacity": "capacity",
}
COLLECTIONS = {  # what a count/for_each goes over, in the inputs
    "worker_node_groups": "length(local.i.worker_groups)",
    "fabrics": "toset(local.i.fabrics)",
    "node_group_checks": "{ for n in range(local.i.node_group_checks) : tostring(n) => n }",
}


def _expression(name: str, per_worker: bool) -> str:
    if name in INPUT_EXPRESSIONS:
        return INPUT_EXPRESSIONS[name]
    if per_worker and name in WORKER_FIELDS:
        return f"local.i.worker_groups[count.index].{WORKER_FIELDS[name]}"
    return f"tostring(local.i.{name})"


def _instances(resource: dict[str, Any]) -> tuple[str, bool]:
    """(the count/for_each line, whether inputs are per worker node group)."""
    spec = resource["instances"]
    if spec["kind"] == "one":
        return "", False
    if spec["kind"] == "flag":
        return f"  count = local.i.{spec['flag']} ? 1 : 0\n", False
    over = COLLECTIONS[spec["over"]]
    if spec["kind"] == "count":
        return f"  count = {over}\n", spec["over"] == "worker_node_groups"
    return f"  for_each = {over}\n", False


def _key(name: str, per_worker: bool) -> str:
    """A trigger's key: a worker node group's own fields by their names (`name`, `size`:
    what plan reading and capacity read), any other input by the graph's name."""
    return WORKER_FIELDS[name] if per_worker and name in WORKER_FIELDS else name


def _triggers(names: list[str], per_worker: bool, pool: bool) -> str:
    lines = [f"    {_key(n, per_worker)} = {_expression(n, per_worker)}" for n in names]
    if pool:  # the node group's name, for reading plans by pool (never a reason to replace)
        lines.append("    name = local.i.worker_groups[count.index].name")
    return "  triggers = {\n" + "\n".join(lines) + "\n  }\n" if lines else ""


def _after(resource: dict[str, Any], updated: set[str]) -> str:
    """`depends_on` the resources of its module the real one waits for (the graph's `after`;
    one with an in-place part, through that part: `updated`), so Terraform runs the
    stand-in's steps in the recipe's order and side by side where the recipe's run so."""
    after = [
        "null_resource." + standin_name(*other.split(".", 1), update=other in updated)
        for other in resource.get("after", [])
    ]
    return f"  depends_on = [{', '.join(after)}]\n" if after else ""


def _resource(resource: dict[str, Any], updated: set[str]) -> str:
    count, per_worker = _instances(resource)
    name = standin_name(resource["type"], resource["name"])
    replace, update = resource["inputs"]["replace"], resource["inputs"]["update"]
    pool = per_worker and "worker_name" not in replace
    lifecycle = []
    if resource["create_before_destroy"]:
        lifecycle.append("    create_before_destroy = true")
    if pool:
        lifecycle.append('    ignore_changes        = [triggers["name"]]')
    body = (
        f"# {resource['address']} ({resource['file']})\n"
        f'resource "null_resource" "{name}" {{\n{count}'
        + _triggers(replace, per_worker, pool)
        + _after(resource, updated)
        + ("  lifecycle {\n" + "\n".join(lifecycle) + "\n  }\n" if lifecycle else "")
        + '  provisioner "local-exec" {\n    command = "sleep ${var.sleep_seconds}"\n  }\n}\n'
    )
    if update:
        companion = standin_name(resource["type"], resource["name"], update=True)
        names = sorted({*update, *(["worker_name"] if per_worker else [])})
        body += (
            f'\nresource "null_resource" "{companion}" {{\n{count}'
            + _triggers(names, per_worker, False)
            + f"  depends_on = [null_resource.{name}]\n}}\n"
        )
    return body


def module_tf(graph: RecipeGraph, module: str, *, reads: bool = False) -> str:
    """`modules/<name>/main.tf` of `module` (`module.k8s`)."""
    head = (
        f"# Stand-in for the recipe's {module}: generated from its graph at layout "
        f"{graph.layout}\n# (recipe/graphs/{graph.layout}.json). null_resources at the real "
        "addresses; see terraform/standin_addresses.py.\n\n"
        'variable "inputs" { type = any }\nvariable "sleep_seconds" { type = number }\n'
        "locals {\n  i = var.inputs\n}\n"
    )
    if reads:
        head += (
            "\n# What the real main.tf reads without a null guard, read the same way: a null "
            "there fails\n# the plan as it would upstream (an output, so it is evaluated on "
            "every plan).\n"
            'variable "reads" {\n  type    = map(string)\n  default = {}\n}\n'
            'output "reads" {\n  value = var.reads\n}\n'
        )
    resources = graph.modules[module]["resources"]
    updated = {f"{r['type']}.{r['name']}" for r in resources if r["inputs"]["update"]}
    body = head + "".join(f"\n{_resource(r, updated)}" for r in resources)
    if any(r["instances"].get("over") == "worker_node_groups" for r in resources):
        body += PER_NODE
    return body


# Stand-in only, off by default: one resource per worker node (the lifecycle benchmark's
# many-resource deploy). No real resource stands behind it.
PER_NODE = """
resource "null_resource" "standin_worker_node" {
  for_each = local.i.per_node_resources ? toset(flatten([
    for g in local.i.worker_groups : [for n in range(tonumber(g.size)) : "${g.name}-${n}"]
  ])) : toset([])
  provisioner "local-exec" {
    command = "sleep ${var.sleep_seconds}"
  }
}
"""


def module_files(graph: RecipeGraph) -> dict[str, str]:
    """`modules/<folder>/main.tf` for every module of the graph, by path under soperator/."""
    out = {}
    for module, info in graph.modules.items():
        if module == "root":
            continue
        folder = info["source"].removeprefix("../../")
        out[f"{folder}/main.tf"] = module_tf(graph, module, reads=module == "module.k8s")
    return out


def module_calls(graph: RecipeGraph) -> str:
    """The root's module blocks, each given the stand-in's inputs."""
    blocks = []
    previous: str | None = None
    for module in graph.module_order:
        info = graph.modules[module]
        name = module.removeprefix("module.")
        extra = "  reads = local.reads\n" if module == "module.k8s" else ""
        after = f"  depends_on = [{previous}]\n" if previous else ""
        blocks.append(
            f'module "{name}" {{\n  source        = {json.dumps(info["source"])}\n'
            f"  inputs        = local.standin_inputs\n"
            f"  sleep_seconds = var.standin_sleep_seconds\n{extra}{after}}}\n"
        )
        previous = module
    return "\n".join(blocks)
