"""Status widgets."""
