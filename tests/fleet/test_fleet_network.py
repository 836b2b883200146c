"""fleet/network.py: one network per fleet project, reused when the file names a subnet and
created through a provider otherwise; its record says who owns it, and destroy releases
exactly what the fleet made, never a network it cannot delete from here."""

from __future__ import annotations

import json
import stat
import time
from pathlib import Path
from typing import Literal

import pytest

from npa_sop_tui.errors import UsageError
from npa_sop_tui.fleet.network import (
    NETWORK_FILE,
    NetworkRecord,
    SandboxNetworks,
    ensure_network,
    planned_subnet,
    project_root,
    read_record,
    record_path,
    release_network,
)

NO_NETWORK = "project 'alpha' has no subnet_id and this tool cannot create Nebius VPC networks yet"
NO_NETWORK_HINT = (
    "set projects[].subnet_id to an existing subnet of that project (or run the fleet "
    "against the sandbox stand-in with --sandbox)"
)


class RecordingNetworks:
    """A network provider (the cloud's side) that records what it was asked to do."""

    kind: Literal["sandbox"] = "sandbox"

    def __init__(self) -> None:
        self.calls: list[tuple[str, ...]] = []

    def preview(self, fleet: str, project_key: str, project_id: str | None) -> str:
        self.calls.append(("preview", fleet, project_key, str(project_id)))
        return f"vpcsubnet-next-{project_key}"

    def create(self, fleet: str, project_key: str, project_id: str | None) -> str:
        self.calls.append(("create", fleet, project_key, str(project_id)))
        return f"vpcsubnet-made-{project_key}"

    def delete(self, subnet_id: str) -> None:
        self.calls.append(("delete", subnet_id))


def test_records_live_in_the_projects_folder_of_the_fleet(npa_home: Path) -> None:
    assert project_root("f", "alpha") == npa_home / "fleet" / "f" / "alpha"
    assert record_path("f", "alpha") == npa_home / "fleet" / "f" / "alpha" / NETWORK_FILE
    assert NETWORK_FILE == ".npa-fleet-network.json"


def test_a_subnet_the_file_names_is_recorded_as_not_owned(npa_home: Path) -> None:
    provider = RecordingNetworks()
    before = time.time()
    record = ensure_network("f", "alpha", "project-e00a", "vpcsubnet-given", provider)
    assert (record.subnet_id, record.owned, record.provider) == (
        "vpcsubnet-given",
        False,
        "existing",
    )
    assert (record.fleet, record.project_key, record.project_id) == ("f", "alpha", "project-e00a")
    assert before <= record.created <= time.time()
    assert provider.calls == []  # nothing was created
    path = record_path("f", "alpha")
    assert read_record("f", "alpha") == record
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_text() == record.model_dump_json(indent=2) + "\n"  # for people, too
    assert json.loads(path.read_text())["owned"] is False


def test_without_a_subnet_the_provider_creates_one_the_fleet_owns() -> None:
    provider = RecordingNetworks()
    made = ensure_network("f", "beta", "project-e00b", None, provider)
    assert made.project_id == "project-e00b"
    assert provider.calls == [("create", "f", "beta", "project-e00b")]
    provider.calls.clear()
    record = ensure_network("f", "alpha", None, None, provider)
    assert (record.subnet_id, record.owned, record.provider) == (
        "vpcsubnet-made-alpha",
        True,
        "sandbox",
    )
    assert record.project_id is None
    assert provider.calls == [("create", "f", "alpha", "None")]
    # on the next deploy the record is reused: nothing is created twice
    assert ensure_network("f", "alpha", None, None, provider) == record
    assert len(provider.calls) == 1


def test_without_a_subnet_or_a_provider_nothing_is_recorded() -> None:
    with pytest.raises(UsageError) as info:
        ensure_network("f", "alpha", "project-e00a", None, None)
    assert (info.value.message, info.value.hint) == (NO_NETWORK, NO_NETWORK_HINT)
    assert not record_path("f", "alpha").exists()


def test_a_recorded_subnet_cannot_be_moved_by_editing_the_file() -> None:
    ensure_network("f", "alpha", None, "vpcsubnet-one", None)
    assert ensure_network("f", "alpha", None, "vpcsubnet-one", None).subnet_id == "vpcsubnet-one"
    assert ensure_network("f", "alpha", None, None, None).subnet_id == "vpcsubnet-one"
    with pytest.raises(UsageError) as info:
        ensure_network("f", "alpha", None, "vpcsubnet-two", None)
    assert info.value.message == (
        "project 'alpha' of fleet 'f' already uses subnet 'vpcsubnet-one', but the fleet file "
        "now says 'vpcsubnet-two'"
    )
    assert info.value.hint == (
        "restore the original subnet_id; moving deployed clusters is not supported"
    )
    assert read_record("f", "alpha").subnet_id == "vpcsubnet-one"  # type: ignore[union-attr]


def test_a_plan_says_which_subnet_without_creating_or_recording_anything() -> None:
    provider = RecordingNetworks()
    assert planned_subnet("f", "alpha", "project-e00a", None, provider) == "vpcsubnet-next-alpha"
    assert provider.calls == [("preview", "f", "alpha", "project-e00a")]
    assert planned_subnet("f", "alpha", None, "vpcsubnet-given", provider) == "vpcsubnet-given"
    assert len(provider.calls) == 1
    assert not record_path("f", "alpha").exists()
    with pytest.raises(UsageError) as info:
        planned_subnet("f", "alpha", None, None, None)
    assert (info.value.message, info.value.hint) == (NO_NETWORK, NO_NETWORK_HINT)
    # once recorded, the record is the answer, whatever the file or the provider says
    ensure_network("f", "alpha", None, "vpcsubnet-kept", None)
    assert planned_subnet("f", "alpha", None, "vpcsubnet-other", provider) == "vpcsubnet-kept"
    assert planned_subnet("f", "alpha", None, None, None) == "vpcsubnet-kept"


def test_a_network_record_owned_by_the_fleet_is_kept_when_no_provider_can_release_it() -> None:
    ensure_network("f", "alpha", None, None, RecordingNetworks())
    assert release_network("f", "alpha", None) is False
    kept = read_record("f", "alpha")
    assert kept is not None and kept.owned and kept.subnet_id == "vpcsubnet-made-alpha"


def test_an_owned_network_is_deleted_through_the_provider_then_forgotten() -> None:
    provider = RecordingNetworks()
    ensure_network("f", "alpha", None, None, provider)
    assert release_network("f", "alpha", provider) is True
    assert provider.calls[-1] == ("delete", "vpcsubnet-made-alpha")
    assert read_record("f", "alpha") is None
    assert release_network("f", "alpha", provider) is False  # nothing left to release
    assert provider.calls[-1] == ("delete", "vpcsubnet-made-alpha")


@pytest.mark.parametrize("with_provider", [True, False])
def test_a_subnet_the_fleet_did_not_make_is_only_forgotten(with_provider: bool) -> None:
    provider = RecordingNetworks()
    ensure_network("f", "alpha", None, "vpcsubnet-given", None)
    assert release_network("f", "alpha", provider if with_provider else None) is True
    assert provider.calls == []  # never deleted: it is the user's
    assert not record_path("f", "alpha").exists()


@pytest.mark.parametrize(
    ("content", "damage"),
    [
        ("{not json", "Invalid JSON"),
        ('{"fleet": "f"}', "project_key: Field required"),
        (b"\xff\xfe", "cannot read it"),
    ],
)
def test_a_damaged_record_is_a_usage_error_naming_the_file(
    content: str | bytes, damage: str
) -> None:
    path = record_path("f", "alpha")
    path.parent.mkdir(parents=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    for call in (
        lambda: read_record("f", "alpha"),
        lambda: ensure_network("f", "alpha", None, "vpcsubnet-x", None),
        lambda: release_network("f", "alpha", RecordingNetworks()),
    ):
        with pytest.raises(UsageError) as info:
            call()
        assert (
            info.value.message.startswith(f"{path}: the fleet network record is damaged: ")
            and damage in info.value.message
        )
        assert info.value.hint == (
            "restore it or remove it after checking the project's networks by hand"
        )
    assert path.exists()  # nothing overwritten


def test_a_record_that_is_a_folder_cannot_be_read() -> None:
    record_path("f", "alpha").mkdir(parents=True)
    with pytest.raises(UsageError, match="the fleet network record is damaged: cannot read it"):
        read_record("f", "alpha")


def test_the_sandbox_network_is_one_stable_id_per_project_and_nothing_to_delete() -> None:
    sandbox = SandboxNetworks()
    assert sandbox.kind == "sandbox"
    assert sandbox.preview("f", "alpha", None) == "vpcsubnet-sandbox-f-alpha"
    assert sandbox.create("f", "alpha", "project-e00a") == "vpcsubnet-sandbox-f-alpha"
    assert sandbox.delete("vpcsubnet-sandbox-f-alpha") is None


def test_a_record_refuses_unknown_fields_and_providers() -> None:
    fields = {"fleet": "f", "project_key": "a", "project_id": None, "subnet_id": "s",
              "owned": True, "provider": "sandbox", "created": 1.0}  # fmt: skip
    assert NetworkRecord(**fields).provider == "sandbox"
    with pytest.raises(ValueError, match="extra"):
        NetworkRecord(**fields, note="x")
    with pytest.raises(ValueError, match="provider"):
        NetworkRecord(**{**fields, "provider": "nebius"})
