"""The shapes of identifiers (spec/identity.py): what each kind accepts, and the message that
names the field, the value and the shape for anything else."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from npa_sop_tui.spec.identity import (
    MAX_ID_LENGTH,
    MAX_PROFILE_LENGTH,
    MAX_REGION_LENGTH,
    identifier_problem,
    identity_shape_problems,
)

ACCEPTED = [
    ("region", "eu-north1"),
    ("region", "us-central1"),
    ("state.region", "me-west1"),
    ("tenant_id", "tenant-e00abc123"),
    ("tenant_id", "tenant-from-env"),
    ("project_id", "project-e00alpha"),
    ("subnet_id", "vpcsubnet-sandbox-team-alpha"),
    ("state.service_account_id", "serviceaccount-e00ci"),
    ("profile", "dev"),
    ("profile", "team.prod@eu"),
    ("project", "project-e00alpha"),  # `--project` takes an ID
    ("project", "team-alpha"),  # or the alias of a `projects:` section
    ("fleet.targets.state.region", "eu-north1"),  # the last part of the field names the kind
]
REFUSED = [
    ("region", "../../tmp/victim", "is not a region name"),
    ("region", "eu-north1\nfake", "is not a region name"),
    ("region", "EU-north1", "is not a region name"),
    ("region", "eu--north1", "is not a region name"),
    ("region", "", "is not a region name"),
    ("region", "e" * 64, "is not a region name"),
    ("project_id", "project-e00\nregion x", "is not an ID"),
    ("project_id", "project-", "is not an ID"),
    ("project_id", "project-a/../b", "is not an ID"),
    ("project_id", "project-" + "a" * 130, "is not an ID"),
    ("project_id", "tenant-x", "must start with 'project-'"),
    ("subnet_id", "subnet-1", "must start with 'vpcsubnet-'"),
    ("state.service_account_id", "sa-1", "must start with 'serviceaccount-'"),
    ("profile", "../x", "is not one word"),
    ("profile", "a b", "is not one word"),
    ("profile", "-x", "is not one word"),
    ("project", "../x", "is not a project ID (project-e00…) or the alias"),
    ("project", "a b", "is not a project ID"),
    ("fleet.targets.state.region", "../x", "is not a region name"),
]


@pytest.mark.parametrize(("field", "value"), ACCEPTED)
def test_identifiers_of_their_shape_are_accepted(field: str, value: str) -> None:
    assert identifier_problem(field, value) is None


@pytest.mark.parametrize(("field", "value", "message"), REFUSED)
def test_anything_else_names_the_field_the_value_and_the_shape(
    field: str, value: str, message: str
) -> None:
    problem = identifier_problem(field, value)
    assert problem is not None and problem.startswith(f"{field} {value!r} ") and message in problem


def test_a_value_that_is_not_text_is_refused_and_an_unknown_field_is_a_bug() -> None:
    assert identifier_problem("region", 3) == "region must be text, got int"
    with pytest.raises(KeyError) as caught:
        identifier_problem("spec.colour", "red")
    assert caught.value.args == ("spec.colour",)  # the bug names the field it met


@pytest.mark.parametrize(
    ("field", "prefix", "limit"),
    [
        ("region", "", MAX_REGION_LENGTH),
        ("profile", "", MAX_PROFILE_LENGTH),
        ("project", "", MAX_ID_LENGTH),
        ("project_id", "project-", MAX_ID_LENGTH),
    ],
)
def test_an_identifier_may_be_as_long_as_its_limit_and_not_a_character_more(
    field: str, prefix: str, limit: int
) -> None:
    def of_length(n: int) -> str:
        return prefix + "a" * (n - len(prefix))

    assert identifier_problem(field, of_length(limit)) is None
    assert identifier_problem(field, of_length(limit + 1)) is not None


def test_a_malformed_id_is_told_the_shape_of_its_own_kind() -> None:
    problem = identifier_problem("subnet_id", "vpcsubnet-A_B")
    assert problem is not None and "(e.g. vpcsubnet-e00abc123)" in problem


def test_identity_shape_problems_checks_what_is_set() -> None:
    values = {"region": "../x", "tenant_id": None, "project_id": "project-ok", "subnet_id": "x"}
    assert [field for field, _ in identity_shape_problems(values)] == ["region", "subnet_id"]


@given(st.text(max_size=20))
def test_no_accepted_identifier_can_name_another_place_or_break_a_line(text: str) -> None:
    for field in ("region", "project_id", "profile"):
        value = text if field != "project_id" else f"project-{text}"
        if identifier_problem(field, value) is None:
            assert "/" not in value and value.isprintable()  # no separator: one path part
            assert not value.startswith("-") and " " not in value
