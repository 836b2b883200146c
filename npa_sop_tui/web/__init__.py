"""The app in a browser: `npa-sop serve` (textual-serve behind a token gate)."""
