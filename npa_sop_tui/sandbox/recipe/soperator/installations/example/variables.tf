# Variables of 01e8c67a6182305bf2751a931fc5ee2f642f51a1 (generated from its contract).

variable "accounting_enabled" {
  type = bool
  default = false
}

variable "active_checks_scope" {
  type = string
  default = "prod_quick"
  validation {
    condition     = var.active_checks_scope == null ? true : contains(["dev", "testing", "prod_quick", "prod_acceptance", "essential"], var.active_checks_scope)
    error_message = "The active_checks_scope is not allowed. Use one of: dev, testing, prod_quick, prod_acceptance, essential."
  }
}

variable "allow_empty_jail_submounts" {
  type = bool
  default = false
}

variable "allow_o11y_region_migration" {
  type = bool
  default = false
}

variable "backups_enabled" {
  type = string
  default = "auto"
  validation {
    condition     = var.backups_enabled == null ? true : contains(["auto", "force_enable", "force_disable"], var.backups_enabled)
    error_message = "The backups_enabled is not allowed. Use one of: auto, force_enable, force_disable."
  }
}

variable "backups_password" {
  type = string
}

variable "backups_prune_schedule" {
  type = string
}

variable "backups_retention" {
  type = any
}

variable "backups_schedule" {
  type = string
}

variable "checkpoint_storage_bucket" {
  type = any
  default = {
    "spec" = {}
  }
}

variable "checkpoint_storage_enabled" {
  type = bool
  default = false
}

variable "checkpoint_storage_env_file_mode" {
  type = string
  default = "600"
}

variable "checkpoint_storage_env_file_owner" {
  type = string
  default = "0:0"
}

variable "cleanup_bucket_on_destroy" {
  type = bool
}

variable "company_name" {
  type = string
}

variable "component_overrides" {
  type = any
  default = {}
}

variable "controller_state_on_filestore" {
  type = bool
  default = false
}

variable "dcgm_exporter_enabled" {
  type = bool
  default = true
}

variable "enroot_direct_squashfs_enabled" {
  type = bool
  default = true
}

variable "filestore_accounting" {
  type = any
  default = null
}

variable "filestore_controller_spool" {
  type = any
}

variable "filestore_jail" {
  type = any
}

variable "filestore_jail_submounts" {
  type = any
  default = []
}

variable "gb300_login_pod_worker_reserve" {
  type = any
  default = {
    "cpu_cores" = 8
    "ephemeral_storage_gibibytes" = 128
    "memory_gibibytes" = 32
  }
}

variable "iam_merge_request_url" {
  type = string
  default = ""
}

variable "iam_project_id" {
  type = string
  validation {
    condition     = substr(var.iam_project_id, 0, 8) == "project-"
    error_message = "The iam_project_id must start with project-."
  }
}

variable "iam_tenant_id" {
  type = string
  validation {
    condition     = substr(var.iam_tenant_id, 0, 7) == "tenant-"
    error_message = "The iam_tenant_id must start with tenant-."
  }
}

variable "k8s_cluster_node_ssh_access_public_ip" {
  type = bool
  default = false
}

variable "k8s_cluster_node_ssh_access_users" {
  type = any
  default = []
}

variable "k8s_version" {
  type = string
  default = null
}

variable "kube_state_metrics_max_scrape_size" {
  type = number
  default = null
}

variable "maintenance" {
  type = string
  default = "none"
  validation {
    condition     = var.maintenance == null ? true : contains(["downscaleAndDeletePopulateJail", "downscaleAndOverwritePopulateJail", "downscale", "none", "skipPopulateJail"], var.maintenance)
    error_message = "The maintenance is not allowed. Use one of: downscaleAndDeletePopulateJail, downscaleAndOverwritePopulateJail, downscale, none, skipPopulateJail."
  }
}

variable "maintenance_ignore_node_groups" {
  type = list(string)
  default = [
    "controller",
    "nfs",
  ]
}

variable "nccl_inspector_profiling" {
  type = any
  default = {
    "enabled" = false
  }
}

variable "nfs" {
  type = any
  default = {
    "enabled" = false
    "public_ip" = false
    "resource" = {
      "platform" = "cpu-d3"
      "preset" = "32vcpu-128gb"
    }
    "size_gibibytes" = 93
  }
}

variable "nfs_in_k8s" {
  type = any
  default = {
    "enabled" = false
  }
}

variable "node_group_version" {
  type = string
}

variable "nvidia_config_lines" {
  type = list(string)
  default = []
}

variable "o11y_iam_tenant_id" {
  type = string
  validation {
    condition     = substr(var.o11y_iam_tenant_id, 0, 7) == "tenant-"
    error_message = "The o11y_iam_tenant_id must start with tenant-."
  }
}

variable "o11y_profile" {
  type = string
}

variable "opentelemetry_batch" {
  type = any
  default = null
}

variable "opentelemetry_delete_jail_logs_after_read" {
  type = bool
  default = true
}

variable "opentelemetry_delete_jail_logs_min_age" {
  type = string
  default = "4h"
}

variable "opentelemetry_sending_queue" {
  type = any
  default = null
}

variable "platform_cuda_versions" {
  type = any
  default = {
    "cpu-d3" = "12.9.0"
    "cpu-e1" = "12.9.0"
    "cpu-e2" = "12.9.0"
    "gpu-b200-sxm" = "13.0.2"
    "gpu-b200-sxm-a" = "13.0.2"
    "gpu-b300-sxm" = "13.0.2"
    "gpu-gb300" = "13.0.2"
    "gpu-h100-sxm" = "13.0.2"
    "gpu-h200-sxm" = "13.0.2"
    "gpu-l40s-a" = "13.0.2"
    "gpu-l40s-d" = "13.0.2"
    "gpu-rtx6000" = "13.0.2"
  }
}

variable "platform_driver_presets" {
  type = any
  default = {
    "cpu-d3" = null
    "cpu-e1" = null
    "cpu-e2" = null
    "gpu-b200-sxm" = "cuda13.0"
    "gpu-b200-sxm-a" = "cuda13.0"
    "gpu-b300-sxm" = "cuda13.0"
    "gpu-gb300" = "cuda13.0"
    "gpu-h100-sxm" = "cuda13.0"
    "gpu-h200-sxm" = "cuda13.0"
    "gpu-l40s-a" = "cuda13.0"
    "gpu-l40s-d" = "cuda13.0"
    "gpu-rtx6000" = "cuda13.0"
  }
}

variable "production" {
  type = bool
  default = true
}

variable "public_o11y_enabled" {
  type = bool
  default = true
}

variable "region" {
  type = string
  validation {
    condition     = var.region == null ? true : contains(["eu-north1", "eu-north2", "eu-west1", "eu-west2", "me-west1", "uk-south1", "us-central1", "us-north1"], var.region)
    error_message = "Unknown region. Use one of: eu-north1, eu-north2, eu-west1, eu-west2, me-west1, uk-south1, us-central1, us-north1."
  }
}

variable "sizing_tier_override" {
  type = string
  default = null
}

variable "slurm_accounting_config" {
  type = any
  default = {}
}

variable "slurm_exporter_enabled" {
  type = bool
  default = true
}

variable "slurm_exporter_max_collector_inflight" {
  type = number
  default = 1
}

variable "slurm_health_check_config" {
  type = any
  default = null
}

variable "slurm_login_public_ip" {
  type = bool
  default = true
}

variable "slurm_login_ssh_root_public_keys" {
  type = list(string)
}

variable "slurm_login_sshd_config_map_ref_name" {
  type = string
  default = ""
}

variable "slurm_nodeset_accounting" {
  type = any
  default = {
    "boot_disk" = {
      "block_size_kibibytes" = 4
      "size_gibibytes" = 128
      "type" = "NETWORK_SSD"
    }
    "resource" = {
      "platform" = "cpu-d3"
    }
  }
}

variable "slurm_nodeset_controller" {
  type = any
  default = {
    "boot_disk" = {
      "block_size_kibibytes" = 4
      "size_gibibytes" = 128
      "type" = "NETWORK_SSD"
    }
    "resource" = {
      "platform" = "cpu-d3"
    }
    "size" = 1
  }
}

variable "slurm_nodeset_login" {
  type = any
  default = {
    "boot_disk" = {
      "block_size_kibibytes" = 4
      "size_gibibytes" = 256
      "type" = "NETWORK_SSD"
    }
    "resource" = {
      "platform" = "cpu-d3"
      "preset" = "16vcpu-64gb"
    }
    "size" = 1
  }
}

variable "slurm_nodeset_nfs" {
  type = any
  default = null
}

variable "slurm_nodeset_system" {
  type = any
  default = {
    "boot_disk" = {
      "block_size_kibibytes" = 4
      "size_gibibytes" = 128
      "type" = "NETWORK_SSD"
    }
    "max_size" = 9
    "min_size" = 3
    "resource" = {
      "platform" = "cpu-d3"
    }
  }
}

variable "slurm_nodeset_workers" {
  type = any
  default = [
    {
      "boot_disk" = {
        "block_size_kibibytes" = 4
        "size_gibibytes" = 128
        "type" = "NETWORK_SSD"
      }
      "name" = "worker"
      "node_local_image_disk" = {
        "enabled" = false
      }
      "node_local_jail_submounts" = []
      "resource" = {
        "platform" = "cpu-d3"
        "preset" = "16vcpu-64gb"
      }
      "size" = 1
    },
  ]
}

variable "slurm_nodesets_partitions" {
  type = any
  default = []
}

variable "slurm_operator_stable" {
  type = bool
  default = true
}

variable "slurm_operator_version" {
  type = string
}

variable "slurm_partition_config_type" {
  type = string
  default = "default"
}

variable "slurm_partition_raw_config" {
  type = list(string)
  default = []
}

variable "slurm_rest_enabled" {
  type = bool
  default = true
}

variable "slurm_shared_memory_size_gibibytes" {
  type = number
  default = 64
}

variable "slurm_sssd_conf_secret_ref_name" {
  type = string
  default = ""
}

variable "slurm_sssd_enabled" {
  type = bool
  default = false
}

variable "slurm_sssd_ldap_ca_config_map_ref_name" {
  type = string
  default = ""
}

variable "slurm_topology_block_size" {
  type = number
  default = 18
}

variable "slurm_worker_sshd_config_map_ref_name" {
  type = string
  default = ""
}

variable "slurmdbd_config" {
  type = any
  default = {}
}

variable "soperator_notifier" {
  type = any
  default = {
    "enabled" = false
  }
}

variable "tailscale_enabled" {
  type = bool
  default = false
}

variable "telemetry_enabled" {
  type = bool
  default = true
}

variable "use_default_apparmor_profile" {
  type = bool
  default = true
}

variable "use_preinstalled_gpu_drivers" {
  type = bool
  default = false
}

variable "vpc_subnet_id" {
  type = string
  validation {
    condition     = substr(var.vpc_subnet_id, 0, 10) == "vpcsubnet-"
    error_message = "The vpc_subnet_id must start with vpcsubnet-."
  }
}

variable "standin_sleep_seconds" {
  type    = number
  default = 1
}

variable "standin_per_node_resources" {
  type    = bool
  default = false
}
