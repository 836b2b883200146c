"""capacity.py: run-time reservations from `--capacity-block-group` and the environment;
errors never echo an ID."""

from __future__ import annotations

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from npa_sop_tui.errors import UsageError
from npa_sop_tui.home.capacity import CAPACITY_ENV, capacity_from_env, parse_capacity_assignments

A, B = "capacityblockgroup-e00aaaa1111", "capacityblockgroup-e00bbbb2222"


def test_flag_values_and_the_environment_give_the_same_mapping() -> None:
    assert parse_capacity_assignments([f"gpu={A}", f" big = {B} "]) == {"gpu": A, "big": B}
    assert capacity_from_env({CAPACITY_ENV: f"gpu={A}, ,big={B}"}) == {"gpu": A, "big": B}
    assert capacity_from_env({}) == {} and parse_capacity_assignments(None) == {}


def test_the_same_assignment_twice_is_fine() -> None:
    assert parse_capacity_assignments([f"gpu={A}", f"gpu={A}"]) == {"gpu": A}


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ([A], "must look like POOL=ID"),
        ([f"={A}"], "must look like POOL=ID"),
        (["gpu="], "must look like POOL=ID"),
        (["gpu=e00-not-an-id-secret"], "is not an ID"),
        ([f"gpu={A}", f"gpu={B}"], "two different capacity block groups"),
    ],
)
def test_bad_assignments_say_what_is_wrong_and_never_echo_the_id(
    values: list[str], message: str
) -> None:
    with pytest.raises(UsageError) as caught:
        parse_capacity_assignments(values)
    err = caught.value
    assert message in err.message and err.exit_code == 2
    shown = f"{err.message} {err.hint or ''}"
    for secret in (A, B, "e00-not-an-id-secret"):
        assert secret not in shown


def test_errors_name_where_the_value_came_from() -> None:
    with pytest.raises(UsageError) as caught:
        capacity_from_env({CAPACITY_ENV: "gpu"})
    assert caught.value.message.startswith(CAPACITY_ENV)
    assert f"{CAPACITY_ENV}=gpu=" in (caught.value.hint or "")
    with pytest.raises(UsageError) as caught:
        parse_capacity_assignments(["gpu"])
    assert caught.value.message.startswith("--capacity-block-group")


@given(st.text(alphabet=string.ascii_letters + string.digits + "é-_.", min_size=1, max_size=12))
def test_every_capacity_id_accepted_is_one_redaction_masks(body: str) -> None:
    """The ID's shape and the redaction pattern are one fact: an ID npa takes at run time
    is masked wherever it turns up, known to the process or not."""
    from npa_sop_tui.redact import Redactor

    ident = f"capacityblockgroup-{body}"
    try:
        parse_capacity_assignments([f"gpu={ident}"])
    except UsageError as exc:
        assert ident not in exc.render()  # refused without echoing it
        return
    assert Redactor(environ={}).text(f"id {ident} end") == "id *** end"
