# Stand-in for modules/k8s: the mk8s cluster, GPU clusters and node groups.

variable "company_name" { type = string }
variable "region" { type = string }
variable "k8s_version" { type = string }
variable "node_group_version" { type = string }
variable "subnet_id" { type = string }
variable "system" {
  type = object({ min_size = number, max_size = number, preset = string })
}
variable "controller_preset" { type = string }
variable "reads" {
  type    = map(string)
  default = {}
}
variable "login_enabled" {
  type    = bool
  default = true
}
variable "login_size" { type = number }
variable "login_preset" { type = string }
variable "accounting_enabled" { type = bool }
variable "accounting_preset" { type = string }
variable "worker_chunks" {
  type = list(object({
    key       = string
    pool      = string
    size      = number
    platform  = string
    preset    = string
    fabric    = string
    boot_disk = number
    capacity  = string
  }))
}
variable "fabrics" { type = list(string) }
variable "per_node_resources" { type = bool }
variable "sleep_seconds" { type = number }

locals {
  chunks     = { for c in var.worker_chunks : c.key => c }
  ng_version = "${coalesce(var.k8s_version, "1.34")}-nebius-node.${var.node_group_version}"
  nodes = {
    for n in flatten([
      for c in var.worker_chunks : [for i in range(c.size) : { key = "${c.key}-${i}", group = c.key }]
    ]) : n.key => n if var.per_node_resources
  }
}

resource "null_resource" "cluster" {
  triggers = {
    name      = "soperator-${var.company_name}"
    region    = var.region
    subnet_id = var.subnet_id
  }
  provisioner "local-exec" {
    command = "sleep ${var.sleep_seconds}"
  }
}

# The Kubernetes versions of the control plane and the node groups: upstream upgrades both in
# place (mk8s cluster `control_plane.version`, node group `version`), so they live here and
# not in the triggers of what they belong to.
resource "null_resource" "cluster_version_values" {
  triggers = {
    control_plane = coalesce(var.k8s_version, "1.34")
    node_groups   = local.ng_version
  }
  depends_on = [null_resource.cluster]
}

resource "null_resource" "gpu_cluster" {
  for_each = toset(var.fabrics)
  triggers = {
    name    = "soperator-${var.company_name}-${each.value}"
    cluster = null_resource.cluster.id
  }
  provisioner "local-exec" {
    command = "sleep ${var.sleep_seconds}"
  }
}

resource "null_resource" "node_group_system" {
  triggers = {
    cluster = null_resource.cluster.id
    name    = "system"
    preset  = var.system.preset
    range   = "${var.system.min_size}..${var.system.max_size}"
  }
  provisioner "local-exec" {
    command = "sleep ${var.sleep_seconds}"
  }
}

resource "null_resource" "node_group_controller" {
  triggers = {
    cluster = null_resource.cluster.id
    name    = "controller"
    preset  = var.controller_preset
  }
  provisioner "local-exec" {
    command = "sleep ${var.sleep_seconds}"
  }
}

resource "null_resource" "node_group_login" {
  triggers = {
    cluster = null_resource.cluster.id
    name    = "login"
    # GB300: login pods run on the workers (upstream creates no login node group then).
    enabled = var.login_enabled
    size    = var.login_size
    preset  = var.login_preset
  }
  provisioner "local-exec" {
    command = "sleep ${var.sleep_seconds}"
  }
}

resource "null_resource" "node_group_accounting" {
  count = var.accounting_enabled ? 1 : 0
  triggers = {
    cluster = null_resource.cluster.id
    name    = "accounting"
    preset  = var.accounting_preset
  }
  provisioner "local-exec" {
    command = "sleep ${var.sleep_seconds}"
  }
}

# Worker node groups: the immutable template. Changing any of these replaces the group.
resource "null_resource" "worker_v2" {
  for_each = local.chunks
  triggers = {
    cluster   = null_resource.cluster.id
    name      = each.key
    platform  = each.value.platform
    preset    = each.value.preset
    fabric    = each.value.fabric
    gpu       = each.value.fabric == "" ? "" : null_resource.gpu_cluster[each.value.fabric].id
    boot_disk = each.value.boot_disk
    capacity  = each.value.capacity
  }
  provisioner "local-exec" {
    command = "echo creating node group ${each.key}; sleep ${var.sleep_seconds}"
  }
}

# The node count of a group. Upstream updates fixed_node_count in place; null_resource can
# only replace, so the count lives in its own resource and npa treats its replacement as a
# resize, not a destructive change.
resource "null_resource" "worker_v2_size" {
  for_each = local.chunks
  # Known at plan time (no dependency in triggers), so plans can show the size change.
  triggers = {
    name = each.key
    size = each.value.size
  }
  depends_on = [null_resource.worker_v2]
}

resource "null_resource" "worker_node" {
  for_each = local.nodes
  triggers = {
    group = null_resource.worker_v2[each.value.group].id
    name  = each.key
  }
  provisioner "local-exec" {
    command = "sleep ${var.sleep_seconds}"
  }
}

resource "null_resource" "kubectl_cluster_context" {
  triggers = {
    cluster = null_resource.cluster.id
    context = "nebius-${lower(replace(var.company_name, " ", "-"))}-slurm"
  }
}

# Evaluated on every plan, so a null that upstream's main.tf would dereference fails the plan;
# not a trigger: which reads a commit makes is no property of the cluster (an operator upgrade
# to another recipe commit must not replace it).
output "reads" {
  value = var.reads
}

output "cluster_id" {
  value = null_resource.cluster.id
}

output "kube_context" {
  value = null_resource.kubectl_cluster_context.triggers.context
}
