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

from rich.syntax import Syntax
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import (
    Button,
    ContentSwitcher,
    Header,
    Input,
    Label,
    OptionList,
    Select,
    Static,
    Switch,
)

from npa_sop_tui.spec.findings import Finding
from npa_sop_tui.tui.backend import issue_text
from npa_sop_tui.tui.read_only import OperatorGated
from npa_sop_tui.tui.safety import Guarded, markup
from npa_sop_tui.tui.widgets.footer import AppFooter
from npa_sop_tui.tui.widgets.wizard.file_findings import FileFindings, blocked_write_text
from npa_sop_tui.tui.widgets.wizard.pool_editor import PoolEditor
from npa_sop_tui.tui.widgets.wizard.pool_list import PoolList

if TYPE_CHECKING:
    from npa_sop_tui.tui.app import NpaSopApp

STEPS = ("cluster", "control", "pools", "options", "review")
STEP_TITLES = {
    "cluster": "1 Cluster & region",
    "control": "2 Control plane",
    "pools": "3 Worker pools",
    "options": "4 Options",
    "review": "5 Review & write",
}
OPERATOR_VERSIONS = ("4.1.6", "4.1.7")
REST_CHOICES = (("follows accounting", "auto"), ("on", "on"), ("off", "off"))
DEFAULT_SYSTEM_MIN = 3
"""The spec's default control_plane.system.min_size (shown when a file leaves it out)."""
ROLE_FIELDS = (("system", "#sys-preset"), ("controller", "#ctl-preset"), ("login", "#login-preset"))


FIELD_ERRORS = {
    "name": "name-error",
    "region": "region-error",
    "control_plane.system": "system-error",
    "control_plane.controller": "preset-error",
    "control_plane.login": "preset-error",
    "k8s_version": "versions-error",
    "node_group_version": "versions-error",
}
"""Where a finding about a field path is shown: the error line under that field."""


def field_error_of(path: str) -> str | None:
    for prefix, field in FIELD_ERRORS.items():
        if path == prefix or path.startswith((f"{prefix}.", f"{prefix}[")):
            return field
    return None


def step_of(path: str) -> str:
    """Which wizard step shows a finding for this field path."""
    if path.startswith("workers"):
        return "pools"
    if path.startswith("control_plane"):
        return "control"
    if path in {"name", "region", ""} or path.startswith(("tenant", "project", "subnet")):
        return "cluster"
    return "options"


class WizardScreen(Guarded, OperatorGated, Screen[None]):
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
        self._touched: set[str] = set()
        """Fields the user has changed (findings about untouched empty fields wait)."""
        """The out path the wizard filled in itself; once the user types one, it stays."""

    @property
    def npa(self) -> NpaSopApp:
        return self.app  # type: ignore[return-value]

    # -- layout ----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        cat = self.npa.backend.catalog()
        cp = self.data.setdefault("control_plane", {})
        system = cp.get("system", {}) or {}
        yield Header(show_clock=False)
        with Horizontal(id="wizard"):
            yield OptionList(*[STEP_TITLES[s] for s in STEPS], id="steps")
            with Vertical(id="wizard-main"):
                source = self.path.name if self.path else "cluster.yaml"
                yield FileFindings(source, id="file-findings")
                yield Static("", id="step-title")
                with ContentSwitcher(initial="cluster", id="pages"):
                    with VerticalScroll(id="cluster"):
                        yield Label("Cluster name (lowercase letters, digits, dashes)")
                        yield Input(self.data.get("name", ""), id="name", max_length=40)
                        yield Static("", id="name-error", classes="field-error")
                        yield Label("Region (GPU platforms it offers)")
                        regions = cat.regions()
                        region = self.data.get("region")
                        yield Select(
                            [(f"{r:<12} {cat.region_offer(r)}", r) for r in regions],
                            value=region if region in regions else Select.NULL,
                            id="region",
                            prompt="choose a region (enter opens the list)",
                        )
                        yield Static("", id="region-error", classes="field-error")
                        yield Static(
                            cat.region_details(region if region in regions else ""),
                            id="region-note",
                            classes="note",
                            markup=False,
                        )
                    with VerticalScroll(id="control"):
                        with Horizontal(classes="pair"):
                            with Vertical():
                                yield Label("System nodes: min")
                                yield Input(
                                    str(system.get("min_size", DEFAULT_SYSTEM_MIN)),
                                    id="sys-min",
                                    type="integer",
                                )
                            with Vertical():
                                yield Label("max (empty: max(min, 24))")
                                yield Input(
                                    str(system.get("max_size") or ""),
                                    id="sys-max",
                                    type="integer",
                                )
                        yield Static("", id="system-error", classes="field-error")
                        yield Label("System preset")
                        yield Select([], id="sys-preset", prompt="recipe's sizing tier")
                        yield Label("Controller preset")
                        yield Select([], id="ctl-preset", prompt="recipe's sizing tier")
                        yield Label("Login preset")
                        yield Select([], id="login-preset", prompt="recipe default (16vcpu-64gb)")
                        yield Static("", id="preset-error", classes="field-error")
                        yield Static("", id="tier-note", classes="note")
                    with Vertical(id="pools"):
                        yield PoolList(self.data["workers"], id="pool-list")
                    with VerticalScroll(id="options"):
                        with Horizontal(classes="switch-row"):
                            yield Switch(bool(self.data.get("accounting", False)), id="accounting")
                            yield Label("Accounting (slurmdbd + MariaDB)")
                        yield Label("Slurm REST API")
                        rest = self.data.get("slurm_rest_enabled")
                        yield Select(
                            REST_CHOICES,
                            value="auto" if rest is None else ("on" if rest else "off"),
                            id="rest",
                            allow_blank=False,
                        )
                        yield Label("Soperator version")
                        if self.path is None:  # a new cluster pins the version it was made for
                            self.data.setdefault("slurm_operator_version", OPERATOR_VERSIONS[0])
                        version = self.data.get("slurm_operator_version", OPERATOR_VERSIONS[0])
                        versions = list(OPERATOR_VERSIONS)
                        if version not in versions:
                            versions.append(version)
                        yield Select(
                            [(v, v) for v in versions],
                            value=version,
                            id="operator-version",
                            allow_blank=False,
                        )
                        with Horizontal(classes="switch-row"):
                            yield Switch(
                                bool(self.data.get("use_default_apparmor_profile", False)),
                                id="apparmor",
                            )
                            yield Label("Default AppArmor profile (required for 4.1.7)")
                        with Horizontal(classes="pair"):
                            with Vertical():
                                yield Label("Kubernetes version")
                                yield Input(
                                    self.data.get("k8s_version") or "",
                                    id="k8s-version",
                                    placeholder="recipe default",
                                )
                            with Vertical():
                                yield Label("Node group image version")
                                yield Input(
                                    self.data.get("node_group_version") or "",
                                    id="ng-version",
                                    placeholder="recipe default",
                                )
                        yield Static("", id="versions-error", classes="field-error")
                    with Horizontal(id="review"):
                        with VerticalScroll(id="review-yaml"):
                            yield Static("", id="yaml-preview")
                        with VerticalScroll(id="review-side"):
                            yield Static("", id="totals")
                            price = Static("", id="price")
                            price.display = False  # shown once the calculator answers
                            yield price
                            yield Static("", id="findings")
                            yield Label("Write to")
                            yield Input(str(self.path or ""), id="out-path")
                            yield Static("", id="out-note", classes="note")
                            with Horizontal(classes="buttons", id="review-buttons"):
                                yield Button(
                                    "Write (ctrl+s)", id="write", variant="success", compact=True
                                )
                                yield Button(
                                    "Deploy (d)",
                                    id="deploy",
                                    variant="primary",
                                    disabled=True,
                                    compact=True,
                                )
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

    def dirty(self) -> bool:
        """True when the form holds changes that are not in a written file."""
        if self.document is not None and self.document.original != self._disk_text:
            return True  # keys renamed in the text, not written yet
        return self.data != self._saved

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
        self.npa.cluster = self.data["name"]
        if event.value:
            self._touched.add("name")
        self.revalidate()

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

    @on(Input.Changed, "#sys-min")
    @on(Input.Changed, "#sys-max")
    def _system_size(self, event: Input.Changed) -> None:
        control_plane = self.data["control_plane"]
        system = dict(control_plane.get("system") or {})
        key = "min_size" if event.input.id == "sys-min" else "max_size"
        text = event.value.strip()
        if not text.lstrip("-").isdigit():
            system.pop(key, None)
        elif key in system or not (key == "min_size" and int(text) == DEFAULT_SYSTEM_MIN):
            system[key] = int(text)  # the shown default of a file without it is no change
        if system != (control_plane.get("system") or {}):
            control_plane["system"] = system
        self.revalidate()

    @on(Select.Changed, "#sys-preset")
    @on(Select.Changed, "#ctl-preset")
    @on(Select.Changed, "#login-preset")
    def _role_preset(self, event: Select.Changed) -> None:
        if not self._ready:
            return
        role = {"sys-preset": "system", "ctl-preset": "controller", "login-preset": "login"}[
            str(event.select.id)
        ]
        section = self.data["control_plane"].setdefault(role, {})
        if event.value is Select.NULL:
            section.pop("preset", None)
        else:
            section["preset"] = str(event.value)
        self.revalidate()

    @on(Switch.Changed, "#accounting")
    def _accounting(self, event: Switch.Changed) -> None:
        self.data["accounting"] = event.value
        self.revalidate()

    @on(Switch.Changed, "#apparmor")
    def _apparmor(self, event: Switch.Changed) -> None:
        self.data["use_default_apparmor_profile"] = event.value
        self.revalidate()

    @on(Select.Changed, "#rest")
    def _rest(self, event: Select.Changed) -> None:
        if event.value == "auto":
            self.data.pop("slurm_rest_enabled", None)
        else:
            self.data["slurm_rest_enabled"] = event.value == "on"
        self.revalidate()

    @on(Select.Changed, "#operator-version")
    def _version(self, event: Select.Changed) -> None:
        key = "slurm_operator_version"
        # the select shows the default for a file without the key; that is not a change
        if event.value is not Select.NULL and (
            key in self.data or event.value != OPERATOR_VERSIONS[0]
        ):
            self.data[key] = str(event.value)
        self.revalidate()

    @on(Input.Changed, "#k8s-version")
    @on(Input.Changed, "#ng-version")
    def _versions(self, event: Input.Changed) -> None:
        key = "k8s_version" if event.input.id == "k8s-version" else "node_group_version"
        if event.value.strip():
            self.data[key] = event.value.strip()
        else:
            self.data.pop(key, None)
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

    def _worker_count(self) -> int:
        total = 0
        for pool in self.data.get("workers", []):
            size = pool.get("size", 1)
            total += size if isinstance(size, int) else 0
        return total

    def _refresh_presets(self) -> None:
        """Offer only presets sufficient for each role at the workers' sizing tier."""
        cat = self.npa.backend.catalog()
        workers = self._worker_count()
        ready, self._ready = self._ready, False
        try:
            for role, selector in ROLE_FIELDS:
                select = self.query_one(selector, Select)
                current = (self.data["control_plane"].get(role) or {}).get("preset")
                options = [
                    (f"{p.name}  ({p.vcpu} vCPU, {p.memory_gb} GB)", p.name)
                    for p in cat.role_presets(role, workers)
                ]
                if current and current not in [v for _, v in options]:
                    # keep what the file says; validation flags it instead of losing it
                    options.append((f"{current}  (not sufficient at this size)", current))
                select.set_options(options)
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
        self.issues = tuple(issues)

    def watch_issues(self) -> None:
        errors = {i.path for i in self.issues if i.is_error}
        banner = self.query_one(FileFindings)
        banner.findings = tuple(f for f in self.file_findings if f.path in errors)
        self._show_step_findings()
        if self.step == "review":
            self._render_review()
        self.refresh_bindings()

    def _deployable(self) -> bool:
        """A file was written from exactly what the form holds, and it validates."""
        return (
            self.path is not None
            and self.spec is not None
            and not self.dirty()
            and not any(i.is_error for i in self.issues)
        )

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
            box.update(Content("\n").join(_issue_markup(i) for i in issues))
            box.display = bool(issues)
        box = self.query_one("#step-findings", Static)
        box.update(Content("\n").join(_issue_markup(i) for i in rest))
        box.display = bool(rest)

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
            self._estimate_price(self.spec)
        else:
            preview.update("The spec cannot be built yet; fix the errors listed.")
            self.query_one("#totals", Static).update("")
        findings = self.query_one("#findings", Static)
        if self.issues:
            findings.update(Content("\n").join(_issue_markup(i) for i in self.issues))
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

    @work(thread=True, exclusive=True, group="price")
    def _estimate_price(self, spec: Any) -> None:
        """Ask the billing calculator in a thread (the SDK's first import takes a second)."""
        import asyncio

        from textual.worker import get_current_worker

        text = asyncio.run(self.npa.backend.price_estimate(spec))
        if text is not None and not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._show_price, text)

    def _show_price(self, text: str) -> None:
        price = self.query_one("#price", Static)
        price.update(text)
        price.display = True

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

        text, diff = self._new_text()
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
        self.notify(f"Wrote {self.path}", title="cluster.yaml")
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
            WizardScreen(
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


def _issue_markup(issue: Finding) -> Content:
    colour = "red" if issue.is_error else "yellow"
    return markup(f"[{colour}]{issue.level}[/] $text", text=issue_text(issue))
