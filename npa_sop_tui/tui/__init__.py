"""The Textual app and its widgets (the only place besides screens/ that imports Textual)."""
