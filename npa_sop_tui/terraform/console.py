"""The input variables an installation runs with, as Terraform itself evaluates them.

`terraform console` loads the root module the way plan does — `terraform.tfvars`,
`*.auto.tfvars`, `terraform.tfvars.json`, `-var-file`s and `TF_VAR_*` in their precedence,
converted to each variable's type with its defaults — so what it prints is what Terraform
compares in a plan, whoever wrote the files (the existing npa's HCL `terraform.tfvars`, a
hand-edited example, a JSON file). One expression (`jsonencode({…})`) reads them all; the
values of variables declared `sensitive` are read with `nonsensitive()` so they can be kept,
never shown. Read only: no state is changed (Terraform still takes the state's lock while it
reads, so two readers of one installation must not run at once: lifecycle/adopt.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from npa_sop_tui.errors import OperationError

CONSOLE_TIMEOUT = 120.0
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


def expression(names: Iterable[str], sensitive: Iterable[str] = ()) -> str:
    secret = set(sensitive)
    parts = []
    for name in names:
        if not _NAME.fullmatch(name):
            raise OperationError(f"not a Terraform variable name: {name!r}")
        ref = f"var.{name}"
        parts.append(f"{name} = {'nonsensitive(' + ref + ')' if name in secret else ref}")
    return "jsonencode({" + ", ".join(parts) + "})"


def parse_output(stdout: str) -> dict[str, Any]:
    """The console's answer: one HCL string literal holding the JSON document."""
    lines = [line for line in stdout.splitlines() if line.strip()]
    last = lines[-1].strip() if lines else ""
    if last == "(known after apply)":
        raise OperationError(
            "Terraform cannot tell the installation's variables: a required variable has no "
            "value here",
            hint="pass the cluster's identity (--region, --tenant-id, --project-id, "
            "--subnet-id) or export the TF_VAR_* the installation was applied with",
        )
    if not (last.startswith('"') and last.endswith('"')):
        raise OperationError(f"terraform console printed something unexpected: {last[:200]!r}")
    # An HCL string literal: JSON's escapes, plus `$${` / `%%{` for literal `${` / `%{`.
    text = json.loads(last).replace("$${", "${").replace("%%{", "%{")
    value = json.loads(text)
    if not isinstance(value, dict):
        raise OperationError("terraform console did not return the variables as an object")
    return value


async def read_variables(
    binary: str,
    install_dir: Path,
    names: Iterable[str],
    *,
    sensitive: Iterable[str] = (),
    env: Mapping[str, str],
    var_files: Iterable[Path] = (),
    timeout: float = CONSOLE_TIMEOUT,
) -> dict[str, Any]:
    """Each variable in `names` as Terraform evaluates it in `install_dir` (initialised)."""
    args = [binary, "console", "-no-color", *(f"-var-file={f}" for f in var_files)]
    proc = await asyncio.create_subprocess_exec(
        *args,
        cwd=install_dir,
        env=dict(env),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    query = (expression(names, sensitive) + "\n").encode()
    try:
        out, err = await asyncio.wait_for(proc.communicate(query), timeout)
    except (TimeoutError, asyncio.CancelledError):
        proc.kill()
        with contextlib.suppress(Exception):
            await proc.wait()
        raise
    if proc.returncode != 0:
        detail = err.decode(errors="replace").strip() or out.decode(errors="replace").strip()
        raise OperationError(
            f"terraform console could not read the variables in {install_dir}: {detail[-600:]}",
            hint="run `terraform init` in that folder if it was never initialised here",
        )
    return parse_output(out.decode(errors="replace"))
