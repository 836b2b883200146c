"""Round-trip editing of commented spec files: unchanged = byte-identical, one change = one
changed line, comments / order / quoting / flow style kept, invalid results never written."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from npa_sop_tui.spec.line_merge import merge_lines
from npa_sop_tui.spec.model import SpecError, parse_spec_text
from npa_sop_tui.spec.roundtrip import SpecDocument
from npa_sop_tui.spec.spec_paths import PathError, parse_path

from testkit.specs import COMMENTED, changed_lines

STYLES = {
    "commented": COMMENTED,
    "asset": (Path(__file__).resolve().parents[2] / "assets" / "cluster.yaml").read_text(),
    "crlf": COMMENTED.replace("\n", "\r\n"),
    "explicit-start": "---\n" + COMMENTED,
    "no-final-newline": COMMENTED.rstrip("\n"),
}


@pytest.mark.parametrize("style", list(STYLES))
def test_unchanged_document_is_byte_identical(style: str, tmp_path: Path) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_bytes(STYLES[style].encode())
    doc = SpecDocument.read(path)
    assert doc.render() == STYLES[style]
    assert doc.diff() == ""
    before = path.stat().st_mtime_ns
    doc.write()
    assert path.read_bytes() == STYLES[style].encode()
    assert path.stat().st_mtime_ns == before, "an unchanged file is not rewritten"


@pytest.mark.parametrize(
    ("key", "value", "old", "new"),
    [
        (
            "workers[1].size",
            4,
            "        size: 1          # one node for now",
            "        size: 4          # one node for now",
        ),
        (
            "name",
            "train2",
            "name: train   # also the kube context suffix",
            "name: train2  # also the kube context suffix",
        ),
        (
            "workers[0].platform",
            "cpu-e2",
            "        platform: 'cpu-d3'     # single-quoted on purpose",
            "        platform: 'cpu-e2'     # single-quoted on purpose",
        ),
        (
            "workers[0].preset",
            "4vcpu-16gb",
            '        preset: "8vcpu-32gb"',
            '        preset: "4vcpu-16gb"',
        ),
        (
            "control_plane.system.min_size",
            4,
            "  system: { min_size: 3, max_size: 9 }   # flow style, padded",
            "  system: { min_size: 4, max_size: 9 }   # flow style, padded",
        ),
        (
            "control_plane.login.preset",
            "32vcpu-128gb",
            "  login: {preset: 16vcpu-64gb}",
            "  login: {preset: 32vcpu-128gb}",
        ),
        ("k8s_version", "1.32", "k8s_version: '1.31'", "k8s_version: '1.32'"),
        ("accounting", True, "accounting: false", "accounting: true"),
    ],
)
def test_one_change_is_one_changed_line(key: str, value: object, old: str, new: str) -> None:
    doc = SpecDocument.parse(COMMENTED)
    doc.set(key, value)
    after = doc.render()
    assert changed_lines(COMMENTED, after) == [f"- {old}", f"+ {new}"]
    parse_spec_text(after)  # still a valid spec


def test_crlf_file_keeps_its_line_endings_outside_the_change() -> None:
    text = STYLES["crlf"]
    doc = SpecDocument.parse(text)
    doc.set("workers[1].size", 4)
    after = doc.render()
    assert changed_lines(text, after) == [
        "- " + "        size: 1          # one node for now",
        "+ " + "        size: 4          # one node for now",
    ]
    assert after.count("\r\n") == text.count("\r\n") == after.count("\n")  # CRLF throughout


def test_adding_and_removing_fields_touches_only_their_lines() -> None:
    doc = SpecDocument.parse(COMMENTED)
    doc.set("workers[0].docker_cache", True)
    doc.delete("workers[1].preemptible")
    doc.set("slurm_rest_enabled", False)
    after = doc.render()
    assert changed_lines(COMMENTED, after) == [
        "+         docker_cache: true",
        "-         preemptible: true",
        "+ slurm_rest_enabled: false",
    ]
    assert "# trailing comment at the end" in after
    assert after.index("# CPU pool for pre-processing") < after.index("name: cpu")


def test_new_version_strings_are_quoted_and_secrets_refused() -> None:
    doc = SpecDocument.parse(COMMENTED)
    doc.set("node_group_version", "72")
    assert 'node_group_version: "72"' in doc.render()
    with pytest.raises(PathError, match="secret"):
        doc.set("workers[1].capacity_block_group", "capacityblockgroup-abc")


def test_apply_changes_from_a_form_matches_pools_by_name() -> None:
    """The wizard hands over the form before and after; only what differs is edited."""
    doc = SpecDocument.parse(COMMENTED)
    before = parse_spec_text(COMMENTED).spec.model_dump(mode="json", exclude_unset=True)
    after = {**before, "workers": [dict(before["workers"][1], size=2)]}  # pool cpu removed
    doc.apply_changes(before, after)
    result = doc.render()
    removed = [line for line in changed_lines(COMMENTED, result) if line.startswith("- ")]
    added = [line for line in changed_lines(COMMENTED, result) if line.startswith("+ ")]
    assert added == ["+         size: 2          # one node for now"]
    assert all(
        "cpu" in line or "size" in line or "preset" in line or "#" in line or line == "- "
        for line in removed
    )
    assert "name: cpu\n" not in result and "gpu-h100-sxm" in result
    assert "# Our training cluster" in result


def test_apply_changes_ignores_normalisation_of_untouched_fields() -> None:
    """An unquoted `k8s_version: 1.30` reads as "1.30"; not touching it must not rewrite it."""
    text = COMMENTED.replace("k8s_version: '1.31'", "k8s_version: 1.30")
    doc = SpecDocument.parse(text)
    before = parse_spec_text(text).spec.model_dump(mode="json", exclude_unset=True)
    doc.apply_changes(before, dict(before))
    assert doc.render() == text
    doc.apply_changes(before, {**before, "region": "eu-north2"})
    assert changed_lines(text, doc.render()) == ["- region: eu-north1", "+ region: eu-north2"]


def test_write_is_atomic_and_refuses_an_invalid_result(tmp_path: Path) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(COMMENTED)
    doc = SpecDocument.read(path)
    doc.set("workers[1].size", 0)
    with pytest.raises(SpecError) as info:
        doc.write()
    assert path.read_text() == COMMENTED, "nothing is written when the result is invalid"
    finding = next(f for f in info.value.findings if f.path == "workers[1].size")
    assert (
        finding.line
        == COMMENTED.splitlines().index("        size: 1          # one node for now") + 1
    )
    doc.set("workers[1].size", 3)
    assert doc.write() == path
    assert "size: 3          # one node for now" in path.read_text()
    assert not list(tmp_path.glob(".cluster.yaml.*")), "no temp file left behind"


def test_paths() -> None:
    assert parse_path("workers[1].size") == ["workers", 1, "size"]
    assert parse_path("control_plane.login.preset") == ["control_plane", "login", "preset"]
    for bad in ("", "[1]", "workers[x]", "a..b", "a b"):
        with pytest.raises(PathError):
            parse_path(bad)
    doc = SpecDocument.parse(COMMENTED)
    with pytest.raises(PathError, match="2 item"):
        doc.set("workers[5].size", 1)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    pool=st.sampled_from([0, 1]),
    field=st.sampled_from(["size", "preset", "platform", "name"]),
    value=st.one_of(st.integers(1, 64), st.from_regex(r"[a-z][a-z0-9-]{0,12}", fullmatch=True)),
)
def test_any_single_field_change_is_one_line(pool: int, field: str, value: object) -> None:
    doc = SpecDocument.parse(COMMENTED)
    if doc.get(f"workers[{pool}].{field}") == value:
        return
    doc.set(f"workers[{pool}].{field}", value)
    changes = changed_lines(COMMENTED, doc.render())
    assert len(changes) == 2, changes


def test_merge_keeps_original_lines_outside_edits() -> None:
    original = "a: { x: 1 }\nb: 2   # two\nc: 3\n"
    baseline = "a: {x: 1}\nb: 2   # two\nc: 3\n"
    edited = "a: {x: 1}\nb: 2   # two\nc: 4\n"
    assert merge_lines(original, baseline, edited) == "a: { x: 1 }\nb: 2   # two\nc: 4\n"


def test_spec_package_does_not_import_textual() -> None:
    import subprocess

    code = (
        "import sys, npa_sop_tui.spec.roundtrip as r; "
        "d = r.SpecDocument.parse('name: x\\n'); d.set('name', 'y'); d.render(); "
        "print(any(m.split('.')[0] == 'textual' for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_wizard_adding_a_secret_writes_the_rest_and_never_the_secret() -> None:
    """Protects the secret-key filter of apply_changes: the wizard's mapping carries the
    revealed capacity ID; applying it must write the other changes, not refuse the edit
    (PathError) and not write the ID."""
    doc = SpecDocument.parse(COMMENTED)
    before = parse_spec_text(COMMENTED, source="c.yaml").spec.model_dump(
        mode="json", by_alias=True, exclude_unset=True
    )
    after = {**before, "workers": [dict(w) for w in before["workers"]]}
    after["workers"][1]["capacity_block_group"] = "e00secretID1234"
    after["workers"][1]["size"] = 4
    doc.apply_changes(before, after)
    text = doc.render()
    assert "e00secretID1234" not in text and "capacity_block_group" not in text
    assert "size: 4" in text


@pytest.mark.parametrize(
    ("old", "new", "shown"), [(True, 1, "1"), (False, 0, "0"), (1, True, "true"), ("3", 3, "3")]
)
def test_a_value_of_another_kind_is_a_change(old: object, new: object, shown: str) -> None:
    """Protects `_same`: Python's True == 1 and False == 0 must not make a changed value
    look unchanged (a YAML `true` and `1` are different things to the spec)."""
    doc = SpecDocument.parse(COMMENTED)
    doc.apply_changes({"accounting": old}, {"accounting": new})
    line = next(x for x in doc.render().splitlines() if x.startswith("accounting:"))
    assert line == f"accounting: {shown}"


# -- apply_changes on lists (the wizard's pool edits), from the mutation run ----------------

NEW_POOL = {"name": "new", "platform": "cpu-d3", "preset": "8vcpu-32gb", "size": 1}


def _form() -> dict[str, object]:
    return parse_spec_text(COMMENTED).spec.model_dump(mode="json", exclude_unset=True)


def _pools(text: str) -> list[str]:
    return [w["name"] for w in parse_spec_text(text).spec.model_dump(mode="json")["workers"]]


def test_a_pool_added_last_goes_before_the_blank_line_that_ends_the_list() -> None:
    """Protects the insert of a new named item and the move of the list's trailing lines."""
    before = _form()
    doc = SpecDocument.parse(COMMENTED)
    doc.apply_changes(before, {**before, "workers": [*before["workers"], NEW_POOL]})  # type: ignore[list-item]
    after = doc.render()
    assert doc.changed == ["workers[2]"] and _pools(after) == ["cpu", "gpu", "new"]
    assert changed_lines(COMMENTED, after) == [
        "+     -   name: new",
        "+         platform: cpu-d3",
        "+         preset: 8vcpu-32gb",
        "+         size: 1",
    ]
    assert "size: 1\n\naccounting: false" in after  # the separating blank line moved down


def test_a_pool_added_between_two_lands_there_and_keeps_the_others_lines() -> None:
    before = _form()
    workers = before["workers"]
    doc = SpecDocument.parse(COMMENTED)
    doc.apply_changes(before, {**before, "workers": [workers[0], NEW_POOL, workers[1]]})  # type: ignore[index]
    after = doc.render()
    assert doc.changed == ["workers[1]"] and _pools(after) == ["cpu", "new", "gpu"]
    assert [ln for ln in changed_lines(COMMENTED, after) if ln.startswith("- ")] == []
    assert "size: 1          # one node for now" in after


def test_a_renamed_pool_is_removed_and_added_under_its_new_name() -> None:
    before = _form()
    workers = before["workers"]
    renamed = {**workers[1], "name": "gpu2"}  # type: ignore[index]
    doc = SpecDocument.parse(COMMENTED)
    doc.apply_changes(before, {**before, "workers": [workers[0], renamed]})  # type: ignore[index]
    after = doc.render()
    assert _pools(after) == ["cpu", "gpu2"] and doc.changed == ["workers[1]", "workers[1]"]
    assert "platform: 'cpu-d3'     # single-quoted on purpose" in after  # cpu untouched


@pytest.mark.parametrize(
    ("order", "names"),
    [("reordered", ["gpu", "cpu"]), ("duplicated", ["cpu", "cpu"])],
)
def test_reordered_or_duplicated_pools_rewrite_the_whole_list(order: str, names: list[str]) -> None:
    before = _form()
    by_name = {w["name"]: w for w in before["workers"]}  # type: ignore[union-attr]
    doc = SpecDocument.parse(COMMENTED)
    doc.apply_changes(before, {**before, "workers": [by_name[n] for n in names]})
    assert doc.changed == ["workers"]
    data = SpecDocument.parse(doc.render()).get("workers")
    assert [w["name"] for w in data] == names


def test_lists_without_names_are_edited_item_by_item_when_their_length_stays() -> None:
    """Protects the unnamed-list rules: same length → per item, else the whole list."""
    text = "xs: [1, 2, 3]\nms:\n  - a: 1\n  - a: 2\n"
    before = {"xs": [1, 2, 3], "ms": [{"a": 1}, {"a": 2}]}
    doc = SpecDocument.parse(text)
    doc.apply_changes(before, {"xs": [1, 5, 3], "ms": [{"a": 1}, {"a": 7}]})
    assert doc.changed == ["xs[1]", "ms[1].a"]
    assert doc.render() == "xs: [1, 5, 3]\nms:\n  - a: 1\n  - a: 7\n"
    doc = SpecDocument.parse(text)
    doc.apply_changes(before, {"xs": [1, 2], "ms": [{"a": 1}, {"a": 2}]})
    assert doc.changed == ["xs"] and SpecDocument.parse(doc.render()).get("xs") == [1, 2]


def test_a_form_adds_removes_and_replaces_fields_by_their_values() -> None:
    """Protects `_apply` on mappings: a field gone is deleted, a new one set to its value,
    a mapping turned into a scalar replaced."""
    text = "a:\n  b: 1\nkeep: 2\ngone: 3\n"
    doc = SpecDocument.parse(text)
    doc.apply_changes({"a": {"b": 1}, "keep": 2, "gone": 3}, {"a": 5, "keep": 2, "added": {"x": 1}})
    assert doc.render() == "a: 5\nkeep: 2\nadded:\n  x: 1\n"
    assert doc.changed == ["gone", "a", "added"]


def test_deleting_under_a_missing_parent_is_refused_and_creates_nothing() -> None:
    doc = SpecDocument.parse("a: 1\n")
    with pytest.raises(PathError):
        doc.delete("slurm.partition")
    doc.delete("nosuch")  # a missing key in an existing mapping: nothing to do
    assert doc.render() == "a: 1\n" and doc.changed == []


# -- where `write` writes and what it checks, from the mutation run -------------------------


def test_a_document_without_a_path_is_written_to_cluster_yaml_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    doc = SpecDocument.parse(COMMENTED)
    assert doc.write() == Path("cluster.yaml")
    assert (tmp_path / "cluster.yaml").read_text() == COMMENTED


def test_write_checks_the_run_time_capacity_it_is_given(tmp_path: Path) -> None:
    """Protects passing `capacity` on to the validation: a group for an unknown pool is
    refused and nothing is written."""
    path = tmp_path / "cluster.yaml"
    doc = SpecDocument.parse(COMMENTED)
    with pytest.raises(SpecError, match="unknown worker pool 'nosuch'"):
        doc.write(path, capacity={"nosuch": "capacityblockgroup-x"})
    assert not path.exists()


def test_only_the_file_a_document_was_read_from_is_checked_for_changes(tmp_path: Path) -> None:
    """Protects the `same` test: a parsed (not read) document, or a save under another name,
    replaces what is there; only the file it was read from must still hold what was read."""
    from npa_sop_tui.home.file_edit import FileChanged

    source, other = tmp_path / "a.yaml", tmp_path / "b.yaml"
    source.write_text(COMMENTED)
    other.write_text("# someone else's\n")
    doc = SpecDocument.read(source)
    doc.set("workers[1].size", 2)
    doc.write(other)  # save as: b.yaml is replaced
    assert "size: 2" in other.read_text()
    parsed = SpecDocument.parse(COMMENTED, path=source)
    source.write_text("# changed meanwhile\n")
    parsed.set("workers[1].size", 3)
    parsed.write()  # not read from disk: nothing to compare with
    assert "size: 3" in source.read_text()
    again = SpecDocument.read(other)
    other.write_text(COMMENTED)  # another editor saved meanwhile
    again.set("workers[1].size", 4)
    with pytest.raises(FileChanged):
        again.write()


@pytest.mark.parametrize("end", ["\n", ""], ids=["final-newline", "no-final-newline"])
def test_the_diff_shows_each_line_on_its_own_line(end: str) -> None:
    """Protects `_with_newline` on both sides: a file without a final newline once showed
    `-a: 1+a: 2` (its last line glued to the added one); one with it, no extra blank line."""
    doc = SpecDocument.parse("x: 0\na: 1" + end)
    doc.set("a", 2)
    assert doc.diff(label="c.yaml") == (
        "--- c.yaml (on disk)\n+++ c.yaml (after)\n@@ -1,2 +1,2 @@\n x: 0\n-a: 1\n+a: 2\n"
    )
    assert doc.render() == "x: 0\na: 2" + end


# -- secrets in pools the wizard adds, and list edits from the mutation run (round four) ---

RESERVED_POOL = {
    "name": "new",
    "platform": "gpu-h100-sxm",
    "preset": "8gpu-128vcpu-1600gb",
    "size": 1,
    "fabric": "eu-north1-a",
    "capacity_block_group": "e00secretNEW",
}


def test_a_pool_added_with_a_revealed_capacity_id_is_written_without_it() -> None:
    """A bug found by this round: the new pool was inserted whole, its capacity block group
    ID included. The ID is given at run time; every other field of the pool is written."""
    before = _form()
    after = {**before, "workers": [dict(w) for w in before["workers"]] + [RESERVED_POOL]}  # type: ignore[attr-defined]
    after["workers"][1]["capacity_block_group"] = "e00secretOLD"  # type: ignore[index]
    doc = SpecDocument.parse(COMMENTED)
    doc.apply_changes(before, after)
    text = doc.render()
    assert "e00secret" not in text and "capacity_block_group" not in text
    assert doc.changed == ["workers[2]"] and _pools(text) == ["cpu", "gpu", "new"]
    assert "    -   name: new\n        platform: gpu-h100-sxm\n" in text


def test_a_new_section_is_written_without_its_secret_keys() -> None:
    doc = SpecDocument.parse("name: a\n")
    doc.apply_changes(
        {"name": "a"}, {"name": "a", "extra": {"capacity_block_group": "e00secret", "x": 1}}
    )
    assert doc.render() == "name: a\nextra:\n  x: 1\n"


LIST_DOC = """\
items:
  - a: 1

  - b: 2
    # about b

  - c: 3
end: x
"""


def test_deleting_a_middle_item_keeps_the_comment_after_it_and_one_blank_line() -> None:
    """The lines after a deleted list item move onto the item before it; the item before's
    own blank separator is replaced, not doubled."""
    doc = SpecDocument.parse(LIST_DOC)
    doc.delete("items[1]")
    assert doc.render() == "items:\n  - a: 1\n    # about b\n\n  - c: 3\nend: x\n"
    assert doc.changed == ["items[1]"]


def test_deleting_between_blank_separated_items_leaves_one_blank_line() -> None:
    doc = SpecDocument.parse("items:\n  - a: 1\n\n  - b: 2\n\n  - c: 3\nend: x\n")
    doc.delete("items[1]")
    assert doc.render() == "items:\n  - a: 1\n\n  - c: 3\nend: x\n"


@pytest.mark.parametrize("path", ["items[3]", "items[9]", "items.name", "nothing"])
def test_deleting_what_is_not_there_changes_nothing(path: str) -> None:
    doc = SpecDocument.parse(LIST_DOC)
    doc.delete(path)
    assert doc.render() == LIST_DOC and doc.changed == []


def test_an_edit_in_a_list_of_plain_values_touches_that_item_only() -> None:
    text = "tags:\n  - a   # first\n  - b   # second\n"
    doc = SpecDocument.parse(text)
    doc.apply_changes({"tags": ["a", "b"]}, {"tags": ["a", "c"]})
    assert doc.render() == "tags:\n  - a   # first\n  - c   # second\n"
    assert doc.changed == ["tags[1]"]


@pytest.mark.parametrize(
    ("before", "after"),
    [
        # an unnamed item added to named ones, or named ones replacing an unnamed one
        ([{"name": "a"}], [{"name": "a"}, {"x": 1}]),
        ([{"name": "a"}, {"x": 1}], [{"name": "a"}, {"name": "b"}, {"name": "c"}]),
    ],
)
def test_a_list_with_unnamed_items_is_rewritten_whole(
    before: list[object], after: list[object]
) -> None:
    doc = SpecDocument.parse("l:\n" + "".join(f"- {_flow(x)}\n" for x in before))
    doc.apply_changes({"l": before}, {"l": after})
    assert doc.changed == ["l"]
    assert SpecDocument.parse(doc.render()).get("l") == after


def _flow(item: object) -> str:
    return "{" + ", ".join(f"{k}: {v}" for k, v in item.items()) + "}"  # type: ignore[attr-defined]


def test_an_unnamed_list_of_the_same_length_is_edited_item_by_item() -> None:
    doc = SpecDocument.parse("l:\n  - a   # first\n  - b   # second\n")
    doc.apply_changes({"l": ["a", "b"]}, {"l": [{"name": "n"}, "b"]})
    assert doc.changed == ["l[0]"]
    text = doc.render()
    assert "  - b   # second\n" in text  # the untouched item keeps its line
    assert SpecDocument.parse(text).get("l") == [{"name": "n"}, "b"]


def test_a_named_item_inserted_in_the_middle_leaves_the_comment_above_it_in_place() -> None:
    doc = SpecDocument.parse("l:\n  - name: a\n    # about a\n  - name: c\nend: x\n")
    before = [{"name": "a"}, {"name": "c"}]
    doc.apply_changes({"l": before}, {"l": [before[0], {"name": "b"}, before[1]]})
    assert doc.changed == ["l[1]"]
    assert doc.render() == "l:\n  - name: a\n    # about a\n  - name: b\n  - name: c\nend: x\n"


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("name[0]", "name[0]: not a list"),
        ("workers[2]", "workers[2]: the list has 2 item(s)"),
        ("name.x", "name.x: not a mapping"),
        ("nothing", "nothing: no such field in the file"),
        ("a..b", "cannot read the key 'a..b' at character 3"),
    ],
)
def test_a_path_that_is_not_in_the_file_says_which_and_why(path: str, message: str) -> None:
    with pytest.raises(PathError) as caught:
        SpecDocument.parse(COMMENTED).get(path)
    assert str(caught.value) == message


def test_a_second_write_goes_to_the_same_file_and_checks_it_was_not_edited_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After the first write the document is the file's: a second write (no path given)
    replaces that file, and refuses when someone changed it in between."""
    from npa_sop_tui.home.file_edit import FileChanged

    monkeypatch.chdir(tmp_path)
    target = tmp_path / "spec.yaml"
    doc = SpecDocument.parse(COMMENTED)
    assert doc.write(target) == target
    assert (doc.path, doc.changed, doc.original) == (target, [], COMMENTED)
    assert doc.write() == target  # nothing changed: nothing to do, still the same file
    doc.set("name", "second")
    doc.write()
    assert "name: second" in target.read_text() and not (tmp_path / "cluster.yaml").exists()
    target.write_text(target.read_text() + "# someone else\n")
    doc.set("name", "third")
    with pytest.raises(FileChanged):
        doc.write()
    assert target.read_text().endswith("# someone else\n")


def test_a_document_without_a_file_names_itself_in_errors_and_diffs() -> None:
    doc = SpecDocument.parse(COMMENTED)
    doc.set("name", "other")
    assert doc.diff().startswith("--- cluster.yaml (on disk)\n+++ cluster.yaml (after)\n")
    bad = SpecDocument.parse("apiVersion: npa.soperator/v0.0.1\nname: x\n")
    with pytest.raises(SpecError, match=r"<spec>:"):
        bad.validated_text()


def test_reading_a_file_that_is_not_text_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "bin.yaml"
    path.write_bytes(b"name: \xff\xfe\n")
    with pytest.raises(SpecError) as caught:
        SpecDocument.read(path)
    assert str(path) in str(caught.value)
