"""Validation findings: one problem (or advisory) at one place in a spec file."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, replace
from typing import Literal

Level = Literal["error", "warning"]


@dataclass(frozen=True)
class Finding:
    """A problem (`error`, blocks) or an advisory (`warning`, informs) about a spec.

    `path` is the field path in the spec (`workers[1].fabric`); `file`/`line`/`column`
    (1-based) point at the YAML text when the spec came from a file.
    """

    level: Level
    path: str
    message: str
    hint: str | None = None
    file: str | None = None
    line: int | None = None
    column: int | None = None

    @property
    def is_error(self) -> bool:
        return self.level == "error"

    def location(self) -> str:
        if self.file is None:
            return ""
        if self.line is None:
            return self.file
        return f"{self.file}:{self.line}:{self.column or 1}"

    def render(self) -> str:
        """`cluster.yaml:14:5 workers[1].fabric: message (hint: …)`."""
        where = self.location()
        head = " ".join(part for part in (where, f"{self.path}:" if self.path else "") if part)
        text = f"{head} {self.message}" if head else self.message
        if self.level == "warning":
            text = f"warning: {text}"
        return f"{text} (hint: {self.hint})" if self.hint else text

    def to_dict(self) -> dict[str, object]:
        return asdict(self)

    def at(self, file: str | None, line: int | None, column: int | None) -> Finding:
        return replace(self, file=file, line=line, column=column)


def error(path: str, message: str, hint: str | None = None) -> Finding:
    return Finding("error", path, message, hint)


def warning(path: str, message: str, hint: str | None = None) -> Finding:
    return Finding("warning", path, message, hint)


def errors_of(findings: Iterable[Finding]) -> list[Finding]:
    return [f for f in findings if f.is_error]


def warnings_of(findings: Iterable[Finding]) -> list[Finding]:
    return [f for f in findings if not f.is_error]


def did_you_mean(word: str, choices: Iterable[str]) -> str | None:
    """A `did you mean 'x'?` hint when one choice is close enough, else None."""
    import difflib  # only when there is a mistake to hint at

    matches = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"did you mean {matches[0]!r}?" if matches else None


def one_of_hint(word: str, choices: Iterable[str], *, limit: int = 12) -> str:
    """Did-you-mean when there is a close match, else the list of valid values."""
    options = list(choices)
    close = did_you_mean(word, options)
    if close:
        return close
    shown = ", ".join(options[:limit]) + (", …" if len(options) > limit else "")
    return f"expected one of: {shown}" if options else "no valid values are known"


def summary_line(findings: Iterable[Finding]) -> str:
    items = list(findings)
    n_err = len(errors_of(items))
    n_warn = len(items) - n_err
    return f"{n_err} error{'s' * (n_err != 1)}, {n_warn} warning{'s' * (n_warn != 1)}"
