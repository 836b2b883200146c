# Input variables of the stand-in, with the 4.1.6 shapes of installations/example.
#
# Upstream declares some objects with optional() attributes. Terraform 1.0 has no optional()
# without an experiment (which newer versions reject), so values whose shape varies between
# callers are typed `any` here and checked attribute by attribute in validation rules instead.
# Objects that npa always writes in full keep plain object types, so a missing attribute is
# still an error exactly as upstream.

# ---------------------------------------------------------------------------------------------
# Identity / IAM / cloud (TF_VAR_* from the environment)

variable "region" {
  type = string

  validation {
    condition     = contains(["eu-north1", "eu-north2", "eu-west1", "eu-west2", "me-west1", "uk-south1", "us-central1", "us-north1"], var.region)
    error_message = "Unknown region. Use one of eu-north1, eu-north2, eu-west1, eu-west2, me-west1, uk-south1, us-central1, us-north1."
  }
}

variable "iam_tenant_id" {
  type = string

  validation {
    condition     = substr(var.iam_tenant_id, 0, 7) == "tenant-"
    error_message = "The iam_tenant_id must start with 'tenant-'."
  }
}

variable "iam_project_id" {
  type = string

  validation {
    condition     = substr(var.iam_project_id, 0, 8) == "project-"
    error_message = "The iam_project_id must start with 'project-'."
  }
}

variable "o11y_iam_tenant_id" {
  type = string

  validation {
    condition     = substr(var.o11y_iam_tenant_id, 0, 7) == "tenant-"
    error_message = "The o11y_iam_tenant_id must start with 'tenant-'."
  }
}

variable "o11y_profile" {
  type = string
}

variable "vpc_subnet_id" {
  type = string

  validation {
    condition     = substr(var.vpc_subnet_id, 0, 10) == "vpcsubnet-"
    error_message = "The vpc_subnet_id must start with 'vpcsubnet-'."
  }
}

variable "production" {
  type    = bool
  default = true
}

variable "iam_merge_request_url" {
  type    = string
  default = ""
}

variable "company_name" {
  type = string

  validation {
    condition     = length(var.company_name) >= 1 && length(var.company_name) <= 32 && can(regex("^[a-z][a-z\\d-]*[a-z\\d]+$", var.company_name))
    error_message = "The company_name must be 2-32 characters: a lowercase letter first, then lowercase letters, digits or dashes, ending with a letter or digit."
  }
}

variable "slurm_login_public_ip" {
  type    = bool
  default = true
}

# ---------------------------------------------------------------------------------------------
# Storage

variable "controller_state_on_filestore" {
  type    = bool
  default = false
}

variable "filestore_controller_spool" {
  type = any

  validation {
    condition     = (try(var.filestore_controller_spool.existing, null) == null) != (try(var.filestore_controller_spool.spec, null) == null)
    error_message = "The filestore_controller_spool must set exactly one of existing or spec."
  }
}

variable "filestore_jail" {
  type = any

  validation {
    condition     = (try(var.filestore_jail.existing, null) == null) != (try(var.filestore_jail.spec, null) == null)
    error_message = "The filestore_jail must set exactly one of existing or spec."
  }

  validation {
    condition     = try(var.filestore_jail.spec, null) == null || try(var.filestore_jail.spec.size_gibibytes > 0, false)
    error_message = "The filestore_jail.spec.size_gibibytes must be a positive number."
  }
}

variable "allow_empty_jail_submounts" {
  type    = bool
  default = false
}

variable "filestore_jail_submounts" {
  type    = any
  default = []

  validation {
    condition     = alltrue([for m in var.filestore_jail_submounts : m.mount_path != "/home" && ((try(m.existing, null) == null) != (try(m.spec, null) == null))])
    error_message = "Each jail submount needs exactly one of existing or spec, and /home cannot be a submount."
  }
}

variable "filestore_accounting" {
  type    = any
  default = null

  validation {
    condition     = var.filestore_accounting == null || ((try(var.filestore_accounting.existing, null) == null) != (try(var.filestore_accounting.spec, null) == null))
    error_message = "The filestore_accounting must set exactly one of existing or spec."
  }
}

# ---------------------------------------------------------------------------------------------
# NFS (4.1.6: flat objects; the node group is slurm_nodeset_nfs)

variable "nfs" {
  type = object({
    enabled        = bool
    size_gibibytes = number
    mount_path     = string
    resource = object({
      platform = string
      preset   = string
    })
    public_ip = bool
  })

  validation {
    condition     = !var.nfs.enabled || (var.nfs.size_gibibytes % 93 == 0 && var.nfs.size_gibibytes <= 262074)
    error_message = "The nfs.size_gibibytes must be a multiple of 93 and at most 262074."
  }
}

variable "nfs_in_k8s" {
  type = object({
    enabled         = bool
    version         = string
    use_stable_repo = bool
    size_gibibytes  = number
    disk_type       = string
    filesystem_type = string
    threads         = number
  })

  validation {
    condition     = contains(["NETWORK_SSD", "NETWORK_SSD_NON_REPLICATED", "NETWORK_SSD_IO_M3"], var.nfs_in_k8s.disk_type) && contains(["ext4", "xfs"], var.nfs_in_k8s.filesystem_type)
    error_message = "The nfs_in_k8s.disk_type must be a network SSD type and filesystem_type ext4 or xfs."
  }
}

variable "slurm_nodeset_nfs" {
  type    = any
  default = null

  validation {
    condition     = var.slurm_nodeset_nfs == null || try(var.slurm_nodeset_nfs.size == 1, false)
    error_message = "The slurm_nodeset_nfs.size must be 1."
  }
}

# ---------------------------------------------------------------------------------------------
# Kubernetes and images

variable "k8s_version" {
  type    = string
  default = null

  validation {
    condition     = var.k8s_version == null || can(regex("^\\d+\\.\\d+$", var.k8s_version))
    error_message = "The k8s_version must be MAJOR.MINOR, for example \"1.34\"."
  }
}

variable "node_group_version" {
  type = string

  validation {
    condition     = length(var.node_group_version) > 0
    error_message = "The node_group_version must not be empty."
  }
}

variable "use_preinstalled_gpu_drivers" {
  type    = bool
  default = false
}

variable "nvidia_config_lines" {
  type    = list(string)
  default = []
}

variable "k8s_cluster_node_ssh_access_users" {
  type = list(object({
    name        = string
    public_keys = list(string)
  }))
  default = []

  validation {
    condition     = alltrue([for u in var.k8s_cluster_node_ssh_access_users : length(u.public_keys) > 0 && alltrue([for k in u.public_keys : length(k) > 0])])
    error_message = "Each node SSH user needs at least one non-empty public key."
  }
}

# ---------------------------------------------------------------------------------------------
# Slurm and partitions

variable "slurm_operator_version" {
  type = string

  validation {
    condition     = can(regex("^\\d+\\.\\d+\\.\\d+", var.slurm_operator_version))
    error_message = "The slurm_operator_version must be a chart version such as 4.1.6."
  }
}

variable "slurm_operator_stable" {
  type    = bool
  default = true
}

variable "slurm_nodesets_partitions" {
  type = list(object({
    name               = string
    is_all             = bool
    slurm_nodeset_refs = list(string)
    topology           = string
    config             = string
  }))
  default = []

  validation {
    condition     = alltrue([for p in var.slurm_nodesets_partitions : p.is_all != (length(p.slurm_nodeset_refs) > 0)])
    error_message = "Each partition must set either is_all or a non-empty slurm_nodeset_refs, not both."
  }

  validation {
    condition     = alltrue([for p in var.slurm_nodesets_partitions : contains(["flat", "tree-ib", "block-nvl72"], p.topology)])
    error_message = "Each partition topology must be one of flat, tree-ib, block-nvl72."
  }
}

variable "slurm_partition_config_type" {
  type    = string
  default = "default"

  validation {
    condition     = contains(["default", "custom"], var.slurm_partition_config_type)
    error_message = "The slurm_partition_config_type must be default or custom."
  }
}

variable "slurm_shared_memory_size_gibibytes" {
  type    = number
  default = 64
}

variable "use_default_apparmor_profile" {
  type    = bool
  default = true
}

variable "slurm_login_ssh_root_public_keys" {
  type = list(string)

  validation {
    condition     = length(var.slurm_login_ssh_root_public_keys) > 0 && alltrue([for k in var.slurm_login_ssh_root_public_keys : length(trimspace(k)) > 0])
    error_message = "At least one non-empty root login SSH public key is required."
  }
}

# ---------------------------------------------------------------------------------------------
# Nodesets

variable "slurm_nodeset_system" {
  type = object({
    min_size = number
    max_size = number
    resource = object({
      platform = string
      preset   = string
    })
    boot_disk = object({
      type                 = string
      size_gibibytes       = number
      block_size_kibibytes = number
    })
  })

  validation {
    condition     = var.slurm_nodeset_system.min_size >= 3 && var.slurm_nodeset_system.max_size >= var.slurm_nodeset_system.min_size
    error_message = "The system nodeset needs min_size >= 3 and max_size >= min_size."
  }

  validation {
    condition     = var.slurm_nodeset_system.boot_disk.size_gibibytes >= 128
    error_message = "The system nodeset boot disk must be at least 128 GiB."
  }
}

variable "slurm_nodeset_controller" {
  type = object({
    size = number
    resource = object({
      platform = string
      preset   = string
    })
    boot_disk = object({
      type                 = string
      size_gibibytes       = number
      block_size_kibibytes = number
    })
  })

  validation {
    condition     = var.slurm_nodeset_controller.size == 1
    error_message = "The controller nodeset size must be exactly 1."
  }

  validation {
    condition     = var.slurm_nodeset_controller.boot_disk.size_gibibytes >= 128
    error_message = "The controller nodeset boot disk must be at least 128 GiB."
  }
}

variable "slurm_nodeset_login" {
  type = object({
    size = number
    resource = object({
      platform = string
      preset   = string
    })
    boot_disk = object({
      type                 = string
      size_gibibytes       = number
      block_size_kibibytes = number
    })
  })

  validation {
    condition     = var.slurm_nodeset_login.size >= 1 && var.slurm_nodeset_login.boot_disk.size_gibibytes >= 256
    error_message = "The login nodeset needs size >= 1 and a boot disk of at least 256 GiB."
  }
}

variable "slurm_nodeset_accounting" {
  type = object({
    resource = object({
      platform = string
      preset   = string
    })
    boot_disk = object({
      type                 = string
      size_gibibytes       = number
      block_size_kibibytes = number
    })
  })
  default = null

  validation {
    condition     = var.slurm_nodeset_accounting == null || try(var.slurm_nodeset_accounting.boot_disk.size_gibibytes >= 128, false)
    error_message = "The accounting nodeset boot disk must be at least 128 GiB."
  }
}

variable "slurm_nodeset_workers" {
  description = "One element per worker pool (4.1.6 element shape; see the README)."
  type        = any
  default     = []

  validation {
    condition     = alltrue([for w in var.slurm_nodeset_workers : can(regex("^[a-z0-9][a-z0-9-]*$", w.name))])
    error_message = "Each worker nodeset name must be lowercase letters, digits and dashes."
  }

  validation {
    condition     = length(distinct([for w in var.slurm_nodeset_workers : w.name])) == length(var.slurm_nodeset_workers)
    error_message = "Worker nodeset names must be unique."
  }

  validation {
    condition     = alltrue([for w in var.slurm_nodeset_workers : floor(w.size) == w.size && w.size >= 0])
    error_message = "Each worker nodeset size must be a whole number >= 0."
  }

  validation {
    condition     = alltrue([for w in var.slurm_nodeset_workers : length(w.resource.platform) > 0 && length(w.resource.preset) > 0])
    error_message = "Each worker nodeset needs resource.platform and resource.preset."
  }

  validation {
    condition     = alltrue([for w in var.slurm_nodeset_workers : w.boot_disk.size_gibibytes >= 128])
    error_message = "Each worker nodeset boot disk must be at least 128 GiB."
  }

  validation {
    condition     = alltrue([for w in var.slurm_nodeset_workers : w.gpu_cluster == null || length(trimspace(try(w.gpu_cluster.infiniband_fabric, ""))) + length(trimspace(try(w.gpu_cluster.id, ""))) > 0])
    error_message = "A worker gpu_cluster needs either a non-blank id or infiniband_fabric."
  }

  validation {
    condition     = alltrue([for w in var.slurm_nodeset_workers : !w.node_local_image_disk.enabled || try(contains(["NETWORK_SSD_NON_REPLICATED", "NETWORK_SSD_IO_M3"], w.node_local_image_disk.spec.disk_type) && contains(["ext4", "xfs"], w.node_local_image_disk.spec.filesystem_type), false)])
    error_message = "An enabled node_local_image_disk needs a spec with disk_type NETWORK_SSD_NON_REPLICATED or NETWORK_SSD_IO_M3 and filesystem_type ext4 or xfs."
  }

  validation {
    condition     = alltrue([for w in var.slurm_nodeset_workers : try(w.preemptible == null, true) || try(w.reservation_policy == null, true)])
    error_message = "Preemptible worker nodesets cannot use a reservation policy."
  }

  validation {
    condition     = alltrue([for w in var.slurm_nodeset_workers : can(w.node_local_jail_submounts) && can(w.autoscaling.enabled)])
    error_message = "Each worker nodeset needs node_local_jail_submounts and autoscaling.enabled (4.1.6 shape)."
  }
}

# ---------------------------------------------------------------------------------------------
# Accounting, REST, telemetry, active checks

variable "accounting_enabled" {
  type    = bool
  default = false
}

variable "slurm_rest_enabled" {
  type    = bool
  default = true
}

variable "slurm_exporter_enabled" {
  type    = bool
  default = true
}

variable "telemetry_enabled" {
  type    = bool
  default = true
}

variable "public_o11y_enabled" {
  type    = bool
  default = true
}

variable "active_checks_scope" {
  type    = string
  default = "prod_quick"

  validation {
    condition     = contains(["dev", "testing", "prod_quick", "prod_acceptance", "essential"], var.active_checks_scope)
    error_message = "The active_checks_scope must be one of dev, testing, prod_quick, prod_acceptance, essential."
  }
}

variable "soperator_notifier" {
  type    = any
  default = { enabled = false }

  validation {
    condition     = !try(var.soperator_notifier.enabled, false) || length(try(var.soperator_notifier.slack_webhook_url, "")) > 0
    error_message = "An enabled soperator_notifier needs a slack_webhook_url."
  }
}

variable "nccl_inspector_profiling" {
  type    = any
  default = { enabled = false }
}

# ---------------------------------------------------------------------------------------------
# Backups

variable "backups_enabled" {
  type    = string
  default = "auto"

  validation {
    condition     = contains(["auto", "force_enable", "force_disable"], var.backups_enabled)
    error_message = "The backups_enabled must be one of auto, force_enable, force_disable."
  }
}

variable "backups_password" {
  type      = string
  sensitive = true
}

variable "backups_schedule" {
  type = string
}

variable "backups_prune_schedule" {
  type = string
}

variable "backups_retention" {
  type = map(any)
}

variable "cleanup_bucket_on_destroy" {
  type = bool
}

# ---------------------------------------------------------------------------------------------
# Stand-in only

variable "standin_sleep_seconds" {
  description = "How long each stand-in resource takes to create (seconds)."
  type        = number
  default     = 1
}

variable "standin_per_node_resources" {
  description = "Also create one resource per worker node (benchmarks)."
  type        = bool
  default     = false
}
