"""A stand-in for the `nebius/nebius` Terraform provider, in Python, over Terraform's plugin
protocol (go-plugin handshake with automatic mTLS, tfplugin5 over gRPC). It knows one
resource type, `nebius_compute_v1_filesystem`, so a recipe that declares a filesystem can be
planned, applied and destroyed by the real `terraform` without the real provider (which is not
published on any registry this project may download from)."""
