"""Fixtures shared by every test folder: isolation, the local substrate, the fake kube API.

Markers (registered in pyproject.toml): `terraform` runs real Terraform, `slurm` needs the
Slurm/sshd substrate, `tui` drives the Textual app, `slow` takes more than ~5 s.
`pytest -m "not terraform and not slurm"` needs neither Terraform runs nor the substrate.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from testkit.gpu_lab import LABS, GpuLab, LabSite, held_gpu_lab
from testkit.kube import CONTEXT
from testkit.substrate import LAB, PrivateSshd, Substrate, held_exclusively, substrate_missing

# Under NPA_NO_SKIPS (scripts/test.sh, so CI) a skipped test fails: see testkit/ci_guards.py.
# The disk-full tests' tmpfs, with or without root: testkit/disks.py.
pytest_plugins = ["testkit.ci_guards", "testkit.disks"]

if TYPE_CHECKING:
    from npa_sop_tui.sandbox.fake_kube import FakeKubeServer

# Read once at start-up: the isolation fixture strips NPA_* from every test's environment.
REQUIRE_SUBSTRATE = bool(os.environ.get("NPA_REQUIRE_SUBSTRATE"))

# Variables that would let a test see the user's own npa home, cloud, Terraform or cluster.
STRIPPED_PREFIXES = ("NPA_", "TF_", "NEBIUS_", "AWS_")
STRIPPED_NAMES = ("KUBECONFIG", "SSH_AUTH_SOCK")

# Fixtures that reach the Slurm/sshd substrate: tests using them must be marked `slurm`.
SUBSTRATE_FIXTURES = frozenset({"substrate", "private_sshd", "drained_node", "gpu_lab"})


@pytest.fixture(autouse=True)
def npa_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test runs isolated: its own npa home and HOME, no inherited npa/cloud settings.

    The environment loses NPA_*, TF_*, NEBIUS_*, AWS_*, KUBECONFIG and SSH_AUTH_SOCK; a test
    that needs one sets it itself (monkeypatch restores everything afterwards). Returns the
    npa home.
    """
    for name in list(os.environ):
        if name.startswith(STRIPPED_PREFIXES) or name in STRIPPED_NAMES:
            monkeypatch.delenv(name)
    home = tmp_path / "npa-home"
    home.mkdir()
    monkeypatch.setenv("NPA_HOME", str(home))
    user_home = tmp_path / "user-home"
    user_home.mkdir()
    monkeypatch.setenv("HOME", str(user_home))  # never the machine's ~/.ssh, ~/.kube, ~/.npa
    return home


@pytest.fixture
def sandbox_in_home(npa_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`--sandbox` commands keep their state in the test's npa home itself.

    Normally the sandbox has its own home (`<home>/sandbox`); tests that look at the files a
    sandbox run leaves behind use this to find them where they always were.
    """
    monkeypatch.setenv("NPA_SANDBOX_HOME", str(npa_home))
    return npa_home


@pytest.fixture
def fast_standin(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stand-in recipe resources are created at once (the recipe's default is 1 s each)."""
    monkeypatch.setenv("TF_VAR_standin_sleep_seconds", "0")


# --- the Slurm/sshd substrate ------------------------------------------------------------


@pytest.fixture(scope="session")
def substrate() -> Substrate:
    """The substrate from scripts/substrate.sh. Skips only when NPA_REQUIRE_SUBSTRATE is unset."""
    missing = substrate_missing()
    if missing:
        msg = f"substrate not running ({missing}); run `bash scripts/substrate.sh start`"
        if REQUIRE_SUBSTRATE:
            pytest.fail(msg)
        pytest.skip(msg)
    return Substrate(LAB)


@pytest.fixture(params=LABS, ids=lambda site: f"slurm{site.slurm_version}")
def gpu_lab(request: pytest.FixtureRequest) -> Iterator[GpuLab]:
    """A Slurm lab with real slurmd nodes and its own login sshd, once per Slurm version the
    substrate runs (22.05 and 26.05: testkit/gpu_lab.py), held exclusively for one test
    (a lock file), node behaviour reset after. A lab that is not running skips the test,
    and fails it under NPA_REQUIRE_SUBSTRATE."""
    site: LabSite = request.param
    with held_gpu_lab(site, require=REQUIRE_SUBSTRATE) as lab:
        yield lab


@pytest.fixture(autouse=True)
def shared_substrate_held(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test of the `substrate` group (the :2222 slurmctld, its fake nodes, the shared login
    sshd) holds the substrate's lock file for its whole run. Within one run `--dist loadgroup`
    already keeps these tests in one worker; the lock keeps two runs on one machine (a second
    checkout's suite, a run beside CI) from draining a node under each other's tests."""
    if substrate_group(request.node) != "substrate" or not LAB.is_dir():
        yield
        return
    with held_exclusively(LAB / ".tests.lock"):
        yield


@pytest.fixture
def private_sshd(tmp_path: Path, substrate: Substrate) -> Iterator[PrivateSshd]:
    d = tmp_path / "sshd"
    d.mkdir()
    sshd = PrivateSshd(d, substrate)
    sshd.start()
    try:
        yield sshd
    finally:
        sshd.stop()


@pytest.fixture
def drained_node(substrate: Substrate) -> Iterator[tuple[str, str]]:
    """Drain a fake GPU node with a health-check reason; always undrain afterwards."""
    node, reason = "gpu-003", "[node_problem] gpu_health_check: XID 79 seen [hc_program]"
    subprocess.run(
        ["scontrol", "update", f"nodename={node}", "state=drain", f"reason={reason}"],
        check=True,
        capture_output=True,
    )
    try:
        yield node, reason
    finally:
        # The fake node never answers, so after SlurmdTimeout it is DOWN+DRAIN: undrain
        # clears the drain, resume clears DOWN and the reason. Either may report an error
        # depending on the state reached; the check below is what counts.
        for state in ("undrain", "resume"):
            subprocess.run(
                ["scontrol", "update", f"nodename={node}", f"state={state}"], capture_output=True
            )
        out = subprocess.run(
            ["sinfo", "-h", "-N", "-n", node, "-o", "%E"], capture_output=True, text=True
        ).stdout
        assert "node_problem" not in out, f"could not undrain {node}: {out}"


# tryfirst: the groups must be marked before pytest-xdist reads them (its own hook of the
# same name turns each `xdist_group` into a node-id suffix in every worker; each worker
# collects and sorts the same way, so the order below is the order work is handed out).
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test that reaches the substrate without the `slurm` marker would run (and skip or
    fail) under `-m "not slurm"`: refuse the run and name it. Then group the tests that share
    one piece of the substrate, for parallel runs (`pytest -n N --dist loadgroup`)."""
    unmarked = [
        item.nodeid
        for item in items
        if SUBSTRATE_FIXTURES & set(getattr(item, "fixturenames", ()))
        and item.get_closest_marker("slurm") is None
    ]
    if unmarked:
        raise pytest.UsageError(
            "these tests use the Slurm/sshd substrate but are not marked "
            "@pytest.mark.slurm:\n  " + "\n  ".join(unmarked)
        )
    for item in items:
        group = substrate_group(item)
        if group:
            item.add_marker(pytest.mark.xdist_group(group))
    if getattr(config.option, "numprocesses", None):
        # Long work first, so no worker is left with a several-minute test at the end while
        # the others idle: the Slurm lab groups, then tests marked `slow` (a stable sort:
        # the order within each kind stays the collection order).
        items.sort(key=lambda item: 0 if substrate_group(item) else 1 if slow(item) else 2)


def slow(item: pytest.Item) -> bool:
    return item.get_closest_marker("slow") is not None


def substrate_group(item: pytest.Item) -> str | None:
    """Which shared piece of the substrate a test changes, so that under `--dist loadgroup`
    all its tests run one after another in one worker process:

    - `gpu-lab-<version>`: one Slurm lab (its nodes' behaviour, queue and drain states; the
      lab's lock would make a second worker wait, and two labs run side by side);
    - `substrate`: every other `slurm` test (the :2222 slurmctld, its fake nodes that
      `drained_node` drains, the shared login sshd).

    Everything else only uses its own temporary folders and free ports, and may run anywhere.
    """
    callspec = getattr(item, "callspec", None)
    site = callspec.params.get("gpu_lab") if callspec is not None else None
    if isinstance(site, LabSite):
        return f"gpu-lab-{site.slurm_version}"
    if item.get_closest_marker("slurm") is not None:
        return "substrate"
    return None


# --- the fake Kubernetes API server ------------------------------------------------------


@pytest.fixture
def fake_kube() -> Iterator[FakeKubeServer]:
    from npa_sop_tui.sandbox.fake_kube import FakeKubeServer  # aiohttp: only when used

    with FakeKubeServer(bookmark_interval=0.2) as srv:
        yield srv


@pytest.fixture
def kubeconfig(fake_kube: FakeKubeServer, tmp_path: Path) -> Path:
    """A real kubeconfig file whose context `nebius-demo-slurm` points at `fake_kube`."""
    return fake_kube.write_kubeconfig(tmp_path / "kubeconfig", CONTEXT)
