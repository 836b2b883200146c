"""Reading a spec for editing (`SpecDocument.parse`, behind `npa soperator set` and the
wizard): what is refused, with which message, file and line, and what reads as empty."""

from __future__ import annotations

from pathlib import Path

import pytest

from npa_sop_tui.spec.findings import Finding
from npa_sop_tui.spec.model import SpecError
from npa_sop_tui.spec.roundtrip import SpecDocument

NAMED = Path("team") / "cluster.yaml"


def _refused(text: str, path: Path | None) -> Finding:
    with pytest.raises(SpecError) as caught:
        SpecDocument.parse(text, path)
    (finding,) = caught.value.findings
    return finding


def _source(path: Path | None) -> str:
    return str(path) if path is not None else "<text>"


@pytest.mark.parametrize("path", [None, NAMED])
def test_a_text_over_one_mib_is_refused_as_a_spec_naming_its_source(path: Path | None) -> None:
    """Protects the size limit's message: the user learns that the *spec* is too large and
    which file it is (or `<text>` for text not read from a file), before ruamel reads it."""
    finding = _refused("name: " + "x" * (1024 * 1024) + "\n", path)
    assert (finding.message, finding.file) == ("spec is larger than 1 MiB", _source(path))


@pytest.mark.parametrize("path", [None, NAMED])
def test_a_second_document_is_refused_as_in_validate_with_its_line(path: Path | None) -> None:
    """Protects the named error for a file ruamel cannot load: the editor reports what
    `validate` reports (the spec holds two documents, where the second starts), not a raw
    ruamel message, and names the file."""
    finding = _refused("name: a\nregion: eu-north1\n---\nname: b\n", path)
    assert (finding.message, finding.file, finding.line) == (
        "spec holds more than one YAML document",
        _source(path),
        4,
    )


def test_a_duplicate_key_names_the_field_and_both_lines() -> None:
    """Protects the field-level message for a duplicate key: which field, where it was
    first set, and the line of the second one."""
    finding = _refused("name: a\nworkers:\n  - name: cpu\n    size: 1\n    size: 2\n", None)
    assert (finding.path, finding.line, finding.file) == ("workers[0].size", 5, "<text>")
    assert finding.message == "duplicate key 'size' (first set at line 4)"


def test_an_unreadable_capacity_id_is_reported_without_its_value() -> None:
    """Protects secrets in error messages: a capacity block group ID that YAML cannot read
    is named by field and line, and its value never appears in the error."""
    text = "name: a\nworkers:\n  - name: gpu\n    capacity_block_group: 2024-02-30\n"
    with pytest.raises(SpecError) as caught:
        SpecDocument.parse(text, NAMED)
    (finding,) = caught.value.findings
    assert (finding.path, finding.line, finding.file) == (
        "workers[0].capacity_block_group",
        4,
        str(NAMED),
    )
    assert finding.message == (
        "cannot read this YAML value: a timestamp (value hidden: the field is a secret)"
    )
    assert "2024-02-30" not in str(caught.value)


# PyYAML (what `validate` reads with) accepts both; ruamel (the editor) does not.
FLOW_KEY = 'name: demo\nworkers:\n  - name: cpu\n    labels: ["gpu":1]\n'
SEXAGESIMAL = "name: demo\nsize: !!int '1:30'\n"


@pytest.mark.parametrize("path", [None, NAMED])
def test_yaml_only_the_editor_cannot_read_is_not_valid_yaml_at_its_line(
    path: Path | None,
) -> None:
    """Protects the editor's own YAML error: "not valid YAML: <what ruamel found>" at the
    file and line where ruamel stopped (line 4 here), not a traceback or a wrong line."""
    finding = _refused(FLOW_KEY, path)
    assert (finding.path, finding.message) == (
        "",
        "not valid YAML: expected ',' or ']', but got '<scalar>'",
    )
    assert (finding.file, finding.line, finding.column) == (_source(path), 4, None)


@pytest.mark.parametrize("path", [None, NAMED])
def test_a_value_the_editor_cannot_build_is_not_valid_yaml_without_a_line(
    path: Path | None,
) -> None:
    """Protects the message when ruamel fails without a position (a value it cannot
    build): the reason is shown and no made-up line number is given."""
    finding = _refused(SEXAGESIMAL, path)
    assert (finding.path, finding.file, finding.line) == ("", _source(path), None)
    assert finding.message == "not valid YAML: invalid literal for int() with base 10: '1:30'"


@pytest.mark.parametrize("text", ["- a\n- b\n", "just text\n", "42\n"])
def test_a_document_that_is_not_a_mapping_is_refused(text: str) -> None:
    """Protects the rule that a spec is a mapping: a list or a single value is refused with
    a message saying so, about the whole document."""
    finding = _refused(text, NAMED)
    assert (finding.path, finding.message) == ("", "spec must be a mapping (key: value)")


@pytest.mark.parametrize("text", ["", "\n\n", "  \x0c\n"])
def test_a_blank_text_is_an_empty_spec_that_fields_can_be_set_in(text: str) -> None:
    """Protects starting a spec from an empty file: blank text (even a form feed, which
    ruamel itself would refuse) reads as an empty mapping, and a set field is written
    in the default style (two-space mappings, list dashes under their key)."""
    doc = SpecDocument.parse(text)
    assert doc.data == {}
    doc.set("name", "demo")
    doc.set("workers", [{"name": "cpu", "size": 2}])
    assert doc.render() == "name: demo\nworkers:\n- name: cpu\n  size: 2\n"


def test_a_text_of_comments_only_is_an_empty_spec() -> None:
    """Protects reading a commented template that holds no field yet: it is an empty spec
    to set fields in, not "not a mapping"."""
    doc = SpecDocument.parse("# cluster.yaml: fill in\n\n# more to come\n")
    assert (doc.data, doc.changed) == ({}, [])
    doc.set("name", "demo")
    assert "name: demo\n" in doc.render()
