# Example values (npa writes terraform.tfvars.json instead).
slurm_operator_version = "4.1.6"
