"""lifecycle/adopt_spec.py: the adopted cluster.yaml's comments stay comments."""

from __future__ import annotations

from pathlib import Path

import yaml

from npa_sop_tui.lifecycle.adopt_spec import Reversed
from npa_sop_tui.spec.findings import error
from npa_sop_tui.spec.model import spec_from_mapping
from npa_sop_tui.spec.yaml_dump import dump_spec_yaml

from testkit.lifecycle import ROOT_KEY


def test_hostile_paths_and_values_cannot_leave_the_comments() -> None:
    spec = spec_from_mapping(
        {"name": "adopted", "root_login_ssh_public_key": ROOT_KEY, "workers": [{"name": "cpu"}]}
    )
    reversed_ = Reversed(
        spec=spec,
        spec_yaml=dump_spec_yaml(spec),
        kept=["slurm_login_ssh_root_public_keys"],
        kept_variables=["nfs_in_k8s"],
        defaulted=["jail_size_gib"],
        findings=[error("workers[0].preset", "bad\nname: injected\x1b[31m")],
        mismatch=[("slurm_login_ssh_root_public_keys", ["a\nb: c"], ["a"])],
    )
    text = reversed_.annotated(Path("/tmp/in\nname: evil"), Path("/h/v.json"), npa=True)
    head, _, _ = text.partition("apiVersion:")
    assert all(line.startswith("#") for line in head.splitlines())
    assert "\x1b" not in text
    assert yaml.safe_load(text) == yaml.safe_load(dump_spec_yaml(spec))  # comments only
    assert "jail_size_gib: 512 (the installation's jail is an existing filesystem)" in text
