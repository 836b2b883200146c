# Stand-in for modules/slurm: Flux, the operator and the Helm releases it installs.

variable "k8s_cluster_id" { type = string }
variable "operator_version" { type = string }
variable "operator_stable" { type = bool }
variable "nodesets" {
  type = list(object({ name = string, size = number }))
}
variable "partitions" { type = list(string) }
variable "accounting_enabled" { type = bool }
variable "rest_enabled" { type = bool }
variable "exporter_enabled" { type = bool }
variable "telemetry_enabled" { type = bool }
variable "active_checks_scope" { type = string }
variable "apparmor_default" { type = bool }
variable "nfs_storage_class" { type = string }
variable "jail_size_gibibytes" { type = number }
variable "sleep_seconds" { type = number }

resource "null_resource" "flux" {
  triggers = {
    cluster = var.k8s_cluster_id
  }
  provisioner "local-exec" {
    command = "sleep ${var.sleep_seconds}"
  }
}

resource "null_resource" "jail" {
  triggers = {
    cluster = var.k8s_cluster_id
    size    = var.jail_size_gibibytes
  }
  provisioner "local-exec" {
    command = "sleep ${var.sleep_seconds}"
  }
}

# The operator version reaches only this module, as upstream passes it only to module "slurm":
# its Flux HelmReleases are upgraded in place (the `*_values` resources below), nothing in
# module "k8s" depends on it.
resource "null_resource" "release_operator" {
  triggers = {
    flux = null_resource.flux.id
  }
  provisioner "local-exec" {
    command = "echo installing soperator ${var.operator_version}; sleep ${var.sleep_seconds}"
  }
}

# The operator release's chart and version: upstream upgrades the HelmRelease in place.
resource "null_resource" "release_operator_values" {
  triggers = {
    chart   = var.operator_stable ? "cr.nebius.cloud/soperator" : "cr.nebius.cloud/soperator-unstable"
    version = var.operator_version
  }
  depends_on = [null_resource.release_operator]
}

resource "null_resource" "release_slurm_cluster" {
  triggers = {
    operator = null_resource.release_operator.id
    jail     = null_resource.jail.id
  }
  provisioner "local-exec" {
    command = "sleep ${var.sleep_seconds}"
  }
}

# The release's values: upstream upgrades the Helm release in place when they change.
resource "null_resource" "release_slurm_cluster_values" {
  triggers = {
    version       = var.operator_version
    partitions    = join(",", var.partitions)
    rest          = var.rest_enabled
    apparmor      = var.apparmor_default
    storage_class = var.nfs_storage_class
    nodesets      = jsonencode(var.nodesets)
  }
  depends_on = [null_resource.release_slurm_cluster]
}

resource "null_resource" "release_nodeset" {
  for_each = { for n in var.nodesets : n.name => n }
  triggers = {
    slurm_cluster = null_resource.release_slurm_cluster.id
    name          = each.key
  }
  provisioner "local-exec" {
    command = "sleep ${var.sleep_seconds}"
  }
}

resource "null_resource" "release_accounting" {
  count = var.accounting_enabled ? 1 : 0
  triggers = {
    slurm_cluster = null_resource.release_slurm_cluster.id
  }
  provisioner "local-exec" {
    command = "sleep ${var.sleep_seconds}"
  }
}

resource "null_resource" "release_exporter" {
  count = var.exporter_enabled ? 1 : 0
  triggers = {
    slurm_cluster = null_resource.release_slurm_cluster.id
  }
}

resource "null_resource" "release_o11y" {
  count = var.telemetry_enabled ? 1 : 0
  triggers = {
    flux = null_resource.flux.id
  }
}

resource "null_resource" "wait_for_slurm_cluster" {
  triggers = {
    slurm_cluster = null_resource.release_slurm_cluster.id
  }
  provisioner "local-exec" {
    command = "echo waiting for SlurmCluster Available; sleep ${var.sleep_seconds}"
  }
  depends_on = [null_resource.release_nodeset]
}

resource "null_resource" "release_activechecks" {
  triggers = {
    ready = null_resource.wait_for_slurm_cluster.id
  }
  provisioner "local-exec" {
    command = "sleep ${var.sleep_seconds}"
  }
}

resource "null_resource" "release_activechecks_values" {
  triggers = {
    version = var.operator_version
    scope   = var.active_checks_scope
  }
  depends_on = [null_resource.release_activechecks]
}

output "slurm_cluster_id" {
  value = null_resource.release_activechecks.id
}
