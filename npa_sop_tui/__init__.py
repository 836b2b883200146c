"""npa-sop-tui: stand up and watch Slurm clusters on Kubernetes (Nebius Soperator)."""

__version__ = "0.1.0"
