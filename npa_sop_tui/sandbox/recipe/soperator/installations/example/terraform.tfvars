# Example values (upstream ships one; npa writes terraform.tfvars.json instead and never
# copies this file into an installation).
company_name           = ""
slurm_operator_version = "4.1.6"
k8s_version            = "1.34"
node_group_version     = "72"
active_checks_scope    = ""
