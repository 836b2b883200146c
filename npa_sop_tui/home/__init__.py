"""The npa home: everything npa keeps on the user's disk, and the one way it is written.

Owns: where things live (`paths`), the one file owner that creates private files without
following links (`files`, `fsutil`), reads that are bounded and refuse special files
(`bounded_read`), locks (`locks`), `config.yaml` and the settings resolved from flags, the
environment, the config and defaults with their provenance (`config`, `settings`, `capacity`,
`config_edit`, `file_edit`), the debug log (`debuglog`) and the cluster inventory
(`inventory`, `inventory_records`). It may import only the ground floor (`errors`, `events`,
`redact`, `safe_text`), the spec's YAML reader, and the team state stores the inventory reads
through; nothing of the lifecycle, the cloud, Terraform or any front door.
"""
