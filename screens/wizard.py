"""The cluster wizard: region → control plane → worker pools → options → review → write.

The wizard edits a mapping (the spec as it will be written) and asks the backend to parse
and validate it after every change, so a problem shows up next to the field as it is made.
A spec opened from a file keeps every setting the wizard has no field for, because only
the keys a form touches are changed.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import (
    Button,
    ContentSwitcher,
    Header,
    Input,
    OptionList,
    Select,
    Static,
    Switch,
)

from npa_sop_tui.screens.wizard_review import WizardReview
from npa_sop_tui.spec.findings import Finding
from npa_sop_tui.tui.read_only import OperatorGated
from npa_sop_tui.tui.safety import Guarded
from npa_sop_tui.tui.widgets.footer import AppFooter
from npa_sop_tui.tui.widgets.wizard.file_findings import FileFindings
from npa_sop_tui.tui.widgets.wizard.form_edits import (
    FIELD_IDS,
    PRESET_ROLES,
    edit_field,
    preset_options,
    worker_count,
)
from npa_sop_tui.tui.widgets.wizard.pages import (
    cluster_page,
    control_page,
    options_page,
    review_page,
)
from npa_sop_tui.tui.widgets.wizard.pool_editor import PoolEditor
from npa_sop_tui.tui.widgets.wizard.pool_list import PoolList
from npa_sop_tui.tui.widgets.wizard.steps import (
    FIELD_ERRORS,
    ROLE_FIELDS,
    STEP_TITLES,
    STEPS,
    field_error_of,
    issue_markup,
    step_of,
)

if TYPE_CHECKING:
    pass


class WizardScreen(Guarded, OperatorGated, WizardReview):
    """Guided creation and editing of cluster.yaml."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "leave", "Home", id="wizard.leave"),
        Binding("ctrl+n", "next", "Next", id="wizard.next"),
        # shown on the Back button; the footer keeps its room for the step's own keys
        # not ctrl+b: that is tmux's prefix key
        Binding("ctrl+r", "back", "Prev", show=False, id="wizard.back"),
        # q in a table would quit mid-wizard; app.quit asks when there are unwritten changes
        Binding("q", "app.quit_key", "Quit", show=False, id="wizard.quit"),
        Binding("ctrl+s", "write", "Write", id="wizard.write"),
        Binding("d", "deploy", "Deploy", id="wizard.deploy"),
        Binding("ctrl+f", "rename_keys", "Fix keys", id="wizard.rename_keys"),
    ]

    class SpecWritten(Message):
        """cluster.yaml was written (atomically) and validates."""

        def __init__(self, path: Path, spec: Any) -> None:
            super().__init__()
            self.path = path
            self.spec = spec

    step: reactive[str] = reactive("cluster")
    """The step on screen (one of STEPS)."""

    issues: reactive[tuple[Finding, ...]] = reactive(())
    """Every finding for the mapping as it stands."""

    def __init__(
        self,
        mapping: dict[str, Any],
        *,
        path: Path | None,
        document: Any | None = None,
        findings: Sequence[Finding] = (),
        disk_text: str | None = None,
    ) -> None:
        super().__init__()
        self.file_findings = tuple(findings)
        """What kept the model from reading the opened file (shown until the form passes)."""
        opened = getattr(document, "original", None)
        self._disk_text = disk_text if disk_text is not None else opened
        """What the opened file held on disk: a write refuses a file changed since."""
        self.data: dict[str, Any] = copy.deepcopy(mapping)
        self.data.setdefault("workers", [])
        self.path = path
        self.document = document
        """The opened (or last written) file's round-trip document; None for a new spec."""
        self.spec: Any | None = None
        self._ready = False
        self._saved: dict[str, Any] = copy.deepcopy(self.data)
        """The mapping as last written (or opened); leaving with other data asks first."""
        self._deploy_after_write = False
        self._wrote_here = False
        """Whether this screen wrote `path` (else it was opened as it is)."""
        self._auto_out = ""
        self._existing: dict[str, Any] = {}
        """The inventory's clusters by name (a new cluster must not take one's name)."""
        self._touched: set[str] = set()
        """Fields the user has changed (findings about untouched empty fields wait)."""
        """The out path the wizard filled in itself; once the user types one, it stays."""

    # -- layout ----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        cat = self.npa.backend.catalog()
        self.data.setdefault("control_plane", {})
        yield Header(show_clock=False)
        with Horizontal(id="wizard"):
            yield OptionList(*[STEP_TITLES[s] for s in STEPS], id="steps")
            with Vertical(id="wizard-main"):
                source = self.path.name if self.path else "cluster.yaml"
                yield FileFindings(source, id="file-findings")
                yield Static("", id="step-title")
                with ContentSwitcher(initial="cluster", id="pages"):
                    yield from cluster_page(self.data, cat)
                    yield from control_page(self.data)
                    with Vertical(id="pools"):
                        yield PoolList(self.data["workers"], id="pool-list")
                    yield from options_page(self.data, new=self.path is None)
                    yield from review_page(self.path)
                yield Static("", id="step-findings", classes="inline-findings")
                with Horizontal(classes="buttons", id="wizard-nav"):
                    yield Button("Back (ctrl+r)", id="back", compact=True)
                    yield Button("Next (ctrl+n)", id="next", variant="primary", compact=True)
        yield AppFooter()
        self._saved = copy.deepcopy(self.data)  # after compose's defaults: not user changes

    def on_mount(self) -> None:
        self.npa.cluster = self.data.get("name", "")
        self._refresh_presets()
        self.query_one("#steps", OptionList).highlighted = 0
        self._ready = True
        self.revalidate()
        self.query_one("#name", Input).focus()
        if self.document is None:  # a new cluster: its name must not be a deployed one's
            self._load_existing()

    @work(thread=True, group="wizard-inventory", exit_on_error=False)
    def _load_existing(self) -> None:
        rows = self.npa.backend.list_clusters()
        existing = {r.name: r for r in rows if r.state not in ("destroyed", "failed-destroy")}
        self.app.call_from_thread(self._set_existing, existing)

    def _set_existing(self, existing: dict[str, Any]) -> None:
        self._existing = existing
        self.revalidate()

    # -- navigation ------------------------------------------------------------------------

    def watch_step(self, step: str) -> None:
        self.query_one("#pages", ContentSwitcher).current = step
        index = STEPS.index(step)
        self.query_one("#step-title", Static).update(
            f"Step {index + 1} of {len(STEPS)}: {STEP_TITLES[step].split(' ', 1)[1]}"
        )
        steps = self.query_one("#steps", OptionList)
        steps.highlighted = STEPS.index(step)
        self.query_one("#back", Button).disabled = step == STEPS[0]
        self.query_one("#next", Button).display = step != STEPS[-1]
        if step == "review":
            self._render_review()
        self._show_step_findings()
        self.refresh_bindings()
        self._focus_step(step)

    def _focus_step(self, step: str) -> None:
        """Put the cursor where the step's work starts, so the keyboard flow never stalls."""
        if not self._ready:
            return
        target = {
            "cluster": "#name",
            "control": "#sys-min",
            "pools": "#pool-table",  # its footer keys (a add, enter edit…) work from there
            "options": "#accounting",
            "review": "#deploy" if self._deployable() else "#write",
        }[step]
        widget = self.query_one(target)
        if widget.focusable and not widget.disabled:
            widget.focus()
        elif step == "review":
            self.query_one("#out-path", Input).focus()

    @on(OptionList.OptionSelected, "#steps")
    def _jump(self, event: OptionList.OptionSelected) -> None:
        self.step = STEPS[event.option_index]

    @on(Button.Pressed, "#next")
    def action_next(self) -> None:
        index = STEPS.index(self.step)
        if index < len(STEPS) - 1:
            self.step = STEPS[index + 1]

    @on(Button.Pressed, "#back")
    def action_back(self) -> None:
        index = STEPS.index(self.step)
        if index > 0:
            self.step = STEPS[index - 1]

    def action_leave(self) -> None:
        if not self.dirty():
            self.app.pop_screen()
            return
        from npa_sop_tui.screens.modals import ConfirmModal

        def chosen(yes: bool | None) -> None:
            if yes:
                self.app.pop_screen()

        self.app.push_screen(
            ConfirmModal(
                "Leave the wizard? The changes you made are not written to a file yet.",
                yes="Discard and leave",
                no="Stay",
                danger=True,
            ),
            chosen,
        )

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "next":
            return True if self.step != STEPS[-1] else None
        if action == "back":
            return True if self.step != STEPS[0] else None
        if action == "write":
            return True  # with errors too: ctrl+s then says what blocks writing, never silent
        if action == "deploy":
            if self.step != "review":
                return False  # hidden: deploying starts from the review step
            # an unwritten but valid form is written first (d = write, then deploy)
            return True if not any(i.is_error for i in self.issues) else None
        if action == "rename_keys":
            banners = self.query(FileFindings).results(FileFindings)  # none before compose
            return any(banner.renames() for banner in banners)
        return True

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        # Enter moves on like in a form; in the path field it writes
        if event.input.id == "out-path":
            self.action_write()
        else:
            self.focus_next()

    # -- form → mapping --------------------------------------------------------------------

    @on(Input.Changed, "#name")
    def _name(self, event: Input.Changed) -> None:
        self.data["name"] = event.value.strip()
        if event.value:
            self._touched.add("name")
        self.revalidate()
        # the title bar names the cluster once the name is one (it echoed what was typed)
        if not any(i.path == "name" and i.is_error for i in self.issues):
            self.npa.cluster = self.data["name"]

    @on(Select.Changed, "#region")
    def _region(self, event: Select.Changed) -> None:
        if event.value is Select.NULL:
            self.data.pop("region", None)
        else:
            self.data["region"] = str(event.value)
            self._touched.add("region")
        region = "" if event.value is Select.NULL else str(event.value)
        self.query_one("#region-note", Static).update(
            self.npa.backend.catalog().region_details(region)
        )
        self.revalidate()

    @on(Input.Changed, "#sys-min, #sys-max, #k8s-version, #ng-version")
    @on(Select.Changed, "#sys-preset, #ctl-preset, #login-preset, #rest, #operator-version")
    @on(Switch.Changed, "#accounting, #apparmor")
    def _field_changed(self, event: Input.Changed | Select.Changed | Switch.Changed) -> None:
        field = event.control
        if field is None or field.id not in FIELD_IDS:
            return
        if field.id in PRESET_ROLES and not self._ready:
            return  # the options being filled in, not a choice
        value = getattr(event, "value", None)
        edit_field(self.data, field.id, None if value is Select.NULL else value)
        self.revalidate()

    # -- pools -----------------------------------------------------------------------------

    @on(PoolList.EditRequested)
    def _edit_pool(self, event: PoolList.EditRequested) -> None:
        region = self.data.get("region")
        if not region:
            self.notify("Choose a region first: platforms depend on it.", severity="warning")
            self.step = "cluster"
            return
        pools: list[dict[str, Any]] = self.data["workers"]
        if event.index is None:
            pool = event.template or {"name": f"pool{len(pools) + 1}", "size": 1}
            taken = {str(p.get("name")) for p in pools}
            title = "New worker pool"
        else:
            pool = pools[event.index]
            taken = {str(p.get("name")) for i, p in enumerate(pools) if i != event.index}
            title = f"Edit worker pool {pool.get('name')}"
        editor = PoolEditor(
            pool, region=region, catalog=self.npa.backend.catalog(), taken_names=taken, title=title
        )
        pool_list = self.query_one(PoolList)

        def saved(result: dict[str, Any] | None) -> None:
            if result is None:
                return
            if event.index is None:
                pool_list.add(result)
            else:
                pool_list.replace(event.index, result)

        self.app.push_screen(editor, saved)

    @on(PoolList.RemoveRequested)
    def _remove_pool(self, event: PoolList.RemoveRequested) -> None:
        from npa_sop_tui.screens.modals import ConfirmModal

        pool_list = self.query_one(PoolList)

        def chosen(yes: bool | None) -> None:
            # the list may have changed under the modal; remove the pool by name
            if yes:
                pool_list.remove_named(event.index, event.name)

        question = f"Remove worker pool {event.name!r} from the spec?"
        self.app.push_screen(ConfirmModal(question, yes="Remove", danger=True), chosen)

    @on(PoolList.PoolAdded)
    @on(PoolList.PoolEdited)
    @on(PoolList.PoolRemoved)
    def _pools_changed(self) -> None:
        self._refresh_presets()
        self.revalidate()

    # -- derived views ---------------------------------------------------------------------

    def _refresh_presets(self) -> None:
        """Offer only presets sufficient for each role at the workers' sizing tier."""
        cat = self.npa.backend.catalog()
        workers = worker_count(self.data)
        ready, self._ready = self._ready, False
        try:
            for role, selector in ROLE_FIELDS:
                select = self.query_one(selector, Select)
                current = (self.data["control_plane"].get(role) or {}).get("preset")
                select.set_options(preset_options(cat, role, workers, current))
                select.value = current if current else Select.NULL
            notes = [cat.tier_explanation(role, workers) for role in ("system", "controller")]
            self.query_one("#tier-note", Static).update(
                f"Sizing tier {cat.sizing_tier(workers)} for {workers} worker node(s).\n"
                + "\n".join(notes)
            )
        finally:
            self._ready = ready

    def revalidate(self) -> None:
        spec, issues = self.npa.backend.check(self.data)
        self.spec = spec
        self.issues = tuple(issues) + self._name_taken()

    def _name_taken(self) -> tuple[Finding, ...]:
        """A new cluster named like one in the inventory would deploy over it (replacing
        what differs): an error under the name, saying how to edit that one instead."""
        row = self._existing.get(str(self.data.get("name") or ""))
        if row is None:
            return ()
        return (
            Finding(
                "error",
                "name",
                f"a cluster named {row.name!r} exists already ({row.state}, {row.region}): "
                "deploying this would change it",
                hint="pick another name, or edit that cluster (e on home)",
            ),
        )

    def watch_issues(self) -> None:
        errors = {i.path for i in self.issues if i.is_error}
        banner = self.query_one(FileFindings)
        banner.findings = tuple(f for f in self.file_findings if f.path in errors)
        self._show_step_findings()
        if self.step == "review":
            self._render_review()
        self.refresh_bindings()

    def _show_step_findings(self) -> None:
        """Each finding beside its field; the rest of the step's below the form."""
        # a new cluster's empty name/region is not a mistake yet: flag it once touched
        quiet = {f for f in ("name", "region") if f not in self._touched and not self.data.get(f)}
        mine = [i for i in self.issues if step_of(i.path) == self.step and i.path not in quiet]
        if self.step == "review":
            mine = []
        beside: dict[str, list[Finding]] = {field: [] for field in FIELD_ERRORS.values()}
        rest: list[Finding] = []
        for issue in mine:
            field = field_error_of(issue.path)
            (beside[field] if field else rest).append(issue)
        for field, issues in beside.items():
            box = self.query_one(f"#{field}", Static)
            box.update(Content("\n").join(issue_markup(i) for i in issues))
            box.display = bool(issues)
        box = self.query_one("#step-findings", Static)
        box.update(Content("\n").join(issue_markup(i) for i in rest))
        box.display = bool(rest)
