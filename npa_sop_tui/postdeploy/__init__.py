"""After Terraform applied a cluster: repairs, then the GPU creation gate.

`run.run_post_deploy()` runs the repairs (unless `apply_fixes` is off) and the GPU gate (always,
when the spec has a GPU pool), reporting each step through the callbacks as it happens, and
returns the existing npa's result fields (`postdeploy.model.PostDeployResult`).
"""
