"""spec/model.py's calls for code written against npa's SDK dataclasses: positional
arguments in the dataclasses' field order, the flat control-plane keywords
(`system_min_size=`, `login_preset=`, …), and the dataclass methods (`validate()`,
`effective_slurm_rest_enabled()`, `explicit_root_login_ssh_public_key()`)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from npa_sop_tui.spec.model import (
    FLAT_CONTROL_PLANE,
    ControlPlaneSpec,
    SoperatorSpec,
    SpecError,
    SystemSpec,
    WorkerPoolSpec,
)

CPU = WorkerPoolSpec(name="cpu", platform="cpu-d3", preset="16vcpu-64gb", size=2)


def test_positional_arguments_follow_the_sdk_dataclass_field_order() -> None:
    """Protects old positional calls: `SoperatorSpec("demo", "eu-north1")` and
    `WorkerPoolSpec("cpu", "cpu-d3", "8vcpu-32gb", 2)` mean what they meant in npa."""
    spec = SoperatorSpec("demo", "eu-north1", "tenant-1", "project-1")
    assert (spec.name, spec.region, spec.tenant_id, spec.project_id) == (
        "demo", "eu-north1", "tenant-1", "project-1",
    )  # fmt: skip
    pool = WorkerPoolSpec("gpu", "gpu-h100-sxm", "8gpu-128vcpu-1600gb", 4, 1024)
    assert (pool.name, pool.platform, pool.preset, pool.size, pool.boot_disk_gib) == (
        "gpu", "gpu-h100-sxm", "8gpu-128vcpu-1600gb", 4, 1024,
    )  # fmt: skip
    flat = SoperatorSpec("demo", None, None, None, None, [], 5, "4vcpu-16gb")
    assert (flat.system_min_size, flat.control_plane.system.preset) == (5, "4vcpu-16gb")


def test_too_many_or_doubled_positional_arguments_are_type_errors() -> None:
    """Protects the dataclass call errors: more positional values than fields, or a value
    given both by position and by keyword, fail like a Python call does, naming the class."""
    with pytest.raises(TypeError) as many:
        WorkerPoolSpec(*["x"] * 13)
    assert str(many.value) == "WorkerPoolSpec() takes at most 12 positional arguments (13 given)"
    with pytest.raises(TypeError) as doubled:
        SoperatorSpec("demo", name="other")
    assert str(doubled.value) == "SoperatorSpec() got multiple values for argument 'name'"


def test_a_positional_value_is_validated_like_a_keyword() -> None:
    """Protects strictness on positional calls: a number where the name goes is refused."""
    with pytest.raises(ValidationError, match="name"):
        SoperatorSpec(7)


def test_each_flat_control_plane_keyword_lands_in_its_nested_field() -> None:
    """Protects npa's flat keywords: each one sets the matching `control_plane` field, and
    the flat read-only properties read it back."""
    values = {
        "system_min_size": 4,
        "system_max_size": 30,
        "system_preset": "8vcpu-32gb",
        "controller_preset": "4vcpu-16gb",
        "login_preset": "32vcpu-128gb",
        "accounting_preset": "8vcpu-32gb",
    }
    assert set(values) == set(FLAT_CONTROL_PLANE)
    spec = SoperatorSpec(name="demo", workers=[CPU], **values)
    plane = spec.control_plane
    nested = {
        "system_min_size": plane.system.min_size,
        "system_max_size": plane.system.max_size,
        "system_preset": plane.system.preset,
        "controller_preset": plane.controller.preset,
        "login_preset": plane.login.preset,
        "accounting_preset": plane.accounting.preset,
    }
    assert nested == values
    assert (spec.system_min_size, spec.system_max_size) == (4, 30)


def test_flat_keywords_join_a_given_control_plane_and_may_not_repeat_it() -> None:
    """Protects mixing the two forms: a flat keyword adds to a `control_plane` given as a
    model or a mapping (its other values kept), and naming one value both ways is an error
    saying which two."""
    given = ControlPlaneSpec(system=SystemSpec(min_size=6))
    spec = SoperatorSpec(name="demo", control_plane=given, login_preset="32vcpu-128gb")
    assert (spec.control_plane.system.min_size, spec.control_plane.login.preset) == (
        6, "32vcpu-128gb",
    )  # fmt: skip
    as_mapping = SoperatorSpec(
        name="demo", control_plane={"system": {"max_size": 40}}, system_min_size=5
    )
    assert (as_mapping.system_min_size, as_mapping.system_max_size) == (5, 40)
    with pytest.raises(TypeError) as both:
        SoperatorSpec(name="demo", control_plane={"system": {"min_size": 6}}, system_min_size=5)
    assert (
        str(both.value) == "SoperatorSpec() got system_min_size and control_plane.system.min_size"
    )


def test_none_for_a_flat_keyword_npa_required_keeps_the_default() -> None:
    """Protects npa's dataclass defaults: `system_min_size=None` and `login_preset=None`
    (what npa's dataclass held when unset) keep the defaults, and the keywords after them
    still apply; None for an optional one (`system_preset`) is set as None."""
    spec = SoperatorSpec(
        name="demo",
        system_min_size=None,
        login_preset=None,
        system_preset=None,
        controller_preset="4vcpu-16gb",
    )
    plane = spec.control_plane
    assert (plane.system.min_size, plane.login.preset) == (3, "16vcpu-64gb")
    assert plane.system.preset is None and "preset" in plane.system.model_fields_set
    assert plane.controller.preset == "4vcpu-16gb"


def test_validate_raises_a_value_error_naming_the_spec_and_passes_a_good_one() -> None:
    """Protects npa's `spec.validate()`: a spec breaking the rules raises `SpecError` (a
    ValueError, as npa's error is) headed by the spec's name when it lists several problems;
    a good spec returns quietly."""
    SoperatorSpec(name="demo", region="eu-north1", workers=[CPU]).validate()
    small = [CPU.model_copy(update={"name": n, "boot_disk_gib": 256}) for n in ("a", "b")]
    bad = SoperatorSpec(name="demo", region="eu-north1", workers=small)
    with pytest.raises(ValueError) as refused:
        bad.validate()
    assert isinstance(refused.value, SpecError)
    assert str(refused.value).startswith("spec 'demo': invalid spec (")
    assert len([f for f in refused.value.findings if f.is_error]) >= 2


def test_rest_follows_accounting_unless_set() -> None:
    """Protects `effective_slurm_rest_enabled()`: unset, Slurm's REST API is on exactly when
    accounting is; an explicit value wins either way."""
    on = {(acc, rest): SoperatorSpec(name="d", accounting=acc, slurm_rest_enabled=rest)
          for acc in (False, True) for rest in (None, False, True)}  # fmt: skip
    assert {k: s.effective_slurm_rest_enabled() for k, s in on.items()} == {
        (False, None): False, (True, None): True,
        (False, False): False, (True, False): False,
        (False, True): True, (True, True): True,
    }  # fmt: skip


def test_the_explicit_root_key_is_the_root_key_else_the_first_legacy_key() -> None:
    """Protects `explicit_root_login_ssh_public_key()`: the root key when given, else the
    first of the legacy `ssh_public_keys`, else empty (npa resolves a key later)."""
    both = SoperatorSpec(name="d", root_login_ssh_public_key="ssh-ed25519 ROOT",
                         ssh_public_keys=["ssh-ed25519 LEGACY"])  # fmt: skip
    assert both.explicit_root_login_ssh_public_key() == "ssh-ed25519 ROOT"
    legacy = SoperatorSpec(name="d", ssh_public_keys=["ssh-ed25519 A", "ssh-ed25519 B"])
    assert legacy.explicit_root_login_ssh_public_key() == "ssh-ed25519 A"
    assert SoperatorSpec(name="d").explicit_root_login_ssh_public_key() == ""
