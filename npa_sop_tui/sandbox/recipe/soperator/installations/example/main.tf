# Stand-in for soperator/installations/example/main.tf: the same module graph, made of
# null_resources. Sizes, presets and names follow the variables the way upstream does.

locals {
  # Sizing tier from the total declared worker count (modules/sizing_tier).
  worker_count = sum(concat([0], [for w in var.slurm_nodeset_workers : w.size]))
  sizing_tier = (
    local.worker_count < 10 ? "XS" :
    local.worker_count < 100 ? "S" :
    local.worker_count < 500 ? "M" :
    local.worker_count < 2000 ? "L" : "XL"
  )
  tier_presets = {
    system     = { XS = "16vcpu-64gb", S = "16vcpu-64gb", M = "16vcpu-64gb", L = "32vcpu-128gb", XL = "64vcpu-256gb" }
    controller = { XS = "16vcpu-64gb", S = "16vcpu-64gb", M = "16vcpu-64gb", L = "32vcpu-128gb", XL = "32vcpu-128gb" }
    accounting = { XS = "8vcpu-32gb", S = "8vcpu-32gb", M = "16vcpu-64gb", L = "32vcpu-128gb", XL = "32vcpu-128gb" }
  }
  system_preset     = coalesce(var.slurm_nodeset_system.resource.preset, local.tier_presets.system[local.sizing_tier])
  controller_preset = coalesce(var.slurm_nodeset_controller.resource.preset, local.tier_presets.controller[local.sizing_tier])
  accounting_preset = var.slurm_nodeset_accounting == null ? "" : coalesce(var.slurm_nodeset_accounting.resource.preset, local.tier_presets.accounting[local.sizing_tier])

  # Each worker nodeset becomes mk8s node groups of at most 100 nodes (modules/k8s).
  worker_chunks = flatten([
    for w in var.slurm_nodeset_workers : [
      for i in range(ceil(w.size / 100)) : {
        key       = "${w.name}-${i}"
        pool      = w.name
        size      = min(100, w.size - i * 100)
        platform  = w.resource.platform
        preset    = w.resource.preset
        fabric    = w.gpu_cluster == null ? "" : try(w.gpu_cluster.infiniband_fabric, "")
        boot_disk = w.boot_disk.size_gibibytes
        capacity  = w.reservation_policy != null ? "reserved" : (w.preemptible != null ? "preemptible" : "on-demand")
      }
    ]
  ])
  fabrics = distinct([for c in local.worker_chunks : c.fabric if c.fabric != ""])

  # The storage class is computed even when nfs_in_k8s is off (upstream-recipe §3.3 caveat).
  nfs_storage_class = replace(lower("compute-csi-${var.nfs_in_k8s.disk_type}-${var.nfs_in_k8s.filesystem_type}"), "_", "-")
}

module "k8s" {
  source = "../../modules/k8s"

  company_name       = var.company_name
  region             = var.region
  k8s_version        = var.k8s_version
  node_group_version = var.node_group_version
  subnet_id          = var.vpc_subnet_id
  system = {
    min_size = var.slurm_nodeset_system.min_size
    max_size = var.slurm_nodeset_system.max_size
    preset   = local.system_preset
  }
  controller_preset  = local.controller_preset
  login_size         = var.slurm_nodeset_login.size
  login_preset       = var.slurm_nodeset_login.resource.preset
  accounting_enabled = var.accounting_enabled
  accounting_preset  = local.accounting_preset
  worker_chunks      = local.worker_chunks
  fabrics            = local.fabrics
  per_node_resources = var.standin_per_node_resources
  sleep_seconds      = var.standin_sleep_seconds
}

module "slurm" {
  source = "../../modules/slurm"

  k8s_cluster_id      = module.k8s.cluster_id
  operator_version    = var.slurm_operator_version
  operator_stable     = var.slurm_operator_stable
  nodesets            = [for w in var.slurm_nodeset_workers : { name = w.name, size = w.size }]
  partitions          = [for p in var.slurm_nodesets_partitions : p.name]
  accounting_enabled  = var.accounting_enabled
  rest_enabled        = var.slurm_rest_enabled
  exporter_enabled    = var.slurm_exporter_enabled
  telemetry_enabled   = var.telemetry_enabled
  active_checks_scope = var.active_checks_scope
  apparmor_default    = var.use_default_apparmor_profile
  nfs_storage_class   = local.nfs_storage_class
  jail_size_gibibytes = try(var.filestore_jail.spec.size_gibibytes, 0)
  sleep_seconds       = var.standin_sleep_seconds

  # Releases need schedulable nodes, as upstream's Helm releases do.
  depends_on = [module.k8s]
}

module "login_script" {
  source = "../../modules/login"

  company_name  = var.company_name
  slurm_ready   = module.slurm.slurm_cluster_id
  public_ip     = var.slurm_login_public_ip
  root_key_hash = sha256(join("\n", var.slurm_login_ssh_root_public_keys))
  sleep_seconds = var.standin_sleep_seconds
}

# Upstream has no root outputs; the stand-in reports what npa reads elsewhere.
output "kube_context" {
  value = module.k8s.kube_context
}

output "cluster_id" {
  value = module.k8s.cluster_id
}

output "login_ip" {
  value = module.login_script.login_ip
}

output "sizing_tier" {
  value = local.sizing_tier
}
