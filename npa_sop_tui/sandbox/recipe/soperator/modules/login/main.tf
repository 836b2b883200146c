# Stand-in for the recipe's module.login_script: generated from its graph at layout 531a6061d735bac04cbf36f4ede317d59309e322
# (recipe/graphs/531a6061d735bac04cbf36f4ede317d59309e322.json). null_resources at the real addresses; see terraform/standin_addresses.py.

variable "inputs" { type = any }
variable "sleep_seconds" { type = number }
locals {
  i = var.inputs
}

# module.login_script.local_file.this (modules/login/main.tf)
resource "null_resource" "local_file__this" {
  triggers = {
    login_service = tostring(local.i.login_service)
  }
  depends_on = [null_resource.terraform_data__lb_service_ip]
  provisioner "local-exec" {
    command = "sleep ${var.sleep_seconds}"
  }
}

# module.login_script.terraform_data.lb_service_ip (modules/login/main.tf)
resource "null_resource" "terraform_data__lb_service_ip" {
  triggers = {
    login_service = tostring(local.i.login_service)
  }
  provisioner "local-exec" {
    command = "sleep ${var.sleep_seconds}"
  }
}

# module.login_script.terraform_data.wait_for_slurm_login_service (modules/login/main.tf)
resource "null_resource" "terraform_data__wait_for_slurm_login_service" {
  provisioner "local-exec" {
    command = "sleep ${var.sleep_seconds}"
  }
}
