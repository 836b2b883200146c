#!/usr/bin/env python3
"""Derive a recipe contract from upstream `soperator/installations/example` files.

    python scripts/gen_recipe_contract.py --commit <40-hex SHA> --dir <folder> [--out DIR]

`<folder>` holds that commit's `variables.tf` and `main.tf` (and, when available,
`terraform.tf` and `terraform.tfvars`). The output, `<out>/<commit>.json`, is data the
renderer checks its output against (npa_sop_tui/recipe/contract.py):

- every declared variable: its HCL type as a tree (with `optional()` attributes and their
  defaults), whether it is required (no default), its default, and nullability;
- the validation rules that are plain enumerations (`contains([...], var.x)`) or prefixes
  (`startswith(var.x, "…")`);
- from main.tf: which nullable variables (or nullable attributes of them) it dereferences
  without a null guard, and under which flag (e.g. only when `accounting_enabled`);
- from terraform.tf: `required_version`; from terraform.tfvars: the Soperator version.

python-hcl2 is needed here only (the `test` extra); the generated JSON is what ships.
Whole upstream files sometimes fail to parse in python-hcl2 (a line inside parentheses that
starts with `?` or `||` after a blank or comment line), so blank and comment lines are dropped
first and each `variable` block is parsed on its own.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

REPOSITORY = "nebius/nebius-solutions-library"
EXAMPLE_PATH = "soperator/installations/example"

# ---------------------------------------------------------------------------------------------
# Source text


def strip_comments(text: str) -> str:
    """Drop blank and full-line comment lines (outside heredocs) and trailing `#` comments."""
    lines: list[str] = []
    heredoc: str | None = None
    for line in text.splitlines():
        if heredoc is not None:
            lines.append(line)
            if line.strip() == heredoc:
                heredoc = None
            continue
        marker = re.search(r"<<-?([A-Za-z_]+)\s*$", line)
        if marker:
            heredoc = marker.group(1)
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", "//")):
            continue
        lines.append(_drop_trailing_comment(line))
    return "\n".join(lines) + "\n"


def _drop_trailing_comment(line: str) -> str:
    in_string = False
    i = 0
    while i < len(line):
        ch = line[i]
        if ch == "\\" and in_string:
            i += 2
            continue
        if ch == '"':
            in_string = not in_string
        elif not in_string and (ch == "#" or line.startswith("//", i)):
            return line[:i].rstrip()
        i += 1
    return line


def variable_blocks(text: str) -> list[str]:
    """The top-level `variable "…" { … }` blocks of a file, each as its own text."""
    blocks: list[str] = []
    for match in re.finditer(r'(?m)^variable\s+"[^"]+"\s*\{', text):
        depth = 0
        i = match.end() - 1
        in_string = False
        while i < len(text):
            ch = text[i]
            if in_string:
                if ch == "\\":
                    i += 1
                elif ch == '"':
                    in_string = False
            elif ch == '"':
                in_string = True
            elif ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    blocks.append(text[match.start() : i + 1])
                    break
            i += 1
    return blocks


# ---------------------------------------------------------------------------------------------
# HCL type expressions → type trees

_TOKEN = re.compile(
    r'\s*(?:(?P<str>"(?:[^"\\]|\\.)*")|(?P<num>-?\d+(?:\.\d+)?)|(?P<id>[A-Za-z_][\w-]*)'
    r"|(?P<punct>[(){}\[\],=:]))"
)


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if not match or match.end() == pos:
            if text[pos:].strip() == "":
                break
            raise ValueError(f"cannot read type text at {text[pos : pos + 40]!r}")
        kind = match.lastgroup or ""
        out.append((kind, match.group(kind)))
        pos = match.end()
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.toks = _tokens(text)
        self.i = 0

    def peek(self) -> tuple[str, str]:
        return self.toks[self.i] if self.i < len(self.toks) else ("eof", "")

    def take(self, value: str | None = None) -> tuple[str, str]:
        tok = self.peek()
        if value is not None and tok[1] != value:
            raise ValueError(f"expected {value!r}, got {tok[1]!r}")
        self.i += 1
        return tok

    def type_(self) -> Any:
        kind, name = self.take()
        if kind != "id":
            raise ValueError(f"expected a type, got {name!r}")
        if name in ("string", "number", "bool", "any"):
            return name
        self.take("(")
        if name in ("list", "set", "map"):
            inner = self.type_()
            self.take(")")
            return {name: inner}
        if name == "tuple":
            self.take("[")
            items = []
            while self.peek()[1] != "]":
                items.append(self.type_())
                if self.peek()[1] == ",":
                    self.take(",")
            self.take("]")
            self.take(")")
            return {"tuple": items}
        if name == "object":
            self.take("{")
            attrs: dict[str, Any] = {}
            while self.peek()[1] != "}":
                _, attr = self.take()
                self.take("=")
                attrs[attr] = self.attribute()
                if self.peek()[1] == ",":
                    self.take(",")
            self.take("}")
            self.take(")")
            return {"object": attrs}
        raise ValueError(f"unknown type constructor {name!r}")

    def attribute(self) -> dict[str, Any]:
        if self.peek() == ("id", "optional"):
            self.take()
            self.take("(")
            inner = self.type_()
            out: dict[str, Any] = {"type": inner, "optional": True}
            if self.peek()[1] == ",":
                self.take(",")
                out["default"] = self.value()
            self.take(")")
            return out
        return {"type": self.type_(), "optional": False}

    def value(self) -> Any:
        kind, text = self.take()
        if kind == "str":
            return json.loads(text)
        if kind == "num":
            return float(text) if "." in text else int(text)
        if kind == "id":
            return {"true": True, "false": False, "null": None}.get(text, text)
        if text == "[":
            items = []
            while self.peek()[1] != "]":
                items.append(self.value())
                if self.peek()[1] == ",":
                    self.take(",")
            self.take("]")
            return items
        if text == "{":
            obj: dict[str, Any] = {}
            while self.peek()[1] != "}":
                _, key = self.take()
                self.take()  # = or :
                obj[key.strip('"')] = self.value()
                if self.peek()[1] == ",":
                    self.take(",")
            self.take("}")
            return obj
        raise ValueError(f"unexpected {text!r} in a default value")


def parse_type(text: str) -> Any:
    text = text.strip()
    if text.startswith("${") and text.endswith("}"):
        text = text[2:-1]
    parser = _Parser(text)
    tree = parser.type_()
    if parser.peek()[0] != "eof":
        raise ValueError(f"trailing text after type: {parser.peek()[1]!r}")
    return tree


# ---------------------------------------------------------------------------------------------
# Variables


_ENUM = re.compile(
    r"^\$\{\s*(?:var\.(?P<pre>\w+)\s*==\s*null\s*\|\|\s*)?contains\(\s*\[(?P<items>[^\]]*)\]\s*,"
    r"\s*var\.(?P<var>\w+)\s*\)\s*\}$"
)


def _enum(name: str, validation: dict[str, Any]) -> list[str] | None:
    match = _ENUM.match(str(validation.get("condition", "")).strip())
    if not match or match["var"] != name or (match["pre"] and match["pre"] != name):
        return None
    return [json.loads(item.strip()) for item in match["items"].split(",") if item.strip()]


def read_variables(text: str) -> dict[str, Any]:
    import hcl2
    from hcl2 import SerializationOptions

    options = SerializationOptions(
        strip_string_quotes=True,
        with_comments=False,
        explicit_blocks=False,
        preserve_heredocs=False,
    )
    out: dict[str, Any] = {}
    for block in variable_blocks(strip_comments(text)):
        parsed = hcl2.loads(block, serialization_options=options)
        for entry in parsed["variable"]:
            for name, body in entry.items():
                out[name] = _variable(name, body)
    return dict(sorted(out.items()))


def _variable(name: str, body: dict[str, Any]) -> dict[str, Any]:
    raw_type = body.get("type", "any")
    var: dict[str, Any] = {"type": parse_type(str(raw_type))}
    var["required"] = "default" not in body
    if "default" in body:
        var["default"] = _plain(body["default"])
    var["nullable"] = body.get("nullable", True) is not False
    enums = [e for v in body.get("validation", []) or [] if (e := _enum(name, v)) is not None]
    if enums:
        var["one_of"] = enums[0]
    for validation in body.get("validation", []) or []:
        prefix = re.match(
            rf'^\$\{{\s*startswith\(\s*var\.{name}\s*,\s*"([^"]+)"\s*\)\s*\}}$',
            str(validation.get("condition", "")).strip(),
        )
        if prefix:
            var["prefix"] = prefix.group(1)
    return var


def _plain(value: Any) -> Any:
    """python-hcl2 leaves some scalars as `${…}` strings; turn literals into values."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if not k.startswith("__")}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, str) and value.startswith("${") and value.endswith("}"):
        inner = value[2:-1].strip()
        if inner in ("null", "true", "false"):
            return {"null": None, "true": True, "false": False}[inner]
        try:
            return _Parser(inner).value()
        except (ValueError, IndexError):
            return value
    return value


# ---------------------------------------------------------------------------------------------
# main.tf: dereferences of nullable values without a null guard

_REF = re.compile(r"\bvar\.(\w+)((?:\.\w+)*)")
_NULL_SAFE_FUNCS = ("try", "can")
_NULL_REJECTING = ("lower", "upper", "startswith", "endswith", "trimspace", "length", "split")
_OPEN, _CLOSE = "([{", ")]}"


def nullable_paths(variables: dict[str, Any]) -> set[str]:
    """`var` or `var.attr.attr` paths that may be null given the declared types."""
    out: set[str] = set()
    for name, var in variables.items():
        if var["nullable"]:
            out.add(name)
        _walk_nullable(var["type"], name, out)
    return out


def _walk_nullable(tree: Any, path: str, out: set[str]) -> None:
    if isinstance(tree, dict) and "object" in tree:
        for attr, spec in tree["object"].items():
            sub = f"{path}.{attr}"
            if spec["optional"] and spec.get("default") is None:
                out.add(sub)
            _walk_nullable(spec["type"], sub, out)


def _mask_strings(text: str) -> str:
    """Blank out string literal text (keeping `${…}` interpolations) so brackets and `?`
    inside strings do not confuse the scanner."""
    out = list(text)
    i, in_string, depth_stack = 0, False, []
    while i < len(text):
        ch = text[i]
        if in_string:
            if ch == "\\":
                out[i] = " "
                if i + 1 < len(text):
                    out[i + 1] = " "
                i += 2
                continue
            if text.startswith("${", i):
                depth_stack.append(0)
                in_string = False
                out[i] = " "
                out[i + 1] = "("  # an interpolation behaves like a parenthesised expression
                i += 2
                continue
            if ch == '"':
                in_string = False
            else:
                out[i] = " "
        else:
            if ch == '"':
                in_string = True
            elif depth_stack:
                if ch == "{":
                    depth_stack[-1] += 1
                elif ch == "}":
                    if depth_stack[-1] == 0:
                        depth_stack.pop()
                        out[i] = ")"
                        in_string = True
                    else:
                        depth_stack[-1] -= 1
        i += 1
    return "".join(out)


def _conditions_at(text: str, pos: int) -> tuple[list[tuple[str, bool]], bool]:
    """The ternary conditions enclosing `pos` (text, True for the `then` branch), and whether
    an enclosing try()/can() makes a null harmless."""
    conditions: list[tuple[str, bool]] = []
    depth = 0
    pending_colons = 0
    frame_done = False
    i = pos - 1
    while i >= 0:
        ch = text[i]
        if ch in _CLOSE:
            depth += 1
        elif ch in _OPEN:
            if depth == 0:
                func = re.search(r"(\w+)\s*$", text[:i])
                if ch == "(" and func and func.group(1) in _NULL_SAFE_FUNCS:
                    return conditions, True
                frame_done = False
                pending_colons = 0
            else:
                depth -= 1
        elif depth == 0 and not frame_done:
            assignment = (
                ch == "=" and text[i - 1] not in "=!<>" and text[i + 1 : i + 2] not in ("=", ">")
            )
            if assignment or ch == "," or (ch == "\n" and _statement_start(text, i)):
                frame_done = True
            elif ch == ":":
                pending_colons += 1
            elif ch == "?":
                branch_then = pending_colons == 0
                if not branch_then:
                    pending_colons -= 1
                conditions.append((_condition_before(text, i), branch_then))
        i -= 1
    return conditions, False


def _statement_start(text: str, newline: int) -> bool:
    """A newline at depth 0 ends the previous statement unless the next line continues an
    expression (starts with an operator)."""
    rest = text[newline + 1 :].lstrip(" \t")
    return not rest.startswith(("?", ":", "||", "&&", "+", "-", "*", "/", "==", "!="))


def _condition_before(text: str, qmark: int) -> str:
    depth = 0
    i = qmark - 1
    while i >= 0:
        ch = text[i]
        if ch in _CLOSE:
            depth += 1
        elif ch in _OPEN:
            if depth == 0:
                break
            depth -= 1
        elif depth == 0 and (
            ch in ",?:" or (ch == "=" and text[i - 1] not in "=!<>" and text[i + 1 : i + 2] != "=")
        ):
            break
        i -= 1
    return " ".join(text[i + 1 : qmark].split())


_FLAG = re.compile(r"^\(?\s*(!?)\s*var\.([\w.]+)\s*\)?$")


def _split_top(cond: str, op: str) -> list[str]:
    parts, depth, start, i = [], 0, 0, 0
    while i < len(cond):
        ch = cond[i]
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth -= 1
        elif depth == 0 and cond.startswith(op, i):
            parts.append(cond[start:i])
            start = i + len(op)
            i += len(op)
            continue
        i += 1
    parts.append(cond[start:])
    return [
        p.strip().strip("()").strip()
        if p.strip().startswith("(") and p.strip().endswith(")")
        else p.strip()
        for p in parts
    ]


def _guard(path: str, conditions: list[tuple[str, bool]]) -> tuple[bool, list[dict[str, Any]]]:
    """(guarded, flags): guarded if a condition checks `path` against null on the safe side;
    flags are the plain boolean variables the dereference depends on. In a `then` branch
    every `&&` term holds; in an `else` branch every `||` term is false."""
    flags: list[dict[str, Any]] = []
    ref = re.escape(f"var.{path}")
    for cond, then in conditions:
        terms = _split_top(cond, "&&" if then else "||")
        for term in terms:
            wanted = "!=" if then else "=="
            if re.fullmatch(rf"(?:{ref}|try\(\s*{ref}\s*,\s*null\s*\))\s*{wanted}\s*null", term):
                return True, []
            flag = _FLAG.match(term)
            if flag:
                negated = flag.group(1) == "!"
                flags.append({"path": flag.group(2), "equals": then != negated})
    return False, flags


_BLOCK = re.compile(r"(?m)^(?:module|resource|data)\b[^{\n]*\{")
_COUNT = re.compile(r"^\s*(?:count|for_each)\s*=\s*(.+?)\s*\?", re.M)


def _block_conditions(text: str) -> list[tuple[int, int, str]]:
    """Top-level blocks created only when a condition holds (`count = cond ? 1 : 0`)."""
    out: list[tuple[int, int, str]] = []
    for match in _BLOCK.finditer(text):
        depth, i = 0, match.end() - 1
        while i < len(text):
            if text[i] == "{":
                depth += 1
            elif text[i] == "}":
                depth -= 1
                if depth == 0:
                    break
            i += 1
        body = text[match.end() : i]
        count = _COUNT.search(body)
        if count:
            out.append((match.end(), i, count.group(1).strip()))
    return out


def null_dereferences(main_tf: str, variables: dict[str, Any]) -> list[dict[str, Any]]:
    """Where main.tf reads through a value that may be null, without a guard."""
    text = _mask_strings(strip_comments(main_tf))
    nullable = nullable_paths(variables)
    found: dict[str, list[list[dict[str, Any]]]] = {}
    blocks = _block_conditions(text)
    for match in _REF.finditer(text):
        chain = [match.group(1), *[p for p in match.group(2).split(".") if p]]
        if chain[0] not in variables:
            continue
        conditions, safe = _conditions_at(text, match.start())
        if safe:
            continue
        conditions += [(cond, True) for start, end, cond in blocks if start <= match.start() < end]
        # A function such as lower() or a string template rejects a null argument, so the
        # last element counts as read through as well.
        as_argument = re.search(
            r"\b(?:" + "|".join(_NULL_REJECTING) + r")\(\s*$", text[: match.start()]
        )
        last = len(chain) + 1 if as_argument else len(chain)
        for depth in range(1, last):
            path = ".".join(chain[:depth])
            if path not in nullable:
                continue
            guarded, flags = _guard(path, conditions)
            if not guarded:
                found.setdefault(path, []).append(flags)
    out: list[dict[str, Any]] = []
    for path, sites in sorted(found.items()):
        if any(not flags for flags in sites):
            out.append({"path": path, "when": None})
            continue
        unique: list[list[dict[str, Any]]] = []
        for flags in sites:
            if flags not in unique:
                unique.append(flags)
        out.append({"path": path, "when": unique})
    return out


# ---------------------------------------------------------------------------------------------
# Other files


def required_version(terraform_tf: str) -> str | None:
    match = re.search(r'required_version\s*=\s*"([^"]+)"', terraform_tf)
    return match.group(1) if match else None


def example_version(tfvars: str) -> str | None:
    match = re.search(r'(?m)^\s*slurm_operator_version\s*=\s*"([^"]+)"', tfvars)
    return match.group(1) if match else None


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _file_note(path: Path, commit: str, form: str) -> dict[str, Any]:
    return {"commit": commit, "form": form, "sha256": _digest(path)}


def build(args: argparse.Namespace) -> dict[str, Any]:
    var_dir = args.variables_from or args.dir
    var_commit = args.variables_commit or args.commit
    variables = read_variables((var_dir / "variables.tf").read_text(encoding="utf-8"))
    for name in args.drop:
        if variables.pop(name, None) is None:
            raise SystemExit(f"--drop {name}: no such variable in {var_dir}/variables.tf")
    main_dir = args.main_from or args.dir
    main_commit = args.main_commit or args.commit
    main_tf = main_dir / "main.tf"
    derefs = null_dereferences(main_tf.read_text(encoding="utf-8"), variables)
    safe = dict(item.split("=", 1) for item in args.null_safe)
    derefs = [d for d in derefs if d["path"] not in safe]
    files: dict[str, Any] = {
        "variables.tf": _file_note(var_dir / "variables.tf", var_commit, args.variables_form),
        "main.tf": _file_note(main_tf, main_commit, "excerpt"),
    }
    tfvars = args.dir / "terraform.tfvars"
    version = args.soperator_version
    if version is None and tfvars.is_file():
        version = example_version(tfvars.read_text(encoding="utf-8"))
    return {
        "source": {
            "repository": REPOSITORY,
            "commit": args.commit,
            "path": EXAMPLE_PATH,
            "files": files,
            "dropped_variables": sorted(args.drop),
            "null_safe": safe,
        },
        "soperator_version": version,
        "terraform_required_version": args.required_version,
        "variables": variables,
        "null_dereferences": derefs,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--commit", required=True, help="the 40-hex upstream commit")
    parser.add_argument("--dir", required=True, type=Path, help="folder with that commit's files")
    parser.add_argument(
        "--variables-form",
        default="full",
        help="'full' (the file as published) or 'transcribed' (only names, types, defaults, "
        "nullable and enumerations copied out); recorded in the contract",
    )
    parser.add_argument(
        "--variables-from",
        type=Path,
        help="take variables.tf from this folder (another commit) when the commit's own file "
        "cannot be had; pair with --variables-commit and --drop",
    )
    parser.add_argument("--variables-commit", help="the commit --variables-from holds")
    parser.add_argument(
        "--drop", action="append", default=[], help="a variable the commit does not declare"
    )
    parser.add_argument("--main-from", type=Path, help="take main.tf from this folder")
    parser.add_argument("--main-commit", help="the commit --main-from holds")
    parser.add_argument(
        "--null-safe",
        action="append",
        default=[],
        metavar="PATH=EVIDENCE",
        help="a path upstream shows may be null at this commit (e.g. an upstream test)",
    )
    parser.add_argument("--soperator-version", help="when terraform.tfvars is not at hand")
    parser.add_argument("--required-version", help="terraform.tf's required_version")
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).resolve().parents[1] / "npa_sop_tui" / "recipe" / "contracts",
    )
    args = parser.parse_args(argv)
    for sha in (args.commit, args.variables_commit, args.main_commit):
        if sha is not None and not re.fullmatch(r"[0-9a-f]{40}", sha):
            parser.error(f"{sha}: commits must be full 40-hex SHAs")
    contract = build(args)
    args.out.mkdir(parents=True, exist_ok=True)
    target = args.out / f"{args.commit}.json"
    target.write_text(json.dumps(contract, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(
        f"{target}: {len(contract['variables'])} variables, "
        f"{len(contract['null_dereferences'])} unguarded dereferences",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
