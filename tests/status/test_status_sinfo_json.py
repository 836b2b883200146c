"""`sinfo --json` of every layout Slurm prints (status/sinfo_json.py): the release read from
either `meta` spelling, v0.0.39/40 flat nodes with list states and object reasons, the
format name of each plugin, and errors that say what is wrong instead of crashing."""

from __future__ import annotations

import json

import pytest

from npa_sop_tui.status.sinfo_json import parse_sinfo_json
from npa_sop_tui.status.slurm import SinfoParseError


def _flat(meta: dict[str, object], **node: object) -> str:
    return json.dumps({"meta": meta, "nodes": [{"name": "w-0", **node}]})


@pytest.mark.parametrize(
    ("slurm", "release"),
    [
        # v0.0.38 (22.05) spells it `Slurm` and gives the parts; the release string wins
        ({"Slurm": {"version": {"major": 22, "minor": 5, "micro": 9}, "release": ""}}, "22.05.9"),
        ({"slurm": {"version": {"major": "23", "minor": "2", "micro": "7"}}}, "23.02.7"),
        (
            {"slurm": {"version": {"major": 23, "minor": 2, "micro": 7}, "release": "23.02.6"}},
            "23.02.6",
        ),
        # a part missing or empty: no release rather than a wrong one
        ({"Slurm": {"version": {"major": 22, "minor": 5, "micro": ""}}}, None),
        ({"Slurm": {"version": {"major": 22, "micro": 1}}}, None),
        ({"Slurm": {"version": {"minor": 5, "micro": 1}}}, None),
        ({"Slurm": {"version": {"major": 22, "minor": 5}}}, None),
        ({"Slurm": {"version": "22.05.9"}}, None),
    ],
)
def test_the_release_from_either_meta_spelling_and_its_parts(
    slurm: dict[str, object], release: str | None
) -> None:
    assert parse_sinfo_json(_flat(slurm, state="idle")).version == release


def test_a_flat_node_with_a_state_list_and_an_object_reason() -> None:
    # v0.0.39/40: `state` is already a list and `reason` an object, as in v0.0.41+
    reason = {"description": "bad gpu", "time": 1700000000, "user": "root"}
    text = _flat({}, state=["IDLE", "DRAIN"], state_flags=["NOT_RESPONDING"], reason=reason)
    (node,) = parse_sinfo_json(text).nodes
    assert (node.state, node.flags, node.reason) == (
        "drained",
        ["DRAIN", "NOT_RESPONDING"],
        "bad gpu",
    )
    (node,) = parse_sinfo_json(_flat({}, state=[], reason={"time": 0})).nodes
    assert (node.state, node.reason) == ("unknown", None)


def test_groups_under_the_v0038_plugin_name_no_data_parser() -> None:
    meta = {"plugin": {"type": "openapi/v0.0.38"}}
    parsed = parse_sinfo_json(json.dumps({"meta": meta, "sinfo": []}))
    assert (parsed.source_format, parsed.data_parser) == ("json-v0.0.38", None)
    meta = {"plugin": {"data_parser": "data_parser/v0.0.45"}}
    parsed = parse_sinfo_json(json.dumps({"meta": meta, "sinfo": []}))
    assert (parsed.source_format, parsed.data_parser) == ("json-v0.0.45", "v0.0.45")


@pytest.mark.parametrize("errors", [5, "broken", {"error": "x"}])
def test_an_errors_field_that_is_not_a_list_is_not_read_as_errors(errors: object) -> None:
    with pytest.raises(SinfoParseError) as caught:
        parse_sinfo_json(json.dumps({"meta": {}, "errors": errors}))
    assert str(caught.value) == "sinfo --json has neither `sinfo` nor `nodes`"


def test_a_wrong_layout_says_where_the_decoder_stopped() -> None:
    with pytest.raises(SinfoParseError) as caught:
        parse_sinfo_json('{"sinfo": [{"nodes": {"nodes": "w-0"}}]}')
    assert str(caught.value) == (
        "sinfo --json is not laid out as Slurm prints it: "
        "Expected `array | null`, got `str` - at `$.sinfo[0].nodes.nodes`"
    )
