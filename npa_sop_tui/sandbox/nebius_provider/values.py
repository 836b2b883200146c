"""Terraform values on the wire (`DynamicValue`): MessagePack in cty's encoding.

As hashicorp/terraform `docs/plugin-protocol/object-wire-format.md` says: an object is a map
with one key per attribute, null is nil, and an unknown value is any MessagePack extension
(code 0 without refinements, 12 with them; a provider treats every code as unknown and writes
code 0). `json` is the fallback when `msgpack` is empty (also the form of a raw stored state).
"""

from __future__ import annotations

import json
from typing import Any

import msgspec


class Unknown:
    """A value decided only at apply time."""

    _instance: Unknown | None = None

    def __new__(cls) -> Unknown:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "<unknown>"


UNKNOWN = Unknown()


def _ext(code: int, data: memoryview) -> Unknown:
    return UNKNOWN


def _enc(value: Any) -> Any:
    if value is UNKNOWN:
        return msgspec.msgpack.Ext(0, b"\x00")  # fixext1 d4 00 00, the bytes cty writes
    raise NotImplementedError(f"cannot encode {type(value).__name__}")


_decoder = msgspec.msgpack.Decoder(ext_hook=_ext)
_encoder = msgspec.msgpack.Encoder(enc_hook=_enc)


def decode(dynamic: Any) -> Any:
    """A `DynamicValue` message as Python: dict/list/str/int/float/bool/None/UNKNOWN."""
    if dynamic.msgpack:
        return _decoder.decode(dynamic.msgpack)
    if dynamic.json:
        return json.loads(dynamic.json)
    return None


def encode(value: Any) -> bytes:
    """MessagePack bytes for a `DynamicValue.msgpack` field."""
    return _encoder.encode(value)
