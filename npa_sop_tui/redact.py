"""Keep secrets out of event logs, terminals and inventory files.

Two layers: exact values we know are secret (rendered secrets, capacity block IDs handed in at
run time) and patterns for things that look secret wherever they come from (Terraform echoes
variable values in diagnostics, provisioners print what they like).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, TypeVar

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


class Redactor:
    """Replaces known secret values and secret-looking text with `***`."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        # Longest first, so a secret that contains another is masked whole.
        values = {s for s in secrets if s and len(s) >= 4}
        self._secrets = sorted(values, key=len, reverse=True)

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
        if cleaned == dumped:
            return model
        return type(model).model_validate(cleaned)
