"""The Terraform recipe: where it comes from, and the variables rendered for it."""
