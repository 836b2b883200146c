"""The worker pool form: choices are filtered so that an invalid pool is hard to build.

Platforms come from the region, presets from the platform, fabrics from the region (GPU
pools only); the docker cache size is chosen in the recipe's disk steps (93 GiB). What is still
wrong (a name with a space, say) is flagged inline and blocks Save.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import (
    Button,
    Input,
    Label,
    RadioButton,
    RadioSet,
    Select,
    Static,
    Switch,
)

from npa_sop_tui.tui.catalog_view import CatalogView, capacity_mode
from npa_sop_tui.tui.safety import Guarded
from npa_sop_tui.tui.widgets.footer import AppFooter

NAME_RE = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$")
CACHE_STEPS = 40  # up to 3720 GiB; larger caches can still be set in the YAML
CAPACITY_MODES = ("on-demand", "preemptible", "reserved")
DEFAULT_CPU_PRESET = "8vcpu-32gb"  # the spec's default for a worker pool
PROBLEM_FIELDS = {
    "Name": "#pool-name",
    "Platform": "#pool-platform",
    "Preset": "#pool-preset",
    "Size": "#pool-size",
    "Fabric": "#pool-fabric",
    "Capacity": "#pool-capacity",
}
"""Which field a `build()` problem (prefixed "Field: …") is about."""


class PoolEditor(Guarded, ModalScreen[dict[str, Any] | None]):
    """Edit one worker pool; dismisses with the new pool mapping, or None on cancel."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Cancel", id="pool.cancel"),
        Binding("ctrl+s", "save", "Save pool", id="pool.save"),
    ]

    def __init__(
        self,
        pool: dict[str, Any],
        *,
        region: str,
        catalog: CatalogView,
        taken_names: set[str],
        title: str,
    ) -> None:
        super().__init__()
        self.pool = dict(pool)
        self.pool_region = region
        self.catalog = catalog
        self.taken_names = taken_names
        self.title_text = title
        self._refused = False
        """A save was refused: from then on the error shown follows the form."""

    def compose(self) -> ComposeResult:
        pool = self.pool
        platforms = self.catalog.platforms(self.pool_region)
        default = "cpu-d3" if "cpu-d3" in platforms else (platforms[0] if platforms else "")
        platform = pool.get("platform") or default
        mode = capacity_mode(pool)
        with Vertical(classes="dialog wide", id="pool-editor"):
            with Horizontal(id="pool-title-row"):
                yield Label(self.title_text, classes="dialog-title", markup=False)
                yield Static(
                    "[b]ctrl+s[/b] save · [b]esc[/b] cancel · [b]tab[/b] next field",
                    id="pool-keys",
                )
            with VerticalScroll(id="pool-form"):
                yield Label("Name (Slurm nodes are called <name>-<index>)")
                yield Input(pool.get("name", ""), id="pool-name", max_length=40)
                yield Label(
                    f"Platform (offered in {self.pool_region or 'the region'})", markup=False
                )
                yield Select(
                    [(f"{p}  ({self.catalog.platform_offer(p)})", p) for p in platforms],
                    value=platform if platform in platforms else Select.NULL,
                    id="pool-platform",
                    allow_blank=not platforms,
                )
                # side by side (tab order unchanged): at 80x24 the Size field was below the
                # fold until tabbed to
                with Horizontal(classes="pool-pair"):
                    with Vertical(classes="pool-cell"):
                        yield Label("Preset")
                        yield Select([], id="pool-preset", prompt="choose a preset")
                    with Vertical(classes="pool-cell pool-size-cell"):
                        yield Label("Size (nodes)")
                        yield Input(str(pool.get("size", 1)), id="pool-size", type="integer")
                with Vertical(id="gpu-only"):
                    yield Label("InfiniBand fabric (GPU pools)")
                    yield Select(
                        [(f, f) for f in self.catalog.fabrics(self.pool_region)],
                        id="pool-fabric",
                        prompt="choose a fabric",
                    )
                yield Label("Capacity")
                with RadioSet(id="pool-capacity"):
                    for m in CAPACITY_MODES:
                        yield RadioButton(m, value=(m == mode), id=f"cap-{m}")
                with Vertical(id="reserved-only"):
                    yield Label("Capacity block group name (IDs are given at deploy time)")
                    yield Input(pool.get("capacity_block_group_name", ""), id="pool-cbg-name")
                with Horizontal(classes="switch-row"):
                    yield Switch(bool(pool.get("docker_cache", False)), id="pool-cache")
                    yield Label("Docker image cache on a node-local disk")
                step = self.catalog.disk_step_gib()
                yield Select(
                    [(f"{k * step} GiB", k * step) for k in range(1, CACHE_STEPS + 1)],
                    id="pool-cache-size",
                    allow_blank=False,
                    value=self._cache_value(pool),
                )
            yield Static("", id="pool-error", classes="inline-error", markup=False)
            with Horizontal(classes="buttons"):
                yield Button("Cancel (esc)", id="pool-cancel", compact=True)
                yield Button("Save pool (ctrl+s)", id="pool-save", variant="primary", compact=True)
        yield AppFooter()

    def _cache_value(self, pool: dict[str, Any]) -> int:
        step = self.catalog.disk_step_gib()
        gib = int(pool.get("docker_cache_gib") or 4 * step)
        steps = max(1, min(CACHE_STEPS, round(gib / step)))
        return steps * step

    def on_mount(self) -> None:
        self._platform_changed(self.pool.get("preset"))
        self._sync_visibility()
        self.query_one("#pool-name", Input).focus()

    # -- dependent choices -----------------------------------------------------------------

    def _platform(self) -> str:
        value = self.query_one("#pool-platform", Select).value
        return "" if value is Select.NULL else str(value)

    def _platform_changed(self, keep_preset: str | None = None) -> None:
        platform = self._platform()
        presets = self.catalog.presets(platform)
        select = self.query_one("#pool-preset", Select)
        select.set_options(
            (
                f"{p.name}  ({p.vcpu} vCPU, {p.memory_gb} GB"
                + (f", {p.gpus} GPU)" if p.gpus else ")"),
                p.name,
            )
            for p in presets
        )
        names = [p.name for p in presets]
        if keep_preset in names:
            select.value = keep_preset
        elif self.catalog.is_gpu_platform(platform) and names:
            select.value = names[-1]  # the full-host (8-GPU) preset is the one that clusters
        elif DEFAULT_CPU_PRESET in names:
            select.value = DEFAULT_CPU_PRESET
        elif names:
            select.value = names[0]
        fabric = self.query_one("#pool-fabric", Select)
        current = self.pool.get("fabric")
        options = self.catalog.fabrics(self.pool_region)
        if current and current in options:
            fabric.value = current
        elif options and fabric.value is Select.NULL:
            fabric.value = options[0]

    @on(Select.Changed, "#pool-platform")
    def _on_platform(self) -> None:
        # keep the chosen preset when the new platform offers it too (this also fires once
        # on mount, when it must not replace the preset read from the file)
        current = self.query_one("#pool-preset", Select).value
        keep = self.pool.get("preset") if current is Select.NULL else str(current)
        self._platform_changed(keep)
        self._sync_visibility()

    @on(Input.Submitted)
    def _next_field(self) -> None:
        # Enter in a text field moves on, as in a form; saving stays an explicit ctrl+s
        self.focus_next()

    @on(RadioSet.Changed, "#pool-capacity")
    @on(Switch.Changed, "#pool-cache")
    def _on_toggle(self) -> None:
        self._sync_visibility()

    def _mode(self) -> str:
        pressed = self.query_one("#pool-capacity", RadioSet).pressed_button
        return str(pressed.id).removeprefix("cap-") if pressed is not None else "on-demand"

    def _sync_visibility(self) -> None:
        gpu = self.catalog.is_gpu_platform(self._platform())
        self.query_one("#gpu-only").display = gpu
        self.query_one("#reserved-only").display = self._mode() == "reserved"
        self.query_one("#pool-cache-size").display = self.query_one("#pool-cache", Switch).value

    # -- result ----------------------------------------------------------------------------

    def build(self) -> tuple[dict[str, Any] | None, str]:
        """The pool mapping from the form, or None and why it can't be saved."""
        name = self.query_one("#pool-name", Input).value.strip()
        if not NAME_RE.match(name):
            return None, (
                "Name: lowercase letters, digits and dashes, starting and ending with a "
                "letter or digit (e.g. gpu-a)."
            )
        if name in self.taken_names:
            return None, f"Name: another pool is already called {name!r}."
        platform = self._platform()
        if not platform:
            return None, f"Platform: none is offered in {self.pool_region}; pick another region."
        preset = self.query_one("#pool-preset", Select).value
        if preset is Select.NULL:
            return None, "Preset: choose one."
        size_text = self.query_one("#pool-size", Input).value.strip()
        if not size_text.isdigit() or int(size_text) < 1:
            return None, "Size: a whole number of nodes, at least 1."
        pool = dict(self.pool)  # keeps settings this form doesn't show (boot disk, disk type…)
        pool.update(name=name, platform=platform, preset=str(preset), size=int(size_text))
        gpu = self.catalog.is_gpu_platform(platform)
        if gpu:
            fabric = self.query_one("#pool-fabric", Select).value
            if fabric is Select.NULL:
                return None, f"Fabric: GPU pools need an InfiniBand fabric in {self.pool_region}."
            pool["fabric"] = str(fabric)
        else:
            pool.pop("fabric", None)
        mode = self._mode()
        pool.pop("capacity_block_group", None)
        pool.pop("capacity_block_group_name", None)
        pool["preemptible"] = mode == "preemptible"
        if mode == "reserved":
            if not gpu:
                return None, "Capacity: reserved capacity blocks exist only for GPU pools."
            group = self.query_one("#pool-cbg-name", Input).value.strip()
            if not group:
                return None, "Capacity: name the capacity block group to use."
            pool["capacity_block_group_name"] = group
        if not pool["preemptible"] and "preemptible" not in self.pool:
            pool.pop("preemptible")
        cache = self.query_one("#pool-cache", Switch).value
        if cache:
            pool["docker_cache"] = True
            pool["docker_cache_gib"] = int(self.query_one("#pool-cache-size", Select).value)  # type: ignore[arg-type]
        elif "docker_cache" in pool:
            pool["docker_cache"] = False
        return pool, ""

    @on(Input.Changed)
    @on(Select.Changed)
    @on(RadioSet.Changed)
    @on(Switch.Changed)
    def _recheck(self) -> None:
        """Once a save was refused, every change checks the form again: a fixed field's
        error goes at once (the next problem, if any, takes its place)."""
        if self._refused:
            self._show_problem(self.build()[1])

    def _show_problem(self, problem: str) -> None:
        self.query_one("#pool-error", Static).update(problem)

    @on(Button.Pressed, "#pool-save")
    def action_save(self) -> None:
        pool, problem = self.build()
        if pool is None:
            self._refused = True
            self._show_problem(problem)
            # put the cursor on the field that needs fixing
            field = PROBLEM_FIELDS.get(problem.split(":", 1)[0])
            if field is not None:
                widget = self.query_one(field)
                if widget.display and widget.focusable:
                    widget.focus()
            return
        self.dismiss(pool)

    @on(Button.Pressed, "#pool-cancel")
    def _cancel(self) -> None:
        self.dismiss(None)
