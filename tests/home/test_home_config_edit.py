"""config_edit.py: one setting changed in a hand-written config.yaml, everything else kept
(comments, key order, flow style); a file it cannot read as a mapping is left untouched with
a usage error (exit 2) that names the file and the setting."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
import yaml

from npa_sop_tui.errors import EXIT_BAD_INPUT, UsageError
from npa_sop_tui.home.config_edit import set_config_value

HAND_WRITTEN = """\
# my npa settings
region: eu-north1   # where I deploy
tui: { theme: null }
login:
  host: 10.0.0.5
"""


def test_a_missing_file_is_created_private_with_the_nested_setting(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    set_config_value(path, ("tui", "theme"), "nord")
    assert yaml.safe_load(path.read_text()) == {"tui": {"theme": "nord"}}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_an_empty_file_is_treated_as_no_settings(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("\n  \n")
    set_config_value(path, ("tui", "theme"), "nord")
    assert yaml.safe_load(path.read_text()) == {"tui": {"theme": "nord"}}


def test_the_hand_written_rest_survives_the_edit(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(HAND_WRITTEN)
    set_config_value(path, ("tui", "theme"), "nord")
    # comments, key order and the flow mapping stay (ruamel drops the braces' inner spaces)
    assert path.read_text() == HAND_WRITTEN.replace("{ theme: null }", "{theme: nord}")


def test_a_missing_intermediate_mapping_is_added_after_the_existing_keys(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("region: eu-north1\n")
    set_config_value(path, ("a", "b", "c"), 3)
    assert path.read_text().startswith("region: eu-north1\n")
    assert yaml.safe_load(path.read_text()) == {"region": "eu-north1", "a": {"b": {"c": 3}}}


def test_a_scalar_where_a_mapping_belongs_is_replaced_by_one(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("tui: dark\nregion: x\n")
    set_config_value(path, ("tui", "theme"), "nord")
    assert yaml.safe_load(path.read_text()) == {"tui": {"theme": "nord"}, "region": "x"}


def test_a_top_level_key_is_set_in_place(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("region: old  # keep me\nother: 1\n")
    set_config_value(path, ("region",), "eu-west1")
    first, second = path.read_text().splitlines()
    assert first.split() == ["region:", "eu-west1", "#", "keep", "me"] and second == "other: 1"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("- a\n- b\n", "the file is not a mapping"),
        ("just a string\n", "the file is not a mapping"),
        ("tui: [unclosed\n", "config.yaml:2:1 invalid YAML"),  # file:line of the fault
        ("a: &x [*x]\n", "recursive YAML alias"),  # refused before ruamel builds anything
    ],
    ids=["list", "scalar", "broken-yaml", "recursive-alias"],
)
def test_a_file_that_is_not_a_mapping_is_left_alone_with_a_usage_error(
    tmp_path: Path, text: str, says: str
) -> None:
    path = tmp_path / "edited" / "config.yaml"
    path.parent.mkdir()
    path.write_text(text)
    with pytest.raises(UsageError) as caught:
        set_config_value(path, ("tui", "theme"), "nord")
    assert str(path) in str(caught.value) and says in str(caught.value)
    assert caught.value.exit_code == EXIT_BAD_INPUT == 2
    assert path.read_text() == text  # nothing lost, nothing half-written
    assert [p.name for p in path.parent.iterdir()] == ["config.yaml"]  # no temp file left


def test_invalid_yaml_says_where_and_how_to_fix_it(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("region: x\ntui: {theme: [\n")
    with pytest.raises(UsageError) as caught:
        set_config_value(path, ("tui", "theme"), "nord")
    assert f"{path}:3:1 invalid YAML" in caught.value.render()
    assert "hint: fix the YAML syntax" in caught.value.render()


def test_a_folder_in_the_file_s_place_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.mkdir()
    with pytest.raises(UsageError, match="is a folder"):
        set_config_value(path, ("tui", "theme"), "nord")
    assert path.is_dir()


def test_a_file_the_existing_npa_wrote_is_never_rewritten(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    text = "projects:\n  dev: {project_id: project-e00dev}\ndefault_project: dev\n"
    path.write_text(text)
    with pytest.raises(UsageError) as caught:
        set_config_value(path, ("tui", "theme"), "nord")
    assert "existing npa's settings (projects, default_project)" in caught.value.message
    assert "set tui.theme to 'nord'" in (caught.value.hint or "")
    assert path.read_text() == text
