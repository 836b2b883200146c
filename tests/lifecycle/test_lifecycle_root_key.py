"""Where the root login key comes from when planning: a flag, the spec, or a sandbox pair."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest

from npa_sop_tui.errors import UsageError
from npa_sop_tui.lifecycle import api as lifecycle
from npa_sop_tui.spec.sshkeys import fingerprint

# The machine's own ~/.ssh and NPA_* keys never leak in: tests/conftest.py isolates HOME and env.
pytestmark = pytest.mark.terraform

OTHER_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHv2tNQ0ERRmI3r4Qj2b5Z0ljTy0cSM2aGm1s1yHqC4v other"


def _rendered_keys(result: Any) -> list[str]:
    tfvars = Path(result.install_dir) / "terraform.tfvars.json"
    return json.loads(tfvars.read_text())["slurm_login_ssh_root_public_keys"]


async def test_sandbox_without_any_key_generates_a_private_pair(
    make_spec: Any, sandbox_options: Any, npa_home: Path
) -> None:
    spec = make_spec("keyless", root_login_ssh_public_key=None)
    result = await lifecycle.plan(spec, options=sandbox_options())
    public = npa_home / "ssh" / "id_ed25519.pub"  # under the sandbox home (here: npa_home)
    private = npa_home / "ssh" / "id_ed25519"
    assert _rendered_keys(result) == [public.read_text().strip()]
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    # A second plan reuses the same pair instead of minting a new one each time.
    again = await lifecycle.plan(spec, options=sandbox_options())
    assert _rendered_keys(again) == _rendered_keys(result)


async def test_key_file_flag_wins_over_the_spec_key(
    make_spec: Any, sandbox_options: Any, tmp_path: Path, recorder: Any
) -> None:
    key_file = tmp_path / "other.pub"
    key_file.write_text(OTHER_KEY + "\n")
    result = await lifecycle.plan(
        make_spec("flagkey"),
        options=sandbox_options(root_login_key_file=key_file),
        on_event=recorder,
    )
    assert _rendered_keys(result) == [OTHER_KEY]
    notes = " ".join(e.text for e in recorder.kinds("log_line"))
    assert fingerprint(OTHER_KEY) in notes and OTHER_KEY.split()[1] not in notes


async def test_broken_key_file_is_an_error_even_in_the_sandbox(
    make_spec: Any, sandbox_options: Any, tmp_path: Path
) -> None:
    broken = tmp_path / "broken.pub"
    broken.write_text("not a key\n")
    with pytest.raises(UsageError) as caught:
        await lifecycle.plan(
            make_spec("badkey"), options=sandbox_options(root_login_key_file=broken)
        )
    assert "broken.pub" in caught.value.render() or "--root-login" in caught.value.render()
