# Stand-in for the recipe's module.k8s: generated from its graph at layout 531a6061d735bac04cbf36f4ede317d59309e322
# (recipe/graphs/531a6061d735bac04cbf36f4ede317d59309e322.json). null_resources at the real addresses; see terraform/standin_addresses.py.

variable "inputs" { type = any }
variable "sleep_seconds" { type = number }
locals {
  i = var.inputs
}

# What the real main.tf reads without a null guard, read the same way: a null there fails
# the plan as it would upstream (an output, so it is evaluated on every plan).
variable "reads" {
  type    = map(string)
  default = {}
}
output "reads" {
  value = var.reads
}

# module.k8s.nebius_compute_v1_gpu_cluster.this_v2 (modules/k8s/k8s_ng_workers_v2.tf)
resource "null_resource" "nebius_compute_v1_gpu_cluster__this_v2" {
  for_each = toset(local.i.fabrics)
  triggers = {
    cluster_identity = tostring(local.i.cluster_identity)
    fabric = each.value
  }
  provisioner "local-exec" {
    command = "sleep ${var.sleep_seconds}"
  }
}

# module.k8s.nebius_mk8s_v1_cluster.this (modules/k8s/k8s_cluster.tf)
resource "null_resource" "nebius_mk8s_v1_cluster__this" {
  triggers = {
    cluster_identity = tostring(local.i.cluster_identity)
  }
  provisioner "local-exec" {
    command = "sleep ${var.sleep_seconds}"
  }
}

resource "null_resource" "nebius_mk8s_v1_cluster__this__update" {
  triggers = {
    k8s_version = tostring(local.i.k8s_version)
  }
  depends_on = [null_resource.nebius_mk8s_v1_cluster__this]
}

# module.k8s.nebius_mk8s_v1_node_group.accounting (modules/k8s/k8s_ng_accounting.tf)
resource "null_resource" "nebius_mk8s_v1_node_group__accounting" {
  count = local.i.accounting ? 1 : 0
  triggers = {
    accounting_shape = tostring(local.i.accounting_shape)
    cluster_id = null_resource.nebius_mk8s_v1_cluster__this.id
  }
  depends_on = [null_resource.nebius_mk8s_v1_cluster__this__update]
  provisioner "local-exec" {
    command = "sleep ${var.sleep_seconds}"
  }
}

resource "null_resource" "nebius_mk8s_v1_node_group__accounting__update" {
  count = local.i.accounting ? 1 : 0
  triggers = {
    k8s_version = tostring(local.i.k8s_version)
  }
  depends_on = [null_resource.nebius_mk8s_v1_node_group__accounting]
}

# module.k8s.nebius_mk8s_v1_node_group.controller (modules/k8s/k8s_ng_controller.tf)
resource "null_resource" "nebius_mk8s_v1_node_group__controller" {
  triggers = {
    cluster_id = null_resource.nebius_mk8s_v1_cluster__this.id
    controller_shape = tostring(local.i.controller_shape)
  }
  depends_on = [null_resource.nebius_mk8s_v1_cluster__this__update]
  provisioner "local-exec" {
    command = "sleep ${var.sleep_seconds}"
  }
}

resource "null_resource" "nebius_mk8s_v1_node_group__controller__update" {
  triggers = {
    controller_size = tostring(local.i.controller_size)
    k8s_version = tostring(local.i.k8s_version)
  }
  depends_on = [null_resource.nebius_mk8s_v1_node_group__controller]
}

# module.k8s.nebius_mk8s_v1_node_group.login (modules/k8s/k8s_ng_login.tf)
resource "null_resource" "nebius_mk8s_v1_node_group__login" {
  count = local.i.login_node_group ? 1 : 0
  triggers = {
    cluster_id = null_resource.nebius_mk8s_v1_cluster__this.id
    login_shape = tostring(local.i.login_shape)
  }
  depends_on = [null_resource.nebius_mk8s_v1_cluster__this__update]
  provisioner "local-exec" {
    command = "sleep ${var.sleep_seconds}"
  }
}

resource "null_resource" "nebius_mk8s_v1_node_group__login__update" {
  count = local.i.login_node_group ? 1 : 0
  triggers = {
    k8s_version = tostring(local.i.k8s_version)
    login_size = tostring(local.i.login_size)
  }
  depends_on = [null_resource.nebius_mk8s_v1_node_group__login]
}

# module.k8s.nebius_mk8s_v1_node_group.nfs (modules/k8s/k8s_ng_nfs.tf)
resource "null_resource" "nebius_mk8s_v1_node_group__nfs" {
  count = local.i.nfs_node_group ? 1 : 0
  triggers = {
    cluster_id = null_resource.nebius_mk8s_v1_cluster__this.id
    nfs_shape = tostring(local.i.nfs_shape)
  }
  depends_on = [null_resource.nebius_mk8s_v1_cluster__this__update]
  provisioner "local-exec" {
    command = "sleep ${var.sleep_seconds}"
  }
}

resource "null_resource" "nebius_mk8s_v1_node_group__nfs__update" {
  count = local.i.nfs_node_group ? 1 : 0
  triggers = {
    k8s_version = tostring(local.i.k8s_version)
    nfs_size = tostring(local.i.nfs_size)
  }
  depends_on = [null_resource.nebius_mk8s_v1_node_group__nfs]
}

# module.k8s.nebius_mk8s_v1_node_group.system (modules/k8s/k8s_ng_system.tf)
resource "null_resource" "nebius_mk8s_v1_node_group__system" {
  triggers = {
    cluster_id = null_resource.nebius_mk8s_v1_cluster__this.id
    system_shape = tostring(local.i.system_shape)
  }
  depends_on = [null_resource.nebius_mk8s_v1_cluster__this__update]
  provisioner "local-exec" {
    command = "sleep ${var.sleep_seconds}"
  }
}

resource "null_resource" "nebius_mk8s_v1_node_group__system__update" {
  triggers = {
    k8s_version = tostring(local.i.k8s_version)
    system_size = tostring(local.i.system_size)
  }
  depends_on = [null_resource.nebius_mk8s_v1_node_group__system]
}

# module.k8s.nebius_mk8s_v1_node_group.worker_v2 (modules/k8s/k8s_ng_workers_v2.tf)
resource "null_resource" "nebius_mk8s_v1_node_group__worker_v2" {
  count = length(local.i.worker_groups)
  triggers = {
    cluster_id = null_resource.nebius_mk8s_v1_cluster__this.id
    boot_disk = local.i.worker_groups[count.index].boot_disk
    capacity = local.i.worker_groups[count.index].capacity
    fabric = local.i.worker_groups[count.index].fabric
    shape = local.i.worker_groups[count.index].shape
    name = local.i.worker_groups[count.index].name
  }
  depends_on = [null_resource.nebius_mk8s_v1_cluster__this__update]
  lifecycle {
    ignore_changes        = [triggers["name"]]
  }
  provisioner "local-exec" {
    command = "sleep ${var.sleep_seconds}"
  }
}

resource "null_resource" "nebius_mk8s_v1_node_group__worker_v2__update" {
  count = length(local.i.worker_groups)
  triggers = {
    k8s_version = tostring(local.i.k8s_version)
    node_group_version = tostring(local.i.node_group_version)
    name = local.i.worker_groups[count.index].name
    size = local.i.worker_groups[count.index].size
  }
  depends_on = [null_resource.nebius_mk8s_v1_node_group__worker_v2]
}

# module.k8s.nebius_vpc_v1_allocation.this (modules/k8s/k8s_ng_login.tf)
resource "null_resource" "nebius_vpc_v1_allocation__this" {
  triggers = {
    cluster_identity = tostring(local.i.cluster_identity)
    login_public_ip = tostring(local.i.login_public_ip)
  }
  lifecycle {
    create_before_destroy = true
  }
  provisioner "local-exec" {
    command = "sleep ${var.sleep_seconds}"
  }
}

# module.k8s.terraform_data.check_resource_preset_sufficiency (modules/k8s/sufficiency.tf)
resource "null_resource" "terraform_data__check_resource_preset_sufficiency" {
  for_each = { for n in range(local.i.node_group_checks) : tostring(n) => n }
  provisioner "local-exec" {
    command = "sleep ${var.sleep_seconds}"
  }
}

# module.k8s.terraform_data.kubectl_cluster_context (modules/k8s/k8s_cluster.tf)
resource "null_resource" "terraform_data__kubectl_cluster_context" {
  triggers = {
    cluster_id = null_resource.nebius_mk8s_v1_cluster__this.id
    every_apply = timestamp()
  }
  depends_on = [null_resource.nebius_mk8s_v1_cluster__this__update]
  provisioner "local-exec" {
    command = "sleep ${var.sleep_seconds}"
  }
}

resource "null_resource" "standin_worker_node" {
  for_each = local.i.per_node_resources ? toset(flatten([
    for g in local.i.worker_groups : [for n in range(tonumber(g.size)) : "${g.name}-${n}"]
  ])) : toset([])
  provisioner "local-exec" {
    command = "sleep ${var.sleep_seconds}"
  }
}
