"""Kept for old habits: `python bench/run.py [name ...]` is `python -m bench [name ...]`."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.__main__ import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
