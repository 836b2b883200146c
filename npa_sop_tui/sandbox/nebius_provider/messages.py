"""The protobuf messages of Terraform's plugin protocol 5, built in Python (no generated code).

Field numbers and wire types follow hashicorp/terraform `docs/plugin-protocol/tfplugin5.2.proto`
(commit 9119760c4ffde8815d4e8e60a3d3f09b0e93ddb3; the 5.2 protocol Terraform 1.0.x speaks, and
later 5.x minor versions only add fields, which protobuf skips). Only the wire matters to gRPC,
so nested messages (`GetProviderSchema.Response`, …) have flat names here (`PROTO` says which
message of the proto each stands for), and the `map<string, Schema>` fields are declared as
their wire form: repeated key(1)/value(2) entries. A test checks every field here against a
table derived from that proto (tests/data/tfplugin5, scripts/gen_tfplugin_fields.py).
The go-plugin health check is grpc.health.v1 (`HealthCheckResponse.status` = 1, SERVING = 1).
"""

from __future__ import annotations

from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

_F = descriptor_pb2.FieldDescriptorProto
PACKAGE = "npa.tfplugin5"  # our own package name: message names never reach the wire

# (field, number, type, repeated?, message type) per message
_STR, _BYTES, _BOOL, _I64, _ENUM = (
    _F.TYPE_STRING,
    _F.TYPE_BYTES,
    _F.TYPE_BOOL,
    _F.TYPE_INT64,
    _F.TYPE_INT32,
)
_MSG = _F.TYPE_MESSAGE
_SPEC: dict[str, list[tuple[str, int, int, bool, str]]] = {
    "DynamicValue": [("msgpack", 1, _BYTES, False, ""), ("json", 2, _BYTES, False, "")],
    "Step": [("attribute_name", 1, _STR, False, "")],
    "AttributePath": [("steps", 1, _MSG, True, "Step")],
    "Diagnostic": [
        ("severity", 1, _ENUM, False, ""),  # enum on the wire is a varint: 1 ERROR, 2 WARNING
        ("summary", 2, _STR, False, ""),
        ("detail", 3, _STR, False, ""),
        ("attribute", 4, _MSG, False, "AttributePath"),
    ],
    "Attribute": [
        ("name", 1, _STR, False, ""),
        ("type", 2, _BYTES, False, ""),
        ("description", 3, _STR, False, ""),
        ("required", 4, _BOOL, False, ""),
        ("optional", 5, _BOOL, False, ""),
        ("computed", 6, _BOOL, False, ""),
        ("sensitive", 7, _BOOL, False, ""),
    ],
    "Block": [
        ("version", 1, _I64, False, ""),
        ("attributes", 2, _MSG, True, "Attribute"),
        ("description", 4, _STR, False, ""),
    ],
    "Schema": [("version", 1, _I64, False, ""), ("block", 2, _MSG, False, "Block")],
    "SchemaEntry": [("key", 1, _STR, False, ""), ("value", 2, _MSG, False, "Schema")],
    "Empty": [],
    "GetSchemaResponse": [
        ("provider", 1, _MSG, False, "Schema"),
        ("resource_schemas", 2, _MSG, True, "SchemaEntry"),
        ("data_source_schemas", 3, _MSG, True, "SchemaEntry"),
        ("diagnostics", 4, _MSG, True, "Diagnostic"),
        ("provider_meta", 5, _MSG, False, "Schema"),
    ],
    "ConfigRequest": [("config", 1, _MSG, False, "DynamicValue")],  # PrepareProviderConfig
    "PrepareConfigResponse": [
        ("prepared_config", 1, _MSG, False, "DynamicValue"),
        ("diagnostics", 2, _MSG, True, "Diagnostic"),
    ],
    "TypedConfigRequest": [  # ValidateResourceTypeConfig, ValidateDataSourceConfig
        ("type_name", 1, _STR, False, ""),
        ("config", 2, _MSG, False, "DynamicValue"),
    ],
    "DiagnosticsResponse": [("diagnostics", 1, _MSG, True, "Diagnostic")],
    "RawState": [("json", 1, _BYTES, False, "")],
    "UpgradeRequest": [
        ("type_name", 1, _STR, False, ""),
        ("version", 2, _I64, False, ""),
        ("raw_state", 3, _MSG, False, "RawState"),
    ],
    "UpgradeResponse": [
        ("upgraded_state", 1, _MSG, False, "DynamicValue"),
        ("diagnostics", 2, _MSG, True, "Diagnostic"),
    ],
    "ConfigureRequest": [
        ("terraform_version", 1, _STR, False, ""),
        ("config", 2, _MSG, False, "DynamicValue"),
    ],
    "ReadRequest": [
        ("type_name", 1, _STR, False, ""),
        ("current_state", 2, _MSG, False, "DynamicValue"),
        ("private", 3, _BYTES, False, ""),
    ],
    "ReadResponse": [
        ("new_state", 1, _MSG, False, "DynamicValue"),
        ("diagnostics", 2, _MSG, True, "Diagnostic"),
        ("private", 3, _BYTES, False, ""),
    ],
    "PlanRequest": [
        ("type_name", 1, _STR, False, ""),
        ("prior_state", 2, _MSG, False, "DynamicValue"),
        ("proposed_new_state", 3, _MSG, False, "DynamicValue"),
        ("config", 4, _MSG, False, "DynamicValue"),
        ("prior_private", 5, _BYTES, False, ""),
    ],
    "PlanResponse": [
        ("planned_state", 1, _MSG, False, "DynamicValue"),
        ("requires_replace", 2, _MSG, True, "AttributePath"),
        ("planned_private", 3, _BYTES, False, ""),
        ("diagnostics", 4, _MSG, True, "Diagnostic"),
    ],
    "ApplyRequest": [
        ("type_name", 1, _STR, False, ""),
        ("prior_state", 2, _MSG, False, "DynamicValue"),
        ("planned_state", 3, _MSG, False, "DynamicValue"),
        ("config", 4, _MSG, False, "DynamicValue"),
        ("planned_private", 5, _BYTES, False, ""),
    ],
    "ApplyResponse": [
        ("new_state", 1, _MSG, False, "DynamicValue"),
        ("private", 2, _BYTES, False, ""),
        ("diagnostics", 3, _MSG, True, "Diagnostic"),
    ],
    "ImportRequest": [("type_name", 1, _STR, False, ""), ("id", 2, _STR, False, "")],
    "ImportedResource": [
        ("type_name", 1, _STR, False, ""),
        ("state", 2, _MSG, False, "DynamicValue"),
        ("private", 3, _BYTES, False, ""),
    ],
    "ImportResponse": [
        ("imported_resources", 1, _MSG, True, "ImportedResource"),
        ("diagnostics", 2, _MSG, True, "Diagnostic"),
    ],
    "ReadDataRequest": [
        ("type_name", 1, _STR, False, ""),
        ("config", 2, _MSG, False, "DynamicValue"),
    ],
    "ReadDataResponse": [
        ("state", 1, _MSG, False, "DynamicValue"),
        ("diagnostics", 2, _MSG, True, "Diagnostic"),
    ],
    "StopResponse": [("Error", 1, _STR, False, "")],
}


# Which messages of tfplugin5.2.proto each of the above stands for (the same fields on the
# wire); `SchemaEntry` is the wire form of the proto's `map<string, Schema>`.
PROTO: dict[str, tuple[str, ...]] = {
    "DynamicValue": ("DynamicValue",),
    "Step": ("AttributePath.Step",),
    "AttributePath": ("AttributePath",),
    "Diagnostic": ("Diagnostic",),
    "Attribute": ("Schema.Attribute",),
    "Block": ("Schema.Block",),
    "Schema": ("Schema",),
    "SchemaEntry": ("map<string, Schema>",),
    "Empty": ("GetProviderSchema.Request", "Stop.Request"),
    "GetSchemaResponse": ("GetProviderSchema.Response",),
    "ConfigRequest": ("PrepareProviderConfig.Request",),
    "PrepareConfigResponse": ("PrepareProviderConfig.Response",),
    "TypedConfigRequest": ("ValidateResourceTypeConfig.Request",
                           "ValidateDataSourceConfig.Request"),
    "DiagnosticsResponse": ("ValidateResourceTypeConfig.Response",
                            "ValidateDataSourceConfig.Response", "Configure.Response"),
    "RawState": ("RawState",),
    "UpgradeRequest": ("UpgradeResourceState.Request",),
    "UpgradeResponse": ("UpgradeResourceState.Response",),
    "ConfigureRequest": ("Configure.Request",),
    "ReadRequest": ("ReadResource.Request",),
    "ReadResponse": ("ReadResource.Response",),
    "PlanRequest": ("PlanResourceChange.Request",),
    "PlanResponse": ("PlanResourceChange.Response",),
    "ApplyRequest": ("ApplyResourceChange.Request",),
    "ApplyResponse": ("ApplyResourceChange.Response",),
    "ImportRequest": ("ImportResourceState.Request",),
    "ImportedResource": ("ImportResourceState.ImportedResource",),
    "ImportResponse": ("ImportResourceState.Response",),
    "ReadDataRequest": ("ReadDataSource.Request",),
    "ReadDataResponse": ("ReadDataSource.Response",),
    "StopResponse": ("Stop.Response",),
}  # fmt: skip


def _build() -> dict[str, Any]:
    file = descriptor_pb2.FileDescriptorProto(
        name="npa_tfplugin5.proto", package=PACKAGE, syntax="proto3"
    )
    for name, fields in _SPEC.items():
        message = file.message_type.add(name=name)
        for field, number, kind, repeated, type_name in fields:
            entry = message.field.add(name=field, number=number, type=kind)
            entry.label = _F.LABEL_REPEATED if repeated else _F.LABEL_OPTIONAL
            if type_name:
                entry.type_name = f".{PACKAGE}.{type_name}"
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return {
        name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{PACKAGE}.{name}"))
        for name in _SPEC
    }


M: dict[str, Any] = _build()

ERROR, WARNING = 1, 2  # Diagnostic.Severity
HEALTH_SERVING = b"\x08\x01"  # grpc.health.v1.HealthCheckResponse{status: SERVING}
