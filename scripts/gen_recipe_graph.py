#!/usr/bin/env python3
"""Derive the resource graph of the upstream recipe from its Terraform files.

    python scripts/gen_recipe_graph.py --layout <40-hex SHA> --dir <folder> [--out DIR]

`<folder>` holds the recipe's `soperator/` files of that layout as read from
nebius/nebius-solutions-library (LAYOUTS below names each file and the commit it was read
at: the public index keeps each file at a few commits only, never a whole tree at one). The
output, `<out>/<layout>.json`, is what npa needs of the recipe's graph (python-hcl2 reads it):

- the module tree (root module calls and their sources) and every `resource` block with its
  address, how many instances it has (INSTANCES: one, a flag, one per worker node group, one
  per fabric …: a count or for_each this script does not know fails it, so a new recipe
  layout is noticed here and not on a user's cluster);
- per resource, which of its arguments force a replacement and which update in place
  (REPLACING, by resource type, from the providers' schemas), and which of the recipe's
  inputs feed each (INPUTS: `var.k8s_version` → `k8s_version`, a worker node group's size
  → `worker_size` …), so a stand-in replaces and updates what the real recipe would;
- `create_before_destroy`, and whether it is replaced on every apply (`triggers_replace`
  holding `timestamp()`);
- which replacements are local bookkeeping, safe to apply without asking (`safe_replace`):
  a `local_file` (a file the recipe renders again) and a `terraform_data` (a value or a
  local-exec wait: no cloud object). The deploy guard reads this list per commit.

python-hcl2 is needed here only (the `test` extra); the generated JSON is what ships.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPOSITORY = "nebius/nebius-solutions-library"
ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "npa_sop_tui" / "recipe" / "graphs"
# Where each file was read: the June 2025 snapshot (0616445b) keeps the files later commits
# in the index do not have (the cluster, the sufficiency check, the login module).
C1861F98 = "c1861f98299669b44b71643f837062904b544f39"
S531A6061 = "531a6061d735bac04cbf36f4ede317d59309e322"
S8219976B = "8219976b84913df8d3f7186afeaef1a22a946d92"
S0616445B = "0616445b19d4aac05e628351441f6242b663e7fe"
S17F10B34 = "17f10b346b17cf0b2dc2c3ca3918d762bd3469a1"
S942FC19C = "942fc19ca6a2e40301311f9395168a8ab1051aa2"
S81FEC705 = "81fec705c57898263ed61f04b615ee6b33e906dd"


@dataclass(frozen=True)
class Layout:
    """One layout of the recipe: the files that make it and the commit each was read at."""

    versions: tuple[str, ...]  # Soperator versions whose recipe commits have this layout
    recipe_commits: tuple[str, ...]  # the recipe commits (recipes.yaml) it serves
    files: dict[str, str]  # path under soperator/ → commit read at
    root_inputs: dict[str, Any] = field(default_factory=dict)  # what the root module sets


_COMMON = {
    "installations/example/main.tf": C1861F98,
    "modules/k8s/k8s_cluster.tf": S0616445B,
    "modules/k8s/sufficiency.tf": S0616445B,
    "modules/k8s/k8s_ng_system.tf": C1861F98,
    "modules/k8s/k8s_ng_controller.tf": S942FC19C,
    "modules/k8s/k8s_ng_login.tf": S17F10B34,
    "modules/k8s/k8s_ng_accounting.tf": C1861F98,
    "modules/k8s/k8s_ng_nfs.tf": S81FEC705,
    "modules/k8s/k8s_ng_workers_v2.tf": C1861F98,
    "modules/slurm/main.tf": S531A6061,
    "modules/slurm/flux_release_nodesets.tf": S8219976B,
    "modules/login/main.tf": S0616445B,
}
LAYOUTS = {
    # the slurm module as at 531a6061 (the waits run side by side) with the nodesets' rendered
    # Flux file of 8219976b; no externally managed bootstrap
    S531A6061: Layout(
        versions=("4.1.6", "4.1.7", "4.1.12"),
        recipe_commits=(
            "01e8c67a6182305bf2751a931fc5ee2f642f51a1",
            "ecc5cec64219914d2109282c3f1c643922a916e9",
            "9a187732a69e500115f78a088dc2ceb3981540e3",
        ),
        files=_COMMON,
    ),
    # c1861f98: the root sets bootstrap_managed_externally = true; the slurm module's
    # wait_for_bootstrap_releases is replaced on every apply
    C1861F98: Layout(
        versions=("4.1.13",),
        recipe_commits=("c1e21829140ab91a9021432c662546a77e5178af",),
        files={
            **_COMMON,
            "modules/k8s/bootstrap.tf": C1861F98,
            "modules/slurm/bootstrap.tf": C1861F98,
        },
        root_inputs={"bootstrap_managed_externally": True},
    ),
}

# count / for_each expression (as python-hcl2 prints it) → how many instances, keyed how
INSTANCES: dict[str, dict[str, str]] = {
    "length(var.node_group_workers_v2)": {"kind": "count", "over": "worker_node_groups"},
    "var.node_group_login.node_group_enabled ? 1 : 0": {"kind": "flag", "flag": "login_node_group"},
    "var.node_group_accounting.enabled ? 1 : 0": {"kind": "flag", "flag": "accounting"},
    "var.node_group_nfs.enabled ? 1 : 0": {"kind": "flag", "flag": "nfs_node_group"},
    "var.bootstrap_managed_externally ? 1 : 0": {
        "kind": "flag",
        "flag": "bootstrap_managed_externally",
    },
    "local.gpu_clusters_v2": {"kind": "for_each", "over": "fabrics"},
    "zipmap(range(length(local.ng_resources)), local.ng_resources)": {
        "kind": "for_each",
        "over": "node_group_checks",
    },
}

# Arguments that force a replacement when they change, per resource type (the providers'
# schemas: RequiresReplace). Every other argument is updated in place.
REPLACING: dict[str, tuple[str, ...]] = {
    "local_file": ("*",),  # any change of content or name writes a new file
    "terraform_data": ("triggers_replace",),  # `input` is updated in place
    "helm_release": ("name", "namespace"),
    "nebius_mk8s_v1_cluster": ("parent_id", "name", "control_plane.subnet_id"),
    # the node group's instance template: a new platform, preset, disk, GPU cluster or
    # capacity makes new nodes; version, counts and labels roll or resize in place
    "nebius_mk8s_v1_node_group": (
        "parent_id",
        "template.resources",
        "template.boot_disk",
        "template.gpu_cluster",
        "template.preemptible",
        "template.reservation_policy",
    ),
    "nebius_compute_v1_gpu_cluster": ("parent_id", "infiniband_fabric"),
    "nebius_vpc_v1_allocation": ("parent_id", "ipv4_public", "ipv4_private"),
}
SAFE_TYPES = {
    "local_file": "a file the recipe renders (written again with the new content)",
    "terraform_data": "a value or a local wait/check step: no cloud object",
}

# A reference in an argument (regex on its text) → the recipe input it carries.
INPUTS: tuple[tuple[str, str], ...] = (
    (r"var\.k8s_version", "k8s_version"),
    (r"var\.node_group_version", "node_group_version"),
    (r"var\.operator_version", "operator_version"),
    (r"var\.operator_stable", "operator_stable"),
    (r"var\.worker_nodesets|var\.node_capacity\.worker", "nodesets"),
    (r"var\.slurm_nodesets_partitions", "partitions"),
    (r"var\.accounting_enabled", "accounting"),
    (
        r"var\.node_group_workers_v2\[count\.index\]\.(size|min_size|max_size|autoscaling)",
        "worker_size",
    ),
    (
        r"var\.node_group_workers_v2\[count\.index\]\.(node_group_name|name|subset_index)",
        "worker_name",
    ),
    (r"var\.node_group_workers_v2\[count\.index\]\.resource", "worker_shape"),
    (r"var\.node_group_workers_v2\[count\.index\]\.gpu_cluster", "worker_fabric"),
    (r"var\.node_group_workers_v2\[count\.index\]\.boot_disk", "worker_boot_disk"),
    (
        r"var\.node_group_workers_v2\[count\.index\]\.(preemptible|reservation_policy)",
        "worker_capacity",
    ),
    (r"var\.node_group_system\.(min_size|max_size)", "system_size"),
    (r"var\.node_group_system\.(resource|boot_disk)", "system_shape"),
    (r"var\.node_group_controller\.size", "controller_size"),
    (r"var\.node_group_controller\.(resource|boot_disk)", "controller_shape"),
    (r"var\.node_group_login\.size", "login_size"),
    (r"var\.node_group_login\.(resource|boot_disk)", "login_shape"),
    (r"var\.node_group_accounting\.spec\.(resource|boot_disk)", "accounting_shape"),
    (r"var\.node_group_nfs\.spec\.size", "nfs_size"),
    (r"var\.node_group_nfs\.spec\.(resource|boot_disk)", "nfs_shape"),
    (r"each\.value\.fabric", "fabric"),
    (r"var\.login_public_ip", "login_public_ip"),
    (r"var\.(iam_project_id|vpc_subnet_id|name)\b", "cluster_identity"),
    (r"nebius_mk8s_v1_cluster\.this\.id", "cluster_id"),
    (r"timestamp\(\)", "every_apply"),
    (r"data\.kubernetes_service\.slurm_login", "login_service"),
    (r"terraform_data\.lb_service_ip", "login_service"),
    (r"local_file\.flux_release_rendered_nodesets", "nodesets"),
    (r"var\.(external_bootstrap_ready|node_groups_dependency)", "bootstrap_token"),
)
# arguments that say nothing a stand-in must model (meta-arguments and decoration)
IGNORED = {"count", "for_each", "depends_on", "lifecycle", "provisioner", "labels", "filename"}


def _hcl(text: str) -> dict[str, Any]:
    import hcl2
    from hcl2 import SerializationOptions

    options = SerializationOptions(
        strip_string_quotes=True, with_comments=False, explicit_blocks=False,
        preserve_heredocs=False,
    )  # fmt: skip
    parsed: dict[str, Any] = hcl2.loads(text, serialization_options=options)
    return parsed


def _expr(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    text = text.strip()
    if text.startswith("${") and text.endswith("}"):
        text = text[2:-1]
    return re.sub(r"\s+", " ", text).strip()


def _flatten(body: dict[str, Any], prefix: str = "") -> dict[str, str]:
    """Arguments by dotted path (nested objects opened one level: `template.resources`)."""
    out: dict[str, str] = {}
    for key, value in body.items():
        if key in IGNORED or key.startswith("__"):
            continue
        path = f"{prefix}{key}"
        if isinstance(value, dict) and not prefix:
            for sub, inner in value.items():
                out[f"{path}.{sub}"] = json.dumps(inner, sort_keys=True)
        else:
            out[path] = json.dumps(value, sort_keys=True)
    return out


def _inputs(text: str) -> list[str]:
    found = [name for pattern, name in INPUTS if re.search(pattern, text)]
    return sorted(set(found))


def _replaces(kind: str, path: str) -> bool:
    rules = REPLACING.get(kind, ("parent_id",))
    return any(r == "*" or path == r or path.startswith(f"{r}.") for r in rules)


def resource_entry(module: str, kind: str, name: str, body: dict[str, Any], file: str) -> Any:
    counted = body.get("count", body.get("for_each"))
    instances = {"kind": "one"}
    if counted is not None:
        expr = _expr(counted)
        if expr not in INSTANCES:
            raise SystemExit(f"{file}: {kind}.{name}: no rule for the instances of {expr!r}")
        instances = INSTANCES[expr]
    lifecycle = body.get("lifecycle") or [{}]
    lifecycle = lifecycle[0] if isinstance(lifecycle, list) else lifecycle
    replace: set[str] = set()
    update: set[str] = set()
    replace_args, update_args = [], []
    for path, text in sorted(_flatten(body).items()):
        feeds = _inputs(text)
        if _replaces(kind, path):
            replace_args.append(path)
            replace.update(feeds)
        else:
            update_args.append(path)
            update.update(feeds)
    always = "timestamp()" in _expr(body.get("triggers_replace", ""))
    entry: dict[str, Any] = {
        "address": f"{module}.{kind}.{name}" if module else f"{kind}.{name}",
        "module": module,
        "type": kind,
        "name": name,
        "file": file,
        "instances": instances,
        "replace_on": replace_args,
        "update_on": update_args,
        "inputs": {"replace": sorted(replace), "update": sorted(update - replace)},
        "create_before_destroy": bool(lifecycle.get("create_before_destroy")),
        "always_replaced": always,
    }
    if kind in SAFE_TYPES:
        entry["safe_replace"] = (
            "replaced on every apply (triggers_replace holds timestamp())"
            if always
            else SAFE_TYPES[kind]
        )
    return entry


def _record_order(modules: dict[str, Any], rel: str, doc: dict[str, Any]) -> None:
    """Each resource's `after`: the resources of its module it waits for, named in its
    `depends_on` or referenced by its arguments (Terraform orders by both). So the stand-in
    runs in parallel what the recipe runs in parallel: both apply waits that follow the
    slurm-cluster release start together."""
    for info in modules.values():
        local = {f"{r['type']}.{r['name']}": r for r in info["resources"] if r["file"] == rel}
        if not local:
            continue
        siblings = {f"{r['type']}.{r['name']}" for r in info["resources"]}
        for block in doc.get("resource", []):
            for kind, named in block.items():
                for name, body in named.items():
                    own = f"{kind}.{name}"
                    text = json.dumps(body, sort_keys=True)
                    after = [other for other in sorted(siblings) if other != own
                             and re.search(rf"\b{re.escape(other)}\b", text)]  # fmt: skip
                    local[own]["after"] = after


def derive(layout_commit: str, folder: Path) -> dict[str, Any]:
    layout = LAYOUTS[layout_commit]
    files: dict[str, Any] = {}
    parsed: dict[str, dict[str, Any]] = {}
    for rel, commit in sorted(layout.files.items()):
        path = folder / rel
        if not path.is_file():
            raise SystemExit(f"{path}: missing (read it at {commit})")
        text = path.read_text(encoding="utf-8")
        files[rel] = {"commit": commit, "form": "excerpt",
                      "sha256": hashlib.sha256(text.encode()).hexdigest()}  # fmt: skip
        parsed[rel] = _hcl(text)
    calls: dict[str, str] = {}
    for block in parsed["installations/example/main.tf"].get("module", []):
        for name, body in block.items():
            calls[str(Path("modules") / Path(_expr(body["source"])).name)] = f"module.{name}"
    modules: dict[str, Any] = {}
    for rel, doc in parsed.items():
        folder_of = str(Path(rel).parent)
        module = "" if folder_of == "installations/example" else calls.get(folder_of)
        if module is None:
            raise SystemExit(f"{rel}: no module call of {folder_of} in the root module")
        info = modules.setdefault(module or "root", {"resources": []})
        if module:
            info["source"] = f"../../{folder_of}"
        for block in doc.get("resource", []):
            for kind, named in block.items():
                for name, body in named.items():
                    info["resources"].append(resource_entry(module, kind, name, body, rel))
    for rel, doc in parsed.items():
        _record_order(modules, rel, doc)
    for info in modules.values():
        info["resources"].sort(key=lambda r: r["address"])
    return {
        "generated_by": "scripts/gen_recipe_graph.py",
        "repository": REPOSITORY,
        "layout": layout_commit,
        "versions": list(layout.versions),
        "recipe_commits": list(layout.recipe_commits),
        "root_inputs": layout.root_inputs,
        "files": files,
        "modules": dict(sorted(modules.items())),
        # the root's module calls in the order it declares them (the stand-in makes each
        # wait for the one before: k8s, then slurm, then the login script)
        "module_order": [m for m in calls.values() if m in modules],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--layout", required=True, choices=sorted(LAYOUTS))
    parser.add_argument("--dir", required=True, type=Path, help="the layout's soperator/ files")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    graph = derive(args.layout, args.dir)
    args.out.mkdir(parents=True, exist_ok=True)
    target = args.out / f"{args.layout}.json"
    target.write_text(json.dumps(graph, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    count = sum(len(m["resources"]) for m in graph["modules"].values())
    print(f"{target}: {count} resources in {len(graph['modules'])} modules", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
