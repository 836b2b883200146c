"""The wizard's banner for a file the form cannot fully show: a misspelt key, a value of the
wrong type. It names each problem by line and field with what to do, and offers the key
renames the findings suggest, so the file can be fixed without leaving the app."""

from __future__ import annotations

from collections.abc import Sequence

from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Button, Static

from npa_sop_tui.spec.findings import Finding
from npa_sop_tui.spec.key_fix import KeyRename, suggested_renames, unknown_key
from npa_sop_tui.tui.backend import issue_text
from npa_sop_tui.tui.safety import markup, shown


def blocked_write_text(findings: Sequence[Finding]) -> str:
    """Why ctrl+s wrote nothing: the first error, how many more, and for an unknown key
    that the file keeps it (the wizard edits only what the form changes, never drops it)."""
    errors = [f for f in findings if f.is_error]
    if not errors:
        return ""
    first = errors[0]
    more = f" (+{len(errors) - 1} more, listed on the review step)" if len(errors) > 1 else ""
    text = f"Not written: {issue_text(first)}{more}."
    if any(unknown_key(f) for f in errors):
        renames = suggested_renames(errors)
        fix = "ctrl+f renames it" if renames else "rename or remove it in the file"
        text += f" An unknown key cannot be written as a spec field and is never dropped: {fix}."
    return text


class FileFindings(VerticalScroll):
    """What in the opened file the form could not read, until the form's check passes it."""

    DEFAULT_CSS = """
    FileFindings {
        height: auto;
        max-height: 7;
        border: round $error;
        padding: 0 1;
        display: none;
    }
    FileFindings #file-findings-text { height: auto; }
    FileFindings Horizontal { height: auto; }
    """

    findings: reactive[tuple[Finding, ...]] = reactive((), init=False)
    """The opened file's findings that the form's check still reports."""

    def __init__(self, source: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.source = source
        self.border_title = shown(f"{source}: fix before writing")  # a path: never markup

    def compose(self) -> ComposeResult:
        yield Static("", id="file-findings-text")
        with Horizontal():
            yield Button("Rename keys (ctrl+f)", id="rename-keys", compact=True)

    def renames(self) -> list[KeyRename]:
        """The renames the shown findings suggest."""
        return suggested_renames(self.findings)

    def watch_findings(self, findings: tuple[Finding, ...]) -> None:
        self.display = bool(findings)
        lines = [_line(f) for f in findings]
        renames = suggested_renames(findings)
        if renames:
            what = ", ".join(f"{r.old} → {r.new}" for r in renames)
            fix = "ctrl+f renames $what in the file (written with ctrl+s)"
            lines.append(markup(fix, what=what))
        self.query_one("#file-findings-text", Static).update(Content("\n").join(lines))
        self.query_one("#rename-keys", Button).display = bool(renames)


def _line(finding: Finding) -> Content:
    colour = "red" if finding.is_error else "yellow"
    return markup(f"[{colour}]{finding.level}[/] $text", text=issue_text(finding))
