"""Editing a spec in place (`SpecDocument.set` / `delete` / `apply_changes` / `render`,
behind `npa soperator set` and the wizard): the path named in each refusal, nothing changed
by a refused or same-value edit, the quoting a value is written in, comments kept in place."""

from __future__ import annotations

import pytest
from ruamel.yaml.scalarstring import DoubleQuotedScalarString

from npa_sop_tui.spec.roundtrip import SpecDocument, plain
from npa_sop_tui.spec.spec_paths import PathError

from testkit.specs import COMMENTED


@pytest.mark.parametrize(
    ("text", "path", "message"),
    [
        (COMMENTED, "control_plane[0]", "control_plane[0]: control_plane has 0 item(s)"),
        (COMMENTED, "workers[2]", "workers[2]: workers has 2 item(s) (0–1)"),
        ("tags: []\n", "tags[0]", "tags[0]: tags has 0 item(s)"),
        ("a:\n  b: [1, 2]\n", "a.b[5]", "a.b[5]: a.b has 2 item(s) (0–1)"),
        (COMMENTED, "name.x", "name.x: name is not a mapping"),
        (
            COMMENTED,
            "control_plane.login.preset.x",
            "control_plane.login.preset.x: control_plane.login.preset is not a mapping",
        ),
        (COMMENTED, "workers.x", "workers.x: workers is not a mapping"),
        (COMMENTED, "name[0].x", "name[0]: not a list"),
        (
            COMMENTED,
            "workers[0].capacity_block_group",
            "workers[0].capacity_block_group holds a secret and is never written to "
            "cluster.yaml; give it at run time (NPA_CAPACITY_BLOCK_GROUPS or "
            "--capacity-block-group)",
        ),
    ],
)
def test_a_refused_set_names_the_path_and_why_and_changes_nothing(
    text: str, path: str, message: str
) -> None:
    """Protects `npa soperator set`'s refusals: the message names the field given, the part
    of it that is wrong (a list too short, with its valid indexes; a value that is not a
    mapping or list; a secret and where to give it instead), and the document is unchanged."""
    doc = SpecDocument.parse(text)
    with pytest.raises(PathError) as caught:
        doc.set(path, {"name": "x"} if path == "workers[2]" else "x")
    assert str(caught.value) == message
    assert (doc.changed, doc.render()) == ([], text)


def test_setting_under_missing_mappings_creates_them() -> None:
    """Protects `set` of a field whose sections are not in the file yet: the sections are
    added, nested, and only those lines are new."""
    doc = SpecDocument.parse("name: demo\n")
    doc.set("control_plane.login.size", 1)
    assert doc.render() == "name: demo\ncontrol_plane:\n  login:\n    size: 1\n"
    assert doc.changed == ["control_plane.login.size"]


@pytest.mark.parametrize(
    ("path", "value"),
    [("name", "train"), ("workers[0].size", 2), ("k8s_version", "1.31"), ("tags[0]", "a")],
)
def test_setting_a_field_to_the_value_it_has_is_no_change(path: str, value: object) -> None:
    """Protects "nothing to change": setting a field (or list item) to the value the file
    already holds records no change, so nothing is reported or rewritten."""
    text = COMMENTED + "tags: [a, b]\n"
    doc = SpecDocument.parse(text)
    doc.set(path, value)
    assert (doc.changed, doc.diff()) == ([], "")


def test_a_field_added_to_a_block_goes_before_the_comment_that_ends_it() -> None:
    """Protects the file's closing comment: a new top-level field is written after the last
    field, and the comment that ended the file still ends it."""
    doc = SpecDocument.parse(COMMENTED)
    doc.set("zone", "b")
    assert doc.render().endswith("k8s_version: '1.31'\nzone: b\n# trailing comment at the end\n")


def test_deleting_the_first_field_does_not_move_its_comment_to_the_end() -> None:
    """Protects the last field's place when the first is deleted: the comment lines that
    followed the deleted field are not appended after the file's last field."""
    doc = SpecDocument.parse("a: 1  # one\n# about b\nb: 2\nc: 3\n")
    doc.delete("a")
    rendered = doc.render()
    assert rendered.endswith("b: 2\nc: 3\n") and "a: 1" not in rendered


def test_deleting_the_first_item_does_not_move_its_comment_to_the_last_item() -> None:
    """Protects the list's last item when the first is deleted: the comment that followed
    the deleted item does not end up after the last item."""
    doc = SpecDocument.parse("l:\n  - name: a  # one\n  # about b\n  - name: b\n  - name: c\n")
    doc.delete("l[0]")
    rendered = doc.render()
    assert rendered.endswith("  - name: b\n  - name: c\n") and "name: a" not in rendered


@pytest.mark.parametrize(
    ("text", "path", "value", "written"),
    [
        ("tags: ['a', \"b\"]\n", "tags[0]", "c", "tags: ['c', \"b\"]\n"),
        ("tags: ['a', \"b\"]\n", "tags[1]", "c", "tags: ['a', \"c\"]\n"),
        ("tags: ['a', \"b\"]\n", "tags[0]", DoubleQuotedScalarString("c"), "tags: ['c', \"b\"]\n"),
        ('size: "2"\n', "size", 4, "size: 4\n"),
        ("k8s_version: '1.31'\n", "k8s_version", 1.32, "k8s_version: '1.32'\n"),
        (
            "name: demo\n",
            "extra",
            {"k8s_version": "1.30"},
            'name: demo\nextra:\n  k8s_version: "1.30"\n',
        ),
        (
            "name: demo\n",
            "extra",
            [{"k8s_version": "1.30"}],
            'name: demo\nextra:\n- k8s_version: "1.30"\n',
        ),
    ],
)
def test_a_value_is_written_in_the_quoting_of_the_value_it_replaces(
    text: str, path: str, value: object, written: str
) -> None:
    """Protects the user's quoting: a new string (also a list's first item, also one quoted
    otherwise elsewhere) keeps the quotes of the one it replaces, a number replacing a
    quoted number is a number, a version keeps its quotes even when given as a number, and
    a version in a new section (or a new list's item) is double-quoted (YAML would read
    1.30 as 1.3)."""
    doc = SpecDocument.parse(text)
    doc.set(path, value)
    assert doc.render() == written


def test_a_list_the_form_adds_is_written_without_its_secrets() -> None:
    """Protects capacity IDs from the wizard: a whole list of pools added to a file without
    one is written item by item, each without its revealed capacity block group ID."""
    doc = SpecDocument.parse("name: demo\n")
    pool = {"name": "gpu", "size": 1, "capacity_block_group": "capacityblockgroup-e00secret"}
    doc.apply_changes({"name": "demo"}, {"name": "demo", "workers": [pool]})
    assert doc.render() == "name: demo\nworkers:\n- name: gpu\n  size: 1\n"


def test_values_taken_from_another_file_are_written_in_this_files_style() -> None:
    """Protects `plain` (what the form's values are reduced to before they are written):
    ruamel's hex ints and quoted strings come out as plain int/str, so a value copied from
    another file does not carry that file's hex or quoting along."""
    source = SpecDocument.parse("a: 0x10\nb: 'x'\nc: 1.50\n")
    assert {k: type(v) for k, v in plain(source.data).items()} == {"a": int, "b": str, "c": float}
    doc = SpecDocument.parse("name: demo\n")
    doc.apply_changes(
        {"name": "demo"}, {"name": "demo", "size": source.get("a"), "region": source.get("b")}
    )
    assert doc.render() == "name: demo\nsize: 16\nregion: x\n"


@pytest.mark.parametrize(
    "text", ["---\na: 1\nb: 2\n", "---   \na: 1\nb: 2\n", "\n---\na: 1\nb: 2\n"]
)
def test_an_explicit_document_start_is_kept_exactly_by_an_edit(text: str) -> None:
    """Protects a file that starts with `---` (after blank lines, or with trailing spaces):
    an edit changes the edited line only; the start marker line and what is before it stay."""
    doc = SpecDocument.parse(text)
    doc.set("a", 5)
    doc.set("c", 3)
    assert doc.render() == text.replace("a: 1", "a: 5") + "c: 3\n"


MIXED = (
    "a:\n  - x: 1\n    y: 2\n"
    "b:\n    -   x: 1\n        y: 2\n"  # this list alone indented another way
    "c:\n  - x: 1\n    y: 2\n"
)


def test_an_edit_the_line_merge_cannot_place_is_written_whole_and_readable() -> None:
    """Protects the file after an edit in a list indented unlike the rest: the minimal
    line merge would be unreadable there, so the whole document is written out in the
    file's main style, still holding every field and the edit."""
    doc = SpecDocument.parse(MIXED)
    doc.set("b[0].y", 5)
    assert doc.render() == MIXED.replace("    -   x: 1\n        y: 2\n", "  - x: 1\n    y: 5\n")
    assert plain(SpecDocument.parse(doc.render()).data)["b"] == [{"x": 1, "y": 5}]
