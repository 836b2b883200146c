"""Python SDK (filled in by the SDK work item)."""

__all__: list[str] = []
