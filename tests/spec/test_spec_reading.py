"""spec/reading.py: model errors into findings, and the rule findings kept beside them."""

from __future__ import annotations

import pytest

from npa_sop_tui.spec.model import SpecError, parse_spec_text
from npa_sop_tui.spec.reading import loc_path

SPEC = """\
apiVersion: npa.soperator/v0.0.1
name: demo
region: eu-north1
control_plane:
  system: {system}
workers:
  - name: cpu
    size: 1
"""


def _messages(system: str) -> list[tuple[str, str]]:
    with pytest.raises(SpecError) as caught:
        parse_spec_text(SPEC.format(system=system), source="c.yaml")
    return [(f.path, f.message) for f in caught.value.findings if f.level == "error"]


@pytest.mark.parametrize(
    ("loc", "path"),
    [((), ""), (("name",), "name"), (("workers", 0, "size"), "workers[0].size")],
)
def test_loc_path_joins_a_location_and_an_empty_one_is_the_root(
    loc: tuple[str | int, ...], path: str
) -> None:
    """Protects the empty start value: a model-level error has an empty location, and
    without a start value joining it raised TypeError instead of naming the root."""
    assert loc_path(loc) == path


def test_a_misspelt_key_alone_stands_for_the_key_it_resembles() -> None:
    """`min_siz:` is taken as a misspelt `min_size:`: one finding, not also a rule about
    the default that stands in for it."""
    found = _messages("{ min_siz: 1 }")
    assert found == [("control_plane.system.min_siz", "unknown field 'min_siz'")]


def test_a_misspelt_key_beside_the_real_one_hides_none_of_its_findings() -> None:
    """With both `min_size: 2` and `min_siz: 1`, the real key's rule finding (the recipe
    needs at least 3 system nodes) is shown, not hidden as if `min_siz` were its spelling."""
    found = _messages("{ min_size: 2, min_siz: 1 }")
    assert ("control_plane.system.min_siz", "unknown field 'min_siz'") in found
    assert any(p == "control_plane.system.min_size" and ">= 3" in m for p, m in found), found
