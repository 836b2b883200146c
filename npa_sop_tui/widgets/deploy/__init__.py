"""Deploy widgets."""
