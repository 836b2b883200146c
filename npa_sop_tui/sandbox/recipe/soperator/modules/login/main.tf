# Stand-in for modules/login: wait for the login LoadBalancer IP and write login.sh.

variable "company_name" { type = string }
variable "slurm_ready" { type = string }
variable "public_ip" { type = bool }
variable "root_key_hash" { type = string }
variable "sleep_seconds" { type = number }

resource "null_resource" "static_ip" {
  triggers = {
    name = "soperator-${var.company_name}-${var.public_ip ? "public" : "private"}-static-ip"
  }
}

resource "null_resource" "lb_service_ip" {
  triggers = {
    ready = var.slurm_ready
    ip    = null_resource.static_ip.id
  }
  provisioner "local-exec" {
    command = "sleep ${var.sleep_seconds}"
  }
}

resource "null_resource" "login_script" {
  triggers = {
    ip   = null_resource.lb_service_ip.id
    keys = var.root_key_hash
  }
}

output "ip" {
  # Upstream's login module output (not exported by the root module). A documentation-range
  # placeholder derived from the resource ID (no real network).
  value = "192.0.2.${parseint(substr(null_resource.static_ip.id, -2, 2), 10) % 250 + 1}"
}
