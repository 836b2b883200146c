"""Terraform itself: the binary, the supervised -json runner, plan and state reading."""
