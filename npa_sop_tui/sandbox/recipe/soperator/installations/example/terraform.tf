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

# Upstream configures the nebius provider with this endpoint; an installation for a region
# outside `eu*` gets the global one instead (npa rewrites it there, as upstream's npa does).
locals {
  nebius_api_domain = "api.eu.nebius.cloud:443"
}
