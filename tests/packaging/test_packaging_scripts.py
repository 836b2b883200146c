"""The README's two commands: `scripts/run.sh` installs only when needed and says so first;
`scripts/substrate.sh` lives where it is told and can say what stop/purge would remove.

run.sh is exercised in a scratch copy of the repo whose .venv has a stand-in pip (it records
each call) and npa-sop, so the stamp logic is tested without reinstalling anything.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _scratch(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "run.sh", repo / "scripts" / "run.sh")
    (repo / "pyproject.toml").write_text('[project]\nname = "x"\n')
    bin_dir = repo / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "python").write_text("#!/bin/sh\nexit 0\n")
    (bin_dir / "pip").write_text(
        "#!/bin/sh\n"
        'echo "pip $*" >> "$(dirname "$0")/../pip-calls"\n'
        'echo "Collecting things"\n'
        '[ -n "$FAIL_PIP" ] && exit 1\n'
        'printf \'#!/bin/sh\\necho "npa-sop $*"\\n\' > "$(dirname "$0")/npa-sop"\n'
        'chmod +x "$(dirname "$0")/npa-sop"\n'
    )
    for name in ("python", "pip"):
        (bin_dir / name).chmod(0o755)
    return repo


def _run(
    repo: Path, *args: str, cwd: Path | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(repo / "scripts" / "run.sh"), *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        cwd=cwd,
        timeout=60,
        check=False,
    )


def _pip_calls(repo: Path) -> int:
    calls = repo / ".venv" / "pip-calls"
    return len(calls.read_text().splitlines()) if calls.exists() else 0


def test_run_sh_installs_once_and_again_only_when_needed(tmp_path: Path) -> None:
    repo = _scratch(tmp_path)
    first = _run(repo, "--sandbox")
    assert first.returncode == 0, first.stderr
    assert first.stderr.startswith("==> installing npa-sop-tui")  # said before pip starts
    assert "Collecting things" in first.stdout  # pip's own progress is shown, not hidden
    assert first.stdout.strip().endswith("npa-sop --sandbox")
    assert _pip_calls(repo) == 1
    assert "--progress-bar on -e .[sandbox]" in (repo / ".venv" / "pip-calls").read_text()

    again = _run(repo, "--sandbox")
    assert again.returncode == 0 and "installing" not in again.stderr
    assert _pip_calls(repo) == 1  # nothing changed: no pip at all

    (repo / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "2"\n')
    assert _run(repo).returncode == 0 and _pip_calls(repo) == 2  # pyproject changed

    (repo / ".venv" / ".npa-run-installed").unlink()  # a recreated venv has no stamp
    assert _run(repo).returncode == 0 and _pip_calls(repo) == 3


def test_the_app_starts_in_the_callers_folder(tmp_path: Path) -> None:
    """./cluster.yaml and the paths typed into `o` are the user's folder's, not the repo's."""
    repo = _scratch(tmp_path)
    assert _run(repo).returncode == 0  # installed
    (repo / ".venv" / "bin" / "npa-sop").write_text('#!/bin/sh\necho "in $PWD"\n')
    project = tmp_path / "my project"
    project.mkdir()
    started = _run(repo, "--sandbox", cwd=project)
    assert started.returncode == 0, started.stderr
    assert started.stdout.strip() == f"in {project}"


def test_run_sh_stops_when_pip_fails_and_retries_next_time(tmp_path: Path) -> None:
    repo = _scratch(tmp_path)
    failed = _run(repo, FAIL_PIP="1")
    assert failed.returncode == 1
    assert "pip install failed" in failed.stderr and "npa-sop" not in failed.stdout
    assert not (repo / ".venv" / ".npa-run-installed").exists()
    assert _run(repo).returncode == 0 and _pip_calls(repo) == 2


def test_substrate_folder_is_configurable_and_purge_can_be_previewed(tmp_path: Path) -> None:
    lab = tmp_path / "lab"
    lab.mkdir()
    (lab / "created").write_text("user-slurmops\nmunge-key\n")
    env = {**os.environ, "NPA_SUBSTRATE_DIR": str(lab)}
    env.pop("LAB", None)
    script = ROOT / "scripts" / "substrate.sh"
    status = subprocess.run(
        ["bash", str(script), "status"], capture_output=True, text=True, env=env, check=False
    )
    assert f"down {lab}/sshd.pid" in status.stdout  # this folder's sshd, not the default one
    done = subprocess.run(
        ["bash", str(script), "purge", "--dry-run"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert f"would run: rm -rf {lab}" in lines
    assert "would run: rm -f /etc/munge/munge.key" in lines  # listed as created by start
    assert all(line.startswith(("would ", "packages are left")) for line in lines), lines
    # the machine's one Slurm 26.05 lab belongs to the folder that started it, not this one
    assert not [line for line in lines if "npa-lab" in line or "sid-root/" in line], lines
    assert lab.is_dir() and (lab / "created").is_file()  # a dry run changes nothing


def test_license_matches_the_metadata() -> None:
    name = "LICENSE"
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == {"text": "Apache-2.0"}
    assert "Apache License" in (ROOT / name).read_text()[:200]
    assert "Version 2.0" in (ROOT / name).read_text()[:300]
    assert "License :: OSI Approved :: Apache Software License" in project["classifiers"]
