"""What each wizard field does to the spec mapping (tui/widgets/wizard/form_edits.py): a
field still showing a default the file did not set writes nothing, an emptied field removes
its key, and no other key is touched."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from npa_sop_tui.tui.widgets.wizard.form_edits import (
    FIELD_IDS,
    edit_field,
    preset_options,
    worker_count,
)


def _data(**extra: Any) -> dict[str, Any]:
    return {"name": "c", "control_plane": {}, "workers": [], "unknown_key": [1, 2], **extra}


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("sys-min", "3", {}),  # the default shown for a file without it: no change
        ("sys-min", "5", {"system": {"min_size": 5}}),
        ("sys-max", "30", {"system": {"max_size": 30}}),
        ("sys-max", "", {}),
        ("sys-min", "x", {}),
        ("sys-preset", "cpu-d3:8vcpu-32gb", {"system": {"preset": "cpu-d3:8vcpu-32gb"}}),
        ("ctl-preset", None, {"controller": {}}),
        ("login-preset", "p", {"login": {"preset": "p"}}),
    ],
)
def test_control_plane_fields(field: str, value: Any, expected: dict[str, Any]) -> None:
    data = _data()
    edit_field(data, field, value)
    assert data["control_plane"] == expected
    assert data["unknown_key"] == [1, 2]


def test_a_set_default_stays_set_and_an_emptied_size_goes() -> None:
    data = _data(control_plane={"system": {"min_size": 3, "max_size": 9}})
    edit_field(data, "sys-min", "3")  # the file says 3: it keeps saying so
    edit_field(data, "sys-max", " ")
    assert data["control_plane"] == {"system": {"min_size": 3}}
    edit_field(data, "sys-preset", None)
    assert data["control_plane"]["system"] == {"min_size": 3}


@pytest.mark.parametrize(
    ("field", "value", "key", "expected"),
    [
        ("accounting", True, "accounting", True),
        ("apparmor", False, "use_default_apparmor_profile", False),
        ("rest", "on", "slurm_rest_enabled", True),
        ("rest", "off", "slurm_rest_enabled", False),
        ("operator-version", "4.1.7", "slurm_operator_version", "4.1.7"),
        ("k8s-version", " 1.31 ", "k8s_version", "1.31"),
        ("ng-version", "12", "node_group_version", "12"),
    ],
)
def test_option_fields(field: str, value: Any, key: str, expected: Any) -> None:
    data = _data()
    edit_field(data, field, value)
    assert data[key] == expected
    assert data["unknown_key"] == [1, 2]


def test_defaults_and_empty_values_remove_or_leave_keys() -> None:
    data = _data(slurm_rest_enabled=True, k8s_version="1.30", node_group_version="1")
    edit_field(data, "rest", "auto")
    edit_field(data, "k8s-version", "")
    edit_field(data, "ng-version", None)
    edit_field(data, "operator-version", "4.1.6")  # the shown default, not in the file
    edit_field(data, "operator-version", None)
    assert data == _data()
    pinned = _data(slurm_operator_version="4.1.7")
    edit_field(pinned, "operator-version", "4.1.6")  # the file names one: a real change
    assert pinned["slurm_operator_version"] == "4.1.6"


def test_every_field_id_has_an_edit() -> None:
    for field in FIELD_IDS:
        edit_field(_data(), field, None)  # none raises for a cleared value


def test_worker_count_counts_only_numeric_sizes() -> None:
    pools = [{"size": 4}, {}, {"size": "x"}, {"size": 2}]
    assert worker_count({"workers": pools}) == 7  # a pool without size is one node
    assert worker_count({}) == 0


def test_preset_options_keep_the_files_preset_even_when_insufficient() -> None:
    presets = [SimpleNamespace(name="a", vcpu=8, memory_gb=32)]
    seen: list[tuple[str, int]] = []

    def role_presets(role: str, workers: int) -> list[SimpleNamespace]:
        seen.append((role, workers))
        return presets

    cat = SimpleNamespace(role_presets=role_presets)
    assert preset_options(cat, "system", 12, "a") == [("a  (8 vCPU, 32 GB)", "a")]
    assert preset_options(cat, "login", 3, "tiny")[-1] == (
        "tiny  (not sufficient at this size)",
        "tiny",
    )
    assert preset_options(cat, "login", 3, None) == [("a  (8 vCPU, 32 GB)", "a")]
    assert seen == [("system", 12), ("login", 3), ("login", 3)]
