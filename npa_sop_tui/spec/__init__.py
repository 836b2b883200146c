"""The cluster spec: model, YAML with positions, validation rules, catalog."""
