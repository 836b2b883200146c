"""Live status: Kubernetes + Slurm collectors, the ClusterStatus model, verdict and watcher.

See docs/status.md. Heavy clients (kubernetes, asyncssh) are imported inside functions.
"""
