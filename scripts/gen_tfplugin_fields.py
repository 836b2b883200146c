"""Derive the field table of Terraform's plugin protocol 5 from its .proto file: every
message (nested ones by their dotted path), each field's number, type and whether it repeats,
and the Provider service's methods with their request and response messages.

    python scripts/gen_tfplugin_fields.py tfplugin5.2.proto COMMIT > \
        tests/data/tfplugin5/tfplugin5.2-fields.json

The .proto is hashicorp/terraform `docs/plugin-protocol/tfplugin5.2.proto` at COMMIT (the
protocol Terraform 1.0.x speaks). tests/sandbox/test_sandbox_nebius_provider_messages.py
checks every field the stand-in provider builds (sandbox/nebius_provider/messages.py) against
the table, so a wrong number cannot pass unnoticed.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

_TOKEN = re.compile(r"//[^\n]*|[{};=<>,()]|[A-Za-z_][A-Za-z0-9_.]*|\d+|\"[^\"]*\"")


def parse(text: str) -> dict[str, Any]:
    tokens = [t for t in _TOKEN.findall(text) if not t.startswith("//")]
    messages: dict[str, dict[str, Any]] = {}
    services: dict[str, dict[str, list[str]]] = {}
    stack: list[tuple[str, str]] = []  # (kind, name) of the open blocks
    i = 0

    def path() -> str:
        return ".".join(name for kind, name in stack if kind == "message")

    while i < len(tokens):
        tok = tokens[i]
        if tok in ("message", "enum", "service", "oneof") and tokens[i + 2] == "{":
            stack.append((tok, tokens[i + 1]))
            if tok == "message":
                messages[path()] = {}
            elif tok == "service":
                services[tokens[i + 1]] = {}
            i += 3
        elif tok == "}":
            stack.pop()
            i += 1
        elif tok == "rpc":  # rpc Name ( Req ) returns ( Resp ) ;
            name, req, resp = tokens[i + 1], tokens[i + 3], tokens[i + 7]
            services[stack[-1][1]][name] = [req, resp]
            i += 9
        elif stack and stack[-1][0] in ("message", "oneof") and tok not in ("syntax", "package"):
            repeated = tok == "repeated"
            if repeated:
                i += 1
            if tokens[i] == "map":  # map < K , V > name = N ;
                kind = f"map<{tokens[i + 2]}, {tokens[i + 4]}>"
                name, number, i = tokens[i + 6], int(tokens[i + 8]), i + 10
            else:
                kind, name, number, i = tokens[i], tokens[i + 1], int(tokens[i + 3]), i + 5
            messages[path()][name] = {"number": number, "type": kind, "repeated": repeated}
        elif stack and stack[-1][0] == "enum":
            i += 4 if tokens[i + 1] == "=" else 1  # NAME = N ;
        else:
            i += 1
    return {"messages": messages, "services": services}


def main(argv: list[str]) -> int:
    source, commit = Path(argv[0]), argv[1]
    doc = {
        "source": "hashicorp/terraform docs/plugin-protocol/tfplugin5.2.proto",
        "commit": commit,
        **parse(source.read_text()),
    }
    json.dump(doc, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
