"""Editing a spec in place keeps the user's comment lines where they belong: above the item
they lead in when the item before them is deleted, below `key: []` when a list or mapping
loses its last item, above the fields when the file held nothing but comments."""

from __future__ import annotations

import pytest

from npa_sop_tui.spec.roundtrip import SpecDocument, plain

POOLS = (
    "name: demo\n"
    "workers:\n"
    "  # the H100 pools\n"
    "  - name: a  # pool a\n"
    "    size: 1\n"
    "  # pool b is shared\n"
    "  - name: b\n"
    "    size: 2\n"
    "accounting: false\n"
    "slurm_operator_version: '1.0'\n"
)


@pytest.mark.parametrize("how", ["delete", "apply_changes"])
def test_deleting_every_commented_pool_leaves_a_readable_empty_list(how: str) -> None:
    """Protects the file after the last worker pool is removed (`unset` or the wizard): the
    list is written `workers: []` on its own line, the comments stay below it, and the keys
    after it stay on their own lines (ruamel glued them into unreadable YAML)."""
    doc = SpecDocument.parse(POOLS)
    if how == "delete":
        doc.delete("workers[1]")
        doc.delete("workers[0]")
    else:
        before = plain(doc.data)
        doc.apply_changes(before, {**before, "workers": []})
    rendered = doc.render()
    assert rendered == (
        "name: demo\n"
        "workers: []\n"
        "  # the H100 pools\n"
        "  # pool b is shared\n"
        "accounting: false\n"
        "slurm_operator_version: '1.0'\n"
    )
    assert plain(SpecDocument.parse(rendered).data) == {**plain(doc.data), "workers": []}


def test_a_comment_after_the_emptied_lists_key_stays_on_its_line() -> None:
    """Protects a comment written on the list's own line: it stays on the `workers: []`
    line, and the section break and comment before the next key stay in place."""
    text = "workers:  # pools\n  - name: a\n\n# billing\naccounting: false\n"
    doc = SpecDocument.parse(text)
    doc.delete("workers[0]")
    assert doc.render() == "workers: [] # pools\n\n# billing\naccounting: false\n"


@pytest.mark.parametrize(
    ("text", "path", "written"),
    [
        (
            "x:\n  # head\n  a: 1\n  # after a\nz: 1\n",
            "x.a",
            "x: {}\n  # head\n  # after a\nz: 1\n",
        ),
        (
            "x:\n  l:\n    # c\n    - 1\n  m: 2\nz: 1\n",
            "x.l[0]",
            "x:\n  l: []\n    # c\n  m: 2\nz: 1\n",
        ),
        ("# c\na: 1\n", "a", "# c\n{}\n"),
    ],
)
def test_emptying_a_commented_block_keeps_the_next_key_readable(
    text: str, path: str, written: str
) -> None:
    """Protects a section (or a nested list, or the whole file) whose last item is removed:
    `{}` / `[]` on the key's own line, its comments below it, the next field intact."""
    doc = SpecDocument.parse(text)
    doc.delete(path)
    assert doc.render() == written


@pytest.mark.parametrize(
    ("text", "path", "written"),
    [
        ("a: 1  # one\n# about b\nb: 2\nc: 3\n", "a", "# about b\nb: 2\nc: 3\n"),
        ("a: 1\n\n# about b\nb: 2\n", "a", "# about b\nb: 2\n"),
        ("a: 1\n\nb: 2\n", "a", "b: 2\n"),
        (
            "x:\n  # head\n  a: 1\n\n  # about b\n  b: 2\n",
            "x.a",
            "x:\n  # head\n\n  # about b\n  b: 2\n",
        ),
        (
            "l:\n  - name: a  # one\n  # about b\n  - name: b\n  - name: c\n",
            "l[0]",
            "l:\n  # about b\n  - name: b\n  - name: c\n",
        ),
    ],
)
def test_the_comment_after_a_deleted_first_item_stays_above_the_next(
    text: str, path: str, written: str
) -> None:
    """Protects the comment lines after a deleted first field or list item: they introduce
    the next one, so they stay above it (below any comment already heading the block; a
    blank line left at the very top of the block is dropped)."""
    doc = SpecDocument.parse(text)
    doc.delete(path)
    assert doc.render() == written


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("# only comments\n# here\n", "# only comments\n# here\nname: demo\n"),
        ("# no final newline", "# no final newline\nname: demo\n"),
        ("  # indented\n# c\n", "  # indented\n# c\nname: demo\n"),
        ("\n# after a blank\n\n", "\n# after a blank\n\nname: demo\n"),
    ],
)
def test_setting_a_field_in_a_file_of_comments_keeps_them(text: str, written: str) -> None:
    """Protects a cluster.yaml that holds only comments (a template's notes): a field set
    in it is written below them and the comments stay, line for line, also through a second
    edit after the first was written."""
    doc = SpecDocument.parse(text)
    doc.set("name", "demo")
    assert doc.render() == written
    assert plain(SpecDocument.parse(written).data) == {"name": "demo"}
    doc.original, doc.changed = written, []  # as `write` leaves it
    doc.set("size", 2)
    assert doc.render() == written + "size: 2\n"


@pytest.mark.parametrize(
    "text",
    [
        "%YAML 1.2\n---\na: 1\nb: 2\n",
        "--- # c\na: 1\nb: 2\n",
        "# top\n---\na: 1\nb: 2\n",
        "%YAML 1.2\n# top\n---  # c\n\n# about a\na: 1\nb: 2\n",
        "--- # c\n# about a\na: 1\nb: 2\n",
        "%YAML 1.2\r\n--- # c\r\na: 1\r\nb: 2\r\n",
    ],
)
def test_the_lines_up_to_the_document_start_are_kept_by_an_edit(text: str) -> None:
    """Protects a file's head: a `%YAML` directive, the comments before `---` and the
    comment on the `---` line stay as written when a field is changed or added (ruamel
    drops the first two and moves the third onto a line of its own)."""
    doc = SpecDocument.parse(text)
    doc.set("a", 5)
    doc.set("z", 1)
    newline = "\r\n" if "\r\n" in text else "\n"
    assert doc.render() == text.replace("a: 1", "a: 5") + "z: 1" + newline


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("--- # c\n", "--- # c\nname: demo\n"),
        ("---", "---\nname: demo\n"),
        ("%YAML 1.2\n---\n# fill in\n", "%YAML 1.2\n---\n# fill in\nname: demo\n"),
    ],
)
def test_a_field_set_in_a_file_of_a_head_only_goes_below_it(text: str, written: str) -> None:
    """Protects a template that holds a document start (and comments) but no field yet: a
    field set in it goes on a line of its own below them."""
    doc = SpecDocument.parse(text)
    doc.set("name", "demo")
    assert doc.render() == written


def test_deleting_the_first_field_below_a_commented_document_start() -> None:
    """Protects both comments when the first field of a file starting `--- # c` is deleted:
    the `---` line keeps its comment, the comment after the deleted field stays above the
    next one."""
    doc = SpecDocument.parse("--- # c\na: 1\n# about b\nb: 2\n")
    doc.delete("a")
    assert doc.render() == "--- # c\n# about b\nb: 2\n"


@pytest.mark.parametrize(
    ("text", "path", "value", "written"),
    [
        ("--- {a: 1}\n", "a", 5, "--- {a: 5}\n"),
        ("\n--- {a: 1}\n", "a", 5, "--- {a: 5}\n"),
        ("--- !!map\na: 1\nb: 2\n", "b", 7, "--- !!map\na: 1\nb: 7\n"),
        ("--- # c\na: { x: 1 }\nb: 2\n", "a.x", 2, "--- # c\na: { x: 2 }\nb: 2\n"),
    ],
)
def test_an_edit_below_a_document_start_keeps_the_rest_of_its_line(
    text: str, path: str, value: int, written: str
) -> None:
    """Protects a document that starts on the `---` line (`--- {a: 1}`, `--- !!map`): it
    keeps that line; and an edit below a commented `---` keeps the padding of a flow map."""
    doc = SpecDocument.parse(text)
    doc.set(path, value)
    assert doc.render() == written
