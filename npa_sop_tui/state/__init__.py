"""Team state: where clusters' records, logs, locks and Terraform state live.

`stores.store_for(settings)` gives the store the settings select (`state.backend`: local or s3);
`default_store()` the one the environment and config file select, for readers that have no
`Environment` at hand. See store.py for the interface, location.py for the bucket layout.
"""
