"""Job templates: shipped as editable files, replaced by the user's copy, applied to a
request (command-line options win), and nccl-tests' bus bandwidth read from the output."""

from __future__ import annotations

from pathlib import Path

import pytest

from npa_sop_tui.errors import UsageError
from npa_sop_tui.jobs.model import JobRequest
from npa_sop_tui.jobs.script import sbatch_directives
from npa_sop_tui.jobs.templates import apply_template, bus_bandwidth, load_templates

# The tail of nccl-tests' all_reduce_perf output (its format: a table, then the average).
NCCL_OUTPUT = (Path(__file__).parent / "data" / "nccl_allreduce_tail.txt").read_text()


def test_shipped_templates_and_their_resources(npa_home: Path) -> None:
    templates = {t.name: t for t in load_templates()}
    assert set(templates) == {"cpu-hello", "gpu-hello", "nccl-allreduce"}
    assert all(t.summary and t.path.is_file() and not t.edited for t in templates.values())
    request = apply_template("gpu-hello", JobRequest())
    assert request.all_nodes and request.all_gpus and request.auto_gpus
    assert "#SBATCH --job-name=npa-gpu-hello" in sbatch_directives(request.script or "")
    cpu = apply_template("cpu-hello", JobRequest(nodes=2))  # the command line wins
    assert (cpu.nodes, cpu.gpus_per_node, cpu.all_nodes, cpu.auto_gpus) == (2, 0, False, False)


def test_the_users_copy_replaces_the_shipped_one(npa_home: Path) -> None:
    folder = npa_home / "job-templates"
    folder.mkdir()
    (folder / "gpu-hello.sh").write_text("# npa-summary: mine\n# npa-nodes: 3\nhostname\n")
    (folder / "mine.sh").write_text("# npa-summary: new\necho mine\n")
    templates = {t.name: t for t in load_templates()}
    assert templates["gpu-hello"].edited and templates["gpu-hello"].summary == "mine"
    assert apply_template("gpu-hello", JobRequest()).nodes == 3
    assert "mine" in templates
    (folder / "bad.sh").write_text("# npa-gpus: lots\n")
    with pytest.raises(UsageError, match="npa-gpus: lots"):
        load_templates()


def test_unknown_template_suggests_a_name(npa_home: Path) -> None:
    with pytest.raises(UsageError, match="no job template 'gpu-helo'") as caught:
        apply_template("gpu-helo", JobRequest())
    assert "gpu-hello" in (caught.value.hint or "")


def test_bus_bandwidth_is_read_from_nccl_tests_output() -> None:
    assert bus_bandwidth(NCCL_OUTPUT) == 433.571
    assert bus_bandwidth("all_reduce_perf (nccl-tests) is not in this image") is None


@pytest.mark.parametrize(
    ("kind", "said"),
    [
        ("dev-zero", "is a character device, not a job template"),
        ("sparse", "job template is larger than 256 KiB"),
        ("fifo", "is a named pipe (FIFO), not a job template"),
    ],
)
def test_a_template_that_never_ends_or_blocks_is_refused_at_once(
    npa_home: Path, kind: str, said: str
) -> None:
    """Defect: a file in job-templates/ that is /dev/zero or a sparse 3 GB file was read to
    the end (MemoryError), a FIFO hung `--list-templates`. Refused (exit 2) naming it; run as
    a process, so a hang fails by timeout instead of hanging the suite."""
    import os
    import subprocess
    import sys

    from testkit.hostile_files import plant

    folder = npa_home / "job-templates"
    folder.mkdir()
    planted = plant(folder / "planted.sh", kind)
    npa = Path(sys.executable).parent / "npa"
    done = subprocess.run(
        [str(npa), "soperator", "run", "--name", "demo", "--list-templates"],
        capture_output=True,
        text=True,
        env={**os.environ, "NPA_HOME": str(npa_home)},
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert f"{planted}: {said}" in done.stderr and "Traceback" not in done.stderr
