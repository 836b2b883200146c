"""The wizard's review step and what follows it: the preview of what will be written (the
YAML of a new spec, the diff of an opened file), totals and price, where it goes, writing it
(never over a file changed on disk since it was opened), renaming misspelt keys in the text,
and deploying the written file. screens/wizard.py holds the form that feeds it."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.syntax import Syntax
from textual import on
from textual.content import Content
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Button, Input, Static

from npa_sop_tui.safe_text import safe_text
from npa_sop_tui.spec.findings import Finding
from npa_sop_tui.tui.safety import markup
from npa_sop_tui.tui.widgets.deploy.plan_price import PlanPrice
from npa_sop_tui.tui.widgets.wizard.file_findings import blocked_write_text
from npa_sop_tui.tui.widgets.wizard.steps import issue_markup

if TYPE_CHECKING:
    from npa_sop_tui.tui.app import NpaSopApp


class WizardReview(Screen[None]):
    """The review-and-write half of the wizard screen (one screen, split by concern): what
    it reads of the form's state is declared here and set by `WizardScreen`."""

    SpecWritten: type[Message]
    data: dict[str, Any]
    path: Path | None
    document: Any | None
    spec: Any | None
    issues: tuple[Finding, ...]
    step: str
    file_findings: tuple[Finding, ...]
    _saved: dict[str, Any]
    _disk_text: str | None
    _deploy_after_write: bool
    _wrote_here: bool
    _auto_out: str

    @property
    def npa(self) -> NpaSopApp:
        return self.app  # type: ignore[return-value]

    def dirty(self) -> bool:
        """True when the form holds changes that are not in a written file."""
        if self.document is not None and self.document.original != self._disk_text:
            return True  # keys renamed in the text, not written yet
        return self.data != self._saved

    def _deployable(self) -> bool:
        """A file was written from exactly what the form holds, and it validates."""
        return (
            self.path is not None
            and self.spec is not None
            and not self.dirty()
            and not any(i.is_error for i in self.issues)
        )

    def _render_review(self) -> None:
        backend = self.npa.backend
        preview = self.query_one("#yaml-preview", Static)
        if self.spec is not None:
            preview.update(self._preview())
            t = backend.totals(self.spec)
            self.query_one("#totals", Static).update(
                markup(
                    f"[b]Totals[/b]  nodes {t.nodes} · vCPU {t.vcpu} · GPUs {t.gpus} · "
                    f"disks {t.disk_gib} GiB\nkube context $context",
                    context=backend.kube_context(self.spec.name),
                )
            )
            self.query_one(PlanPrice).estimate(self.spec)
        else:
            preview.update("The spec cannot be built yet; fix the errors listed.")
            self.query_one("#totals", Static).update("")
        findings = self.query_one("#findings", Static)
        if self.issues:
            findings.update(Content("\n").join(issue_markup(i) for i in self.issues))
        else:
            findings.update("[green]No findings: the spec is valid.[/]")
        blocked = any(i.is_error for i in self.issues)
        self.query_one("#write", Button).disabled = blocked
        self.query_one("#deploy", Button).disabled = blocked  # unwritten: d writes first
        out = self.query_one("#out-path", Input)
        if self.path is None and out.value in ("", self._auto_out):
            # a new cluster: offer the backend's place for it (the sandbox keeps its own)
            self._auto_out = str(backend.default_spec_path(self.data.get("name") or ""))
            out.value = self._auto_out
        self._describe_target()

    def _new_text(self) -> tuple[str, str]:
        """(text to write, diff against the opened file) for what the form holds now."""
        backend = self.npa.backend
        if self.document is not None:
            return backend.edited_text(self.document, self._saved, self.data)
        return backend.dump_yaml(self.spec), ""

    def _preview(self) -> Any:
        """The review step's left pane: the diff for an opened file, the YAML for a new one."""
        from rich.console import Group
        from rich.text import Text

        text, diff = self._new_text()  # a file's text: every control in it shown, not obeyed
        text, diff = safe_text(text, keep_newlines=True), safe_text(diff, keep_newlines=True)
        if self.document is None:
            head = Text("New file:", style="bold")
            return Group(head, Syntax(text, "yaml", theme="ansi_dark"))
        name = self.document.path.name if self.document.path else "the file"
        if not diff:
            head = Text(f"No changes: {name} stays as it is.", style="bold")
            return Group(head, Syntax(text, "yaml", theme="ansi_dark"))
        head = Text(f"Changes to {name} (only these lines are rewritten):", style="bold")
        return Group(head, Syntax(diff, "diff", theme="ansi_dark"))

    def _target(self) -> Path:
        text = self.query_one("#out-path", Input).value.strip()
        return Path(text).expanduser() if text else self.npa.backend.default_spec_path("")

    @on(Input.Changed, "#out-path")
    def _describe_target(self) -> None:
        target = self._target().absolute()
        if self._deployable() and self.path is not None and target == self.path.absolute():
            # "written" only once this screen wrote it: an opened file may be unchanged
            done = "Written to" if self._wrote_here else "Opened, unchanged:"
            text = done + " $where. Press [b]d[/b] to deploy it."
        elif target.exists():
            text = "$where exists; writing asks before overwriting it."
        else:
            text = "Writes $where"
        if self.npa.sandbox:
            text = f"[b reverse] SANDBOX [/] {text}"
        self.query_one("#out-note", Static).update(markup(text, where=target))

    # -- write -----------------------------------------------------------------------------

    @on(Button.Pressed, "#write")
    def action_write(self) -> None:
        self.revalidate()
        blocking = [i for i in self.issues if i.is_error]
        if blocking or self.spec is None:
            self._deploy_after_write = False
            placed = {f.path: f for f in self.file_findings}  # the file's, with their line
            shown = [placed.get(i.path, i) for i in blocking]
            self.notify(blocked_write_text(shown), title="Not written", severity="error")
            self.step = "review"
            return
        target = self._target()
        opened = self.document is not None and self.document.path is not None
        if opened and target.absolute() == Path(self.document.path).absolute():
            self._write(target)  # the opened file: the review step showed what changes
        elif target.exists():
            from npa_sop_tui.screens.modals import ConfirmModal

            def confirmed(yes: bool | None) -> None:
                if yes:
                    self._write(target)
                else:
                    self._deploy_after_write = False

            self.app.push_screen(
                ConfirmModal(f"{target} exists. Overwrite it?", yes="Overwrite", danger=True),
                confirmed,
            )
        else:
            self._write(target)

    def _write(self, target: Path) -> None:
        from npa_sop_tui.errors import NpaError

        try:
            text, _ = self._new_text()
            same_file = self.document is not None and self.document.path is not None
            same_file = same_file and target.absolute() == Path(self.document.path).absolute()
            if not (same_file and text == self._disk_text):  # unchanged: not rewritten
                # the file it was opened from must still hold what was opened (else refused)
                expected = self._disk_text if same_file else None
                self.document = self.npa.backend.write_text(target, text, expected=expected)
                self._disk_text = text
        except (NpaError, OSError) as exc:
            self._deploy_after_write = False
            self.npa.show_error(exc, title=f"Could not write {target}")
            return
        self.path = target.absolute()
        self._saved = copy.deepcopy(self.data)
        self._wrote_here = True
        self.notify(f"Wrote {self.path}", title=self.path.name)
        self._render_review()
        self.refresh_bindings()
        self.query_one("#deploy", Button).focus()
        self.post_message(self.SpecWritten(self.path, self.spec))
        if self._deploy_after_write:
            self._deploy_after_write = False
            self.action_deploy()

    @on(Button.Pressed, "#rename-keys")
    def action_rename_keys(self) -> None:
        """Rename each misspelt key to the known key its finding suggests, in the text (its
        value and comments kept), and reopen the form on the result; nothing is written."""
        from npa_sop_tui.spec.key_fix import apply_renames, suggested_renames

        if self.document is None or self.path is None:
            return
        backend = self.npa.backend
        text, _ = self._new_text()
        mapping, findings = backend.read_text(text, self.path)
        renamed: list[str] = []
        for _ in range(8):  # a renamed parent's children are checked only once it is known
            text, done = apply_renames(text, suggested_renames(findings))
            if not done:
                break
            renamed += [f"{r.old} → {r.new}" for r in done]
            mapping, findings = backend.read_text(text, self.path)
        if not renamed:
            self.notify("No key has a close known name: edit the file.", severity="warning")
            return
        document = backend.parse_document(text, self.path)
        self.app.switch_screen(
            type(self)(
                mapping,
                path=self.path,
                document=document,
                findings=findings,
                disk_text=self._disk_text,
            )
        )
        self.app.notify(
            f"Renamed {', '.join(renamed)}. Not written yet: ctrl+s writes the file.",
            title=self.path.name,
        )

    @on(Button.Pressed, "#deploy")
    def action_deploy(self) -> None:
        if not self._deployable() or self.spec is None:
            if self.step == "review" and not any(i.is_error for i in self.issues):
                # deploy runs from a file on disk: write it first, then go on
                self._deploy_after_write = True
                self.action_write()
                return
            self.notify("Fix the errors shown first; deploy uses the written cluster.yaml.")
            return
        # the wizard's work is done: deploy takes its place, so esc there goes home
        self.npa.deploy(self.spec, spec_path=self.path, replace=True)
