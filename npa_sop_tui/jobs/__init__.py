"""Jobs submitted by npa: `npa soperator run` / `logs`, the SDK's `soperator.run`, the agent
tools and the app's run dialog all go through this package.

- `model`: what a job request and a job's state look like, and the exit code a run returns.
- `script`: the batch script npa submits (it records the job's own exit code beside its
  output, so no accounting is needed) and the sbatch options.
- `remote`: submit / follow / read / cancel through the login node over SSH.
- `follow`: the front doors' shared follow loop (output, state changes, interrupts).
- `records`: which jobs npa submitted to a cluster, and where their output is.
- `templates`: first jobs shipped as editable files (`gpu-hello`, `nccl-allreduce`, `cpu-hello`).
"""
