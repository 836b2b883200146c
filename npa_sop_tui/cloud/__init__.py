"""Reads from the Nebius cloud: quotas, capacity, platforms, prices, mk8s, identity.

`client.connect(settings)` gives a `CloudClient`; the official SDK loads on its first call, so
importing this package is cheap. `preflight.py` checks a spec against the cloud before
Terraform runs; `destroy_check.py` proves a destroyed cluster is gone.
"""
