"""The spec files as the app reads and writes them (tui/spec_files.py): a file opens as a
mapping with every setting it has, a misspelt key opens with its finding, an edit rewrites
only the changed field (comments kept), a file changed on disk since it was opened is not
overwritten, and a capacity block ID survives the round trip."""

from __future__ import annotations

from pathlib import Path

import pytest

from npa_sop_tui.home.file_edit import FileChanged
from npa_sop_tui.tui.spec_files import SpecFiles

from testkit.specs import COMMENTED, MINIMAL

FILES = SpecFiles()


def test_a_file_opens_as_its_mapping(tmp_path: Path) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(COMMENTED)
    mapping = FILES.load_spec(path)
    assert mapping["name"] == "train"
    assert mapping["control_plane"]["system"] == {"min_size": 3, "max_size": 9}
    assert "apiVersion" in mapping and "workers" in mapping
    spec, findings = FILES.check(mapping)
    assert spec is not None and spec.name == "train"
    assert not [f for f in findings if f.is_error]


def test_a_misspelt_key_opens_with_its_finding(tmp_path: Path) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(MINIMAL.replace("region:", "regoin:"))
    mapping, document, findings = FILES.open_with_findings(path)
    assert mapping["regoin"] == "eu-north1" and mapping["name"] == "demo"
    assert document.original == path.read_text()
    assert any(f.path == "regoin" and f.line == 3 for f in findings), findings


def test_an_edit_rewrites_only_the_changed_field(tmp_path: Path) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(COMMENTED)
    mapping, document, _ = FILES.open_with_findings(path)
    after = {**mapping, "name": "train2"}
    text, diff = FILES.edited_text(document, mapping, after)
    # the comment keeps its column; every other line stays byte for byte
    assert "name: train2  # also the kube context suffix\n" in text
    old_lines, new_lines = COMMENTED.splitlines(), text.splitlines()
    assert len(old_lines) == len(new_lines)
    assert [(a, b) for a, b in zip(old_lines, new_lines, strict=True) if a != b] == [
        (
            "name: train   # also the kube context suffix",
            "name: train2  # also the kube context suffix",
        )
    ]
    assert "-name: train " in diff and "+name: train2 " in diff


def test_a_file_changed_since_it_was_opened_is_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(MINIMAL)
    opened = path.read_text()
    path.write_text(MINIMAL + "accounting: true\n")  # someone else's edit
    with pytest.raises(FileChanged):
        FILES.write_text(path, MINIMAL.replace("demo", "demo2"), expected=opened)
    assert path.read_text().endswith("accounting: true\n")
    document = FILES.write_text(path, "x: 1\n", expected=path.read_text())
    assert path.read_text() == "x: 1\n" and document.original == "x: 1\n"


def test_a_capacity_block_id_survives_the_round_trip(tmp_path: Path) -> None:
    text = MINIMAL.replace(
        "    size: 2\n", "    size: 2\n    capacity_block_group: cbg-secret-123\n"
    )
    mapping, findings = FILES.read_text(text, tmp_path / "cluster.yaml")
    assert not findings
    assert mapping["workers"][0]["capacity_block_group"] == "cbg-secret-123"
    spec, _ = FILES.check(mapping)
    assert spec is not None
    assert "cbg-secret-123" not in spec.model_dump_json()  # masked outside the file itself
    assert FILES.to_mapping(spec)["workers"][0]["capacity_block_group"] == "cbg-secret-123"


def test_a_mapping_the_model_refuses_gives_findings_not_an_exception() -> None:
    spec, findings = FILES.check({"apiVersion": "npa.soperator/v0.0.1", "name": 5})
    assert spec is None and findings and all(f.is_error for f in findings)
