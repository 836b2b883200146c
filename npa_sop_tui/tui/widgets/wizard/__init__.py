"""Wizard widgets: the worker pool list and its editor."""
