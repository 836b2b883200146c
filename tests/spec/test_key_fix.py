"""Misspelt keys are renamed in the text only where the finding places them, and never into
a key the mapping already has."""

from __future__ import annotations

from npa_sop_tui.spec.findings import Finding
from npa_sop_tui.spec.key_fix import apply_renames, suggested_renames, unknown_key

TEXT = """\
name: demo  # the name
workerz:   # pools
  - name: cpu
    sise: 2
"""


def _unknown(path: str, key: str, hint: str | None, line: int, column: int) -> Finding:
    return Finding("error", path, f"unknown field {key!r}", hint, "c.yaml", line, column)


def test_a_suggested_rename_changes_only_the_key() -> None:
    findings = [
        _unknown("workerz", "workerz", "did you mean 'workers'?", 2, 1),
        _unknown("workers[0].sise", "sise", "did you mean 'size'?", 4, 5),
        _unknown("zzz", "zzz", "allowed fields: name", 9, 1),  # no suggestion: left
        Finding("error", "name", "must be a string"),
    ]
    renames = suggested_renames(findings)
    assert [(r.old, r.new) for r in renames] == [("workerz", "workers"), ("sise", "size")]
    text, done = apply_renames(TEXT, renames)
    assert text == TEXT.replace("workerz:", "workers:").replace("sise:", "size:")
    assert done == renames
    assert unknown_key(findings[0]) == "workerz" and unknown_key(findings[3]) is None


def test_a_rename_is_skipped_where_the_text_differs_or_the_key_exists() -> None:
    both = "workers: []\nworkerz: []\n"
    moved = [_unknown("workerz", "workerz", "did you mean 'workers'?", 2, 1)]
    assert apply_renames(both, suggested_renames(moved)) == (both, [])
    elsewhere = [_unknown("workerz", "workerz", "did you mean 'workers'?", 1, 1)]
    assert apply_renames(TEXT, suggested_renames(elsewhere)) == (TEXT, [])
    past_end = [_unknown("workerz", "workerz", "did you mean 'workers'?", 40, 1)]
    assert apply_renames(TEXT, suggested_renames(past_end)) == (TEXT, [])
