"""plan / deploy / destroy / list: the only place that sequences lifecycle steps.

Front doors call `api.py` (`from npa_sop_tui.lifecycle import api as lifecycle`); this face
imports nothing, so loading one step never runs the others.

Every front door (CLI, TUI, SDK, fleet) calls these coroutines and consumes the same typed
events. Each operation takes the cluster's lock, writes a redacted NDJSON event log into the
inventory, and ends with exactly one `OperationFinished` — ok, failed or interrupted
(`operation.py`). Where it runs — the real cloud or the sandbox — is the `Environment` in
its `LifecycleOptions`.

Cancelling the task awaiting an operation interrupts Terraform gracefully (see
terraform/runner.py), records the operation as interrupted and re-raises `CancelledError`.
"""
