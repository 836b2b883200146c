"""The stand-in provider's tfplugin5 messages against the protocol itself: every field number,
wire type and repetition it builds (sandbox/nebius_provider/messages.py), and every method it
serves, checked against the table derived from hashicorp/terraform's tfplugin5.2.proto at the
commit messages.py names (tests/data/tfplugin5, made by scripts/gen_tfplugin_fields.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import descriptor_pb2

from npa_sop_tui.sandbox.nebius_provider import messages
from npa_sop_tui.sandbox.nebius_provider.server import PROVIDER_METHODS

TABLE = Path(__file__).resolve().parents[1] / "data" / "tfplugin5" / "tfplugin5.2-fields.json"
_F = descriptor_pb2.FieldDescriptorProto
SCALARS = {_F.TYPE_STRING: "string", _F.TYPE_BYTES: "bytes", _F.TYPE_BOOL: "bool",
           _F.TYPE_INT64: "int64"}  # fmt: skip
ENUMS = {"Severity", "StringKind", "NestingMode"}  # varints on the wire, like int32


@pytest.fixture(scope="module")
def proto() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(TABLE.read_text())
    return doc


def test_the_table_is_the_one_messages_py_follows(proto: dict[str, Any]) -> None:
    assert proto["commit"] in (messages.__doc__ or "")
    assert proto["source"].endswith("docs/plugin-protocol/tfplugin5.2.proto")
    assert set(messages.PROTO) == set(messages._SPEC), "every message says what it stands for"


def _proto_type(ours: str, kind: int) -> str:
    """Our field's type in the proto's words."""
    if kind == _F.TYPE_MESSAGE:
        (target,) = {p.rsplit(".", 1)[-1] if not p.startswith("map<") else p
                     for p in messages.PROTO[ours]}  # fmt: skip
        return target
    return SCALARS.get(kind, "enum")


def _checks() -> list[tuple[str, str]]:
    return [(ours, theirs) for ours, paths in messages.PROTO.items() for theirs in paths
            if not theirs.startswith("map<")]  # fmt: skip


@pytest.mark.parametrize(("ours", "theirs"), _checks(), ids=lambda v: str(v))
def test_every_field_has_the_protos_number_type_and_repetition(
    ours: str, theirs: str, proto: dict[str, Any]
) -> None:
    table = proto["messages"][theirs]
    for name, number, kind, repeated, type_name in messages._SPEC[ours]:
        assert name in table, f"{ours}.{name}: {theirs} has no such field"
        field = table[name]
        assert field["number"] == number, f"{ours}.{name}: number {number}, proto {field}"
        proto_type = field["type"]
        if proto_type.startswith("map<"):  # the map's wire form: repeated entries
            assert repeated and type_name == "SchemaEntry", (ours, name)
            assert messages.PROTO[type_name] == (proto_type,)
            continue
        assert field["repeated"] == repeated, f"{ours}.{name}: repeated {repeated}, {field}"
        if kind == _F.TYPE_INT32:
            assert proto_type in ENUMS, (ours, name, proto_type)
            continue
        expected = _proto_type(type_name, kind) if kind == _F.TYPE_MESSAGE else SCALARS[kind]
        assert proto_type.rsplit(".", 1)[-1] == expected, f"{ours}.{name}: {proto_type}"


def test_the_map_entry_is_a_string_key_and_a_schema_value() -> None:
    entry = {f[0]: f[1:] for f in messages._SPEC["SchemaEntry"]}
    assert entry == {"key": (1, _F.TYPE_STRING, False, ""),
                     "value": (2, _F.TYPE_MESSAGE, False, "Schema")}  # fmt: skip


def test_every_method_served_is_the_protos_with_its_request_and_response(
    proto: dict[str, Any],
) -> None:
    service = proto["services"]["Provider"]
    for method, (request, response) in PROVIDER_METHODS.items():
        assert method in service, f"{method} is not a tfplugin5 Provider method"
        wanted_request, wanted_response = service[method]
        assert wanted_request in messages.PROTO[request], (method, request, wanted_request)
        assert wanted_response in messages.PROTO[response], (method, response, wanted_response)
    assert set(service) == set(PROVIDER_METHODS)  # protocol 5.2: nothing left out


def test_a_wrong_number_would_be_caught(proto: dict[str, Any]) -> None:
    """The check is real: a field moved to another number no longer matches the table."""
    table = proto["messages"]["ReadResource.Response"]
    (name, number, *_), *_ = messages._SPEC["ReadResponse"]
    assert table[name]["number"] == number and table[name]["number"] != number + 1
    assert re.fullmatch(r"[0-9a-f]{40}", proto["commit"])
