"""slurm_versions.py: the release → `--json` option rule at the table's edges (the releases
Soperator and Debian ship are pinned in test_status_slurm_samples.py)."""

from __future__ import annotations

import pytest

from npa_sop_tui.status import slurm_versions
from npa_sop_tui.status.slurm_versions import json_option, major


@pytest.mark.parametrize(
    ("release", "expected"),
    [("25.11.3", "25.11"), (" 9.1.0\n", "09.01"), ("", None), (None, None), ("slurm", None)],
)
def test_major_is_the_zero_padded_year_and_month(release: str | None, expected: str) -> None:
    assert major(release) == expected


def test_the_newest_listed_release_without_the_preferred_format_gets_plain_json(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Only a release NEWER than every listed one is assumed to speak v0.0.44; a listed one
    that does not ship it (the newest included) gets its own plain `--json`."""
    table = {**slurm_versions.DATA_PARSERS, "27.05": ("v0.0.45", "v0.0.46")}
    monkeypatch.setattr(slurm_versions, "DATA_PARSERS", table)
    assert json_option("27.05.1") == "--json"
    assert json_option("27.11.0") == f"--json={slurm_versions.PREFERRED_DATA_PARSER}"
    assert json_option("25.05.2") == "--json"  # older, listed without it
