"""First jobs, shipped as editable batch scripts (jobs/templates/*.sh). A file of the same
name in `<npa home>/job-templates/` replaces the shipped one; new files there are templates
too. A template's `# npa-…:` comment lines say what it is and which resources it takes:

    # npa-summary: one line for --list-templates
    # npa-nodes: all | N      (all: every node of the pool, or every GPU node)
    # npa-gpus: all | N       (all: every GPU of those nodes)

Options given on the command line win over these, as they do over `#SBATCH` lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from npa_sop_tui.errors import UsageError
from npa_sop_tui.jobs.model import JobRequest

SHIPPED = Path(__file__).with_name("templates")
USER_FOLDER = "job-templates"
_META = re.compile(r"^#\s*npa-(summary|nodes|gpus):\s*(.*?)\s*$")
# nccl-tests prints "# Avg bus bandwidth    : 171.234" (GB/s) after its table.
_AVG_BUSBW = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*([0-9.]+)", re.MULTILINE)


@dataclass
class Template:
    name: str
    path: Path
    summary: str
    nodes: str  # "all" or a number
    gpus: str
    text: str
    edited: bool  # the user's copy, not the shipped file

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "summary": self.summary,
            "path": str(self.path),
            "nodes": self.nodes,
            "gpus_per_node": self.gpus,
            "edited": self.edited,
        }


def user_folder() -> Path:
    from npa_sop_tui.home.paths import npa_home

    return npa_home() / USER_FOLDER


MAX_TEMPLATE_BYTES = 256 * 1024  # a batch script; more is not one


def _read(path: Path, edited: bool) -> Template:
    from npa_sop_tui.home.bounded_read import Unreadable, read_regular_text

    try:  # a FIFO, /dev/zero or a sparse giant in job-templates/ is refused at once
        text = read_regular_text(path, limit=MAX_TEMPLATE_BYTES, what="job template")
    except Unreadable as exc:
        raise UsageError(
            f"{path}: {exc.reason}",
            hint=exc.hint or f"remove it or make it a regular batch script in {path.parent}",
        ) from None
    meta = {"summary": "", "nodes": "1", "gpus": "0"}
    for line in text.splitlines():
        match = _META.match(line)
        if match:
            meta[match.group(1)] = match.group(2)
    for key in ("nodes", "gpus"):
        if meta[key] != "all" and not meta[key].isdigit():
            raise UsageError(f"{path}: `# npa-{key}: {meta[key]}` must be `all` or a number")
    return Template(path.stem, path, meta["summary"], meta["nodes"], meta["gpus"], text, edited)


def load_templates() -> list[Template]:
    """Every template, by name; the user's copy replaces a shipped one of the same name."""
    found = {p.stem: _read(p, False) for p in sorted(SHIPPED.glob("*.sh"))}
    folder = user_folder()
    if folder.is_dir():
        found.update({p.stem: _read(p, True) for p in sorted(folder.glob("*.sh"))})
    return [found[name] for name in sorted(found)]


def apply_template(name: str, request: JobRequest) -> JobRequest:
    """`request` running template `name`, its resources filled where the caller set none."""
    from npa_sop_tui.spec.findings import did_you_mean

    templates = {t.name: t for t in load_templates()}
    template = templates.get(name)
    if template is None:
        raise UsageError(
            f"no job template {name!r}",
            hint=did_you_mean(name, list(templates)) or "npa soperator run --list-templates",
        )
    request.script, request.script_name, request.template = template.text, template.path.name, name
    if request.nodes is None:
        if template.nodes == "all":
            request.all_nodes = True
        else:
            request.nodes = int(template.nodes)
    if request.gpus_per_node is None:
        if template.gpus == "all":
            request.all_gpus = True
        else:
            request.gpus_per_node = int(template.gpus)
    return request.checked()


def bus_bandwidth(output: str) -> float | None:
    """nccl-tests' average bus bandwidth (GB/s) in `output`, or None when it has none."""
    found = _AVG_BUSBW.findall(output)
    return float(found[-1]) if found else None
