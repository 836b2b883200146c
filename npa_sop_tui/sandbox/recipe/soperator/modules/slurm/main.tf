# Stand-in for the recipe's module.slurm: generated from its graph at layout 531a6061d735bac04cbf36f4ede317d59309e322
# (recipe/graphs/531a6061d735bac04cbf36f4ede317d59309e322.json). null_resources at the real addresses; see terraform/standin_addresses.py.

variable "inputs" { type = any }
variable "sleep_seconds" { type = number }
locals {
  i = var.inputs
}

# module.slurm.helm_release.soperator_fluxcd_ad_hoc_cm (modules/slurm/main.tf)
resource "null_resource" "helm_release__soperator_fluxcd_ad_hoc_cm" {
  provisioner "local-exec" {
    command = "sleep ${var.sleep_seconds}"
  }
}

# module.slurm.helm_release.soperator_fluxcd_bootstrap (modules/slurm/main.tf)
resource "null_resource" "helm_release__soperator_fluxcd_bootstrap" {
  depends_on = [null_resource.helm_release__soperator_fluxcd_cm__update]
  provisioner "local-exec" {
    command = "sleep ${var.sleep_seconds}"
  }
}

resource "null_resource" "helm_release__soperator_fluxcd_bootstrap__update" {
  triggers = {
    operator_stable = tostring(local.i.operator_stable)
    operator_version = tostring(local.i.operator_version)
  }
  depends_on = [null_resource.helm_release__soperator_fluxcd_bootstrap]
}

# module.slurm.helm_release.soperator_fluxcd_cm (modules/slurm/main.tf)
resource "null_resource" "helm_release__soperator_fluxcd_cm" {
  depends_on = [null_resource.local_file__flux_release_rendered_nodesets]
  provisioner "local-exec" {
    command = "sleep ${var.sleep_seconds}"
  }
}

resource "null_resource" "helm_release__soperator_fluxcd_cm__update" {
  triggers = {
    accounting = tostring(local.i.accounting)
    nodesets = tostring(local.i.nodesets)
    operator_version = tostring(local.i.operator_version)
    partitions = tostring(local.i.partitions)
  }
  depends_on = [null_resource.helm_release__soperator_fluxcd_cm]
}

# module.slurm.local_file.flux_release_rendered_nodesets (modules/slurm/flux_release_nodesets.tf)
resource "null_resource" "local_file__flux_release_rendered_nodesets" {
  triggers = {
    cluster_identity = tostring(local.i.cluster_identity)
    nodesets = tostring(local.i.nodesets)
    operator_version = tostring(local.i.operator_version)
  }
  provisioner "local-exec" {
    command = "sleep ${var.sleep_seconds}"
  }
}

# module.slurm.terraform_data.wait_for_slurm_cluster_available (modules/slurm/main.tf)
resource "null_resource" "terraform_data__wait_for_slurm_cluster_available" {
  depends_on = [null_resource.terraform_data__wait_for_slurm_cluster_hr]
  provisioner "local-exec" {
    command = "sleep ${var.sleep_seconds}"
  }
}

# module.slurm.terraform_data.wait_for_slurm_cluster_hr (modules/slurm/main.tf)
resource "null_resource" "terraform_data__wait_for_slurm_cluster_hr" {
  depends_on = [null_resource.helm_release__soperator_fluxcd_bootstrap__update]
  provisioner "local-exec" {
    command = "sleep ${var.sleep_seconds}"
  }
}

# module.slurm.terraform_data.wait_for_soperator_activechecks_hr (modules/slurm/main.tf)
resource "null_resource" "terraform_data__wait_for_soperator_activechecks_hr" {
  depends_on = [null_resource.helm_release__soperator_fluxcd_bootstrap__update, null_resource.terraform_data__wait_for_slurm_cluster_hr]
  provisioner "local-exec" {
    command = "sleep ${var.sleep_seconds}"
  }
}
