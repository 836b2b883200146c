terraform {
  # Upstream requires >= 1.12 and the nebius/helm/flux providers; the stand-in needs only
  # the null provider and runs on the PyPI Terraform 1.0.3 as well.
  required_version = ">= 1.0.0"

  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "2.1.2"
    }
  }
}
