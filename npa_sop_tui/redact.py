"""Keep secrets out of event logs, terminals and inventory files.

Two layers: exact values we know are secret (rendered secrets, capacity block IDs handed in at
run time, and every secret-looking value in the environment: `*TOKEN*`, `*SECRET*`,
`*PASSWORD*`, `*KEY*` names, `TF_VAR_*` of variables the recipe declares sensitive, the
capacity IDs of `NPA_CAPACITY_BLOCK_GROUPS`) and patterns for things that look secret
wherever they come from (Terraform echoes variable values in diagnostics, provisioners print
what they like). Every sink (NDJSON, stderr, the operation log, inventory summaries) goes
through a `Redactor`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal, TypeVar, get_origin

from pydantic import BaseModel

MASK = "***"

_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"capacityblockgroup-[A-Za-z0-9]+"),
    re.compile(
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)",
        re.DOTALL,
    ),
    # key = value / "key": "value" forms for password-like names
    re.compile(
        r"(?i)((?:password|passwd|secret|access_key|secret_key|token)[\"']?\s*[:=]\s*[\"']?)"
        r"([^\s\"',}]+)"
    ),
)

M = TypeVar("M", bound=BaseModel)

# Environment variables whose values are secrets. Paths to secrets (`*_FILE`, `*_PATH`,
# `*_DIR`) and public keys are not; short values (`1`, `true`) would mask half of every line.
_SECRET_NAME = re.compile(r"TOKEN|SECRET|PASSWORD|PASSWD|KEY|CREDENTIAL|PRIVATE", re.IGNORECASE)
_NOT_SECRET_NAME = re.compile(r"(_FILE|_PATH|_DIR|_SOCK)$|PUBLIC", re.IGNORECASE)
_ENV_MIN_LEN = 6
_NOT_SECRET_VALUES = frozenset({"true", "false", "enabled", "disabled"})
CAPACITY_ENV = "NPA_CAPACITY_BLOCK_GROUPS"


def secret_env_values(environ: Mapping[str, str], sensitive_vars: Iterable[str] = ()) -> list[str]:
    """The values in `environ` that must never be shown."""
    sensitive = {f"TF_VAR_{name}" for name in sensitive_vars}
    found: list[str] = []
    for name, value in environ.items():
        if not value or len(value) < _ENV_MIN_LEN or value.lower() in _NOT_SECRET_VALUES:
            continue
        if name == CAPACITY_ENV:
            # pool=id[,pool=id…]: each id is a secret, the pool names are not.
            found += [part.partition("=")[2].strip() for part in re.split(r"[,\s]+", value)]
        elif name in sensitive or (_SECRET_NAME.search(name) and not _NOT_SECRET_NAME.search(name)):
            found.append(value)
    return [v for v in found if len(v) >= 4]


_VARIABLE = re.compile(r'^\s*variable\s+"([^"]+)"\s*\{', re.MULTILINE)
_SENSITIVE = re.compile(r"^\s*sensitive\s*=\s*true\b", re.MULTILINE)


def _module_texts(module_dir: Path | str) -> list[str]:
    texts = []
    for path in sorted(Path(module_dir).glob("*.tf")):
        try:
            texts.append(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            continue
    return texts


def declared_variables(module_dir: Path | str) -> list[str]:
    """Names of the variables a Terraform module declares, in file order."""
    names: list[str] = []
    for text in _module_texts(module_dir):
        names += [m.group(1) for m in _VARIABLE.finditer(text) if m.group(1) not in names]
    return names


def sensitive_variables(module_dir: Path | str) -> set[str]:
    """Names of the variables a Terraform module declares `sensitive = true`."""
    names: set[str] = set()
    for text in _module_texts(module_dir):
        starts = list(_VARIABLE.finditer(text))
        for i, match in enumerate(starts):
            end = starts[i + 1].start() if i + 1 < len(starts) else len(text)
            if _SENSITIVE.search(text, match.end(), end):
                names.add(match.group(1))
    return names


class Redactor:
    """Replaces known secret values and secret-looking text with `***`.

    By default it also masks the secret-looking values of npa's own environment (pass
    `environ={}` to leave them out).
    """

    def __init__(
        self, secrets: Iterable[str] = (), *, environ: Mapping[str, str] | None = None
    ) -> None:
        # Longest first, so a secret that contains another is masked whole.
        values = {s for s in secrets if s and len(s) >= 4}
        values.update(secret_env_values(os.environ if environ is None else environ))
        self._secrets = sorted(values, key=len, reverse=True)

    def add_environment(
        self, environ: Mapping[str, str], sensitive_vars: Iterable[str] = ()
    ) -> None:
        """Also mask the secrets of an environment handed to Terraform."""
        self.add(*secret_env_values(environ, sensitive_vars))

    def add(self, *secrets: str) -> None:
        fresh = {s for s in secrets if s and len(s) >= 4}
        self._secrets = sorted({*self._secrets, *fresh}, key=len, reverse=True)

    def text(self, value: str) -> str:
        for secret in self._secrets:
            if secret in value:
                value = value.replace(secret, MASK)
        for pattern in _PATTERNS:
            if pattern.groups == 2:
                value = pattern.sub(lambda m: m.group(1) + MASK, value)
            else:
                value = pattern.sub(MASK, value)
        return value

    def value(self, data: Any) -> Any:
        """Redact every string inside nested dicts/lists (keys stay as they are)."""
        if isinstance(data, str):
            return self.text(data)
        if isinstance(data, dict):
            return {k: self.value(v) for k, v in data.items()}
        if isinstance(data, list | tuple):
            return [self.value(v) for v in data]
        return data

    def model(self, model: M) -> M:
        """A copy of `model` with every string field redacted (unchanged models are reused)."""
        dumped = model.model_dump()
        cleaned = self.value(dumped)
        # A Literal field (an event's `kind`) is the model's own fixed vocabulary, never a
        # secret: masking a secret that happens to occur inside it would make the model invalid.
        for name, info in type(model).model_fields.items():
            if get_origin(info.annotation) is Literal and name in dumped:
                cleaned[name] = dumped[name]
        if cleaned == dumped:
            return model
        return type(model).model_validate(cleaned)
