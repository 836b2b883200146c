# Stand-in for soperator/installations/example/main.tf at 01e8c67a6182305bf2751a931fc5ee2f642f51a1: the same module graph,
# made of null_resources. Generated from that commit's contract by npa-sop-tui.

locals {
  gb300_platform = "gpu-gb300"
  gb300_enabled  = anytrue([for w in var.slurm_nodeset_workers : w.resource.platform == local.gb300_platform])

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
  system_preset     = coalesce(try(var.slurm_nodeset_system.resource.preset, null), local.tier_presets.system[local.sizing_tier])
  controller_preset = coalesce(try(var.slurm_nodeset_controller.resource.preset, null), local.tier_presets.controller[local.sizing_tier])
  accounting_preset = var.slurm_nodeset_accounting == null ? "" : coalesce(try(var.slurm_nodeset_accounting.resource.preset, null), local.tier_presets.accounting[local.sizing_tier])

  # Workers become Slurm nodesets: GB300 in racks of 18 named <name>-rack<N>, others keep
  # their name (main.tf). Node groups: one per rack, or chunks of at most 100 nodes.
  nodesets = flatten([
    for w in var.slurm_nodeset_workers : w.resource.platform == local.gb300_platform ? [
      for rack in range(max(1, ceil(w.size / 18))) : {
        name = "${w.name}-rack${rack}", pool = w.name, size = min(18, w.size - rack * 18), per_group = 18, worker = w
      }
    ] : [{ name = w.name, pool = w.name, size = w.size, per_group = 100, worker = w }]
  ])
  worker_chunks = flatten([
    for n in local.nodesets : [
      for i in range(max(1, ceil(n.size / n.per_group))) : {
        key       = n.per_group == 18 ? n.name : "${n.name}-${i}"
        pool      = n.pool
        size      = min(n.per_group, n.size - i * n.per_group)
        platform  = n.worker.resource.platform
        preset    = n.worker.resource.preset
        fabric    = try(n.worker.gpu_cluster.infiniband_fabric, null) == null ? "" : n.worker.gpu_cluster.infiniband_fabric
        boot_disk = try(n.worker.boot_disk.size_gibibytes, 128)
        capacity  = try(n.worker.reservation_policy, null) != null ? "reserved" : (try(n.worker.preemptible, null) != null ? "preemptible" : "on-demand")
      }
    ]
  ])
  fabrics = distinct([for c in local.worker_chunks : c.fabric if c.fabric != ""])

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
  login_enabled      = !(local.gb300_enabled)
  login_size         = var.slurm_nodeset_login.size
  login_preset       = try(var.slurm_nodeset_login.resource.preset, "16vcpu-64gb")
  accounting_enabled = var.accounting_enabled
  accounting_preset  = local.accounting_preset
  worker_chunks      = local.worker_chunks
  fabrics            = local.fabrics
  per_node_resources = var.standin_per_node_resources
  sleep_seconds      = var.standin_sleep_seconds

  # What the real main.tf reads without a null guard, read the same way: a null there fails
  # the plan as it would upstream.
  reads = {
    read_0 = (var.accounting_enabled) ? tostring(length(keys(var.filestore_accounting))) : ""
    read_1 = length(keys(var.nfs))
    read_2 = length(keys(var.nfs_in_k8s))
    read_3 = lower(var.nfs_in_k8s.disk_type)
    read_4 = lower(var.nfs_in_k8s.filesystem_type)
  }
}

module "slurm" {
  source = "../../modules/slurm"

  k8s_cluster_id      = module.k8s.cluster_id
  operator_version    = var.slurm_operator_version
  operator_stable     = var.slurm_operator_stable
  nodesets            = [for n in local.nodesets : { name = n.name, size = n.size }]
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

# No outputs: the real root module has none (soperator/installations/example at 9a187732).
# npa reads the login address from the soperator-login-svc Service, the kube context from the
# naming rule (nebius-<company_name>-slurm).
