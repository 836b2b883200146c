"""Loading specs: positions, YAML pitfalls, strict types, round trips."""

from __future__ import annotations

from pathlib import Path

import pytest

from npa_sop_tui.errors import UsageError
from npa_sop_tui.spec.model import (
    SoperatorSpec,
    SpecError,
    WorkerPoolSpec,
    load_spec,
    parse_spec_text,
    spec_from_mapping,
)
from npa_sop_tui.spec.yaml_dump import dump_spec_yaml

from testkit.specs import ASSETS, MINIMAL


def _errors(text: str, source: str = "cluster.yaml") -> list[str]:
    with pytest.raises(SpecError) as info:
        parse_spec_text(text, source=source)
    return [f.render() for f in info.value.findings if f.is_error]


def test_readme_example_loads_clean() -> None:
    loaded = load_spec(ASSETS / "cluster.yaml")
    spec = loaded.spec
    assert spec.name == "npasop"
    assert [p.name for p in spec.workers] == ["gpu", "cpu8"]
    assert spec.worker_count == 3 and spec.sizing_tier == "XS"
    assert spec.kube_context == "nebius-npasop-slurm"
    assert loaded.findings == []


def test_error_positions_point_at_the_value() -> None:
    text = MINIMAL + "    fabric: fabric-3\n"
    errs = _errors(text)
    assert errs == [
        "cluster.yaml:8:13 workers[0].fabric: CPU pools must not set 'fabric' (hint: remove fabric)"
    ]


def test_all_problems_reported_at_once_in_file_order() -> None:
    text = """\
apiVersion: npa.soperator/v0.0.1
name: Demo_1
workers:
  - name: cpu
    size: x
    fabrc: a
    preemptible: "false"
"""
    errs = _errors(text)
    # model errors and the rule errors of the readable rest, together, in file order
    assert errs[0].startswith("cluster.yaml:2:7 name: cluster name 'Demo_1' breaks the recipe")
    assert errs[1].startswith("cluster.yaml:5:11 workers[0].size: must be a whole number")
    assert errs[2].startswith("cluster.yaml:6:5 workers[0].fabrc: unknown field 'fabrc'")
    assert "did you mean 'fabric'?" in errs[2]
    assert errs[3].startswith("cluster.yaml:7:18 workers[0].preemptible: must be true or false")
    assert len(errs) == 4


def test_rules_skip_fields_the_model_rejected() -> None:
    text = MINIMAL.replace("size: 2", "size: -x\n    docker_cache: yes please")
    errs = _errors(text)
    assert len(errs) == 2  # no "size must be >= 1" about the dropped value
    assert all("workers[0].size" in e or "workers[0].docker_cache" in e for e in errs)


def test_rule_errors_are_all_reported_together() -> None:
    text = MINIMAL.replace("name: demo", "name: Demo_1").replace("size: 2", "size: 0")
    errs = _errors(text)
    assert any(e.startswith("cluster.yaml:2:7 name:") and "company_name" in e for e in errs)
    assert any(e.startswith("cluster.yaml:7:11 workers[0].size: must be >= 1") for e in errs)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("", "spec is empty"),
        ("   \n# only a comment\n", "spec is empty"),
        ("---\n", "spec is empty"),
        ("- a\n- b\n", "must be a YAML mapping (key: value), not a list"),
        ("just text\n", "not a single value"),
        (MINIMAL + "---\nname: other\n", "more than one YAML document"),
        ("a: [1, 2\n", "invalid YAML"),
        ("apiVersion: v9\nname: demo\nworkers: []\n", "unsupported apiVersion 'v9'"),
        ("name: x\nname: y\n", "duplicate key 'name' (first set at line 1)"),
        ("name: !!python/object:os.system x\n", "cannot read this YAML value"),
        ("accounting: !!bool maybe\n", "accounting: cannot read this YAML value: 'maybe' is not"),
        ("name: !!timestamp soon\n", "name: cannot read this YAML value: 'soon' is not a valid"),
        ("name: !!int ''\n", "name: cannot read this YAML value: '' is not a valid int"),
        ("base: &b {a: 1}\nother:\n  <<: *b\n", "merge keys"),
        ("1: x\nname: y\n", "keys must be plain strings"),
        ("name: &a [*a]\n", "recursive YAML alias"),
        ("workers: {}\nname: d\n", "must be a list"),
    ],
)
def test_yaml_problems_have_clear_messages(text: str, needle: str) -> None:
    with pytest.raises(SpecError) as info:
        parse_spec_text(text, source="c.yaml")
    rendered = "\n".join(f.render() for f in info.value.findings)
    assert needle in rendered
    assert all(f.file == "c.yaml" for f in info.value.findings)


def test_duplicate_key_points_at_the_second_key() -> None:
    with pytest.raises(SpecError) as info:
        parse_spec_text(MINIMAL + "region: us-central1\n", source="c.yaml")
    (finding,) = info.value.findings
    assert (finding.line, finding.column, finding.path) == (8, 1, "region")


def test_oversized_file_refused(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    big.write_text(MINIMAL + "#" * (1024 * 1024) + "\n")
    with pytest.raises(SpecError, match="larger than 1 MiB"):
        load_spec(big)
    with pytest.raises(SpecError, match="larger than 1 MiB"):
        parse_spec_text(big.read_text())


def test_missing_folder_and_binary_files(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="not found"):
        load_spec(tmp_path / "nope.yaml")
    with pytest.raises(SpecError, match="folder"):
        load_spec(tmp_path)
    binary = tmp_path / "bin.yaml"
    binary.write_bytes(b"name: \xff\xfe\n")
    with pytest.raises(SpecError, match="not UTF-8"):
        load_spec(binary)


def test_spec_error_is_a_usage_error_with_json_findings() -> None:
    with pytest.raises(UsageError) as info:
        parse_spec_text("name: x\n")
    extra = info.value.json_extra()  # type: ignore[attr-defined]
    assert extra["findings"][0]["level"] == "error"
    assert info.value.exit_code == 2


def test_unquoted_versions_keep_their_text_and_warn() -> None:
    loaded = parse_spec_text(MINIMAL + "k8s_version: 1.30\nnode_group_version: 72\n")
    assert loaded.spec.k8s_version == "1.30"  # not "1.3"
    assert loaded.spec.node_group_version == "72"
    warns = {f.path: f for f in loaded.findings}
    assert "k8s_version" in warns and warns["k8s_version"].line == 8


def test_float_version_from_python_needs_quoting() -> None:
    data = parse_spec_text(MINIMAL).spec.model_dump(by_alias=True, exclude_unset=True)
    data["k8s_version"] = 1.3
    with pytest.raises(SpecError) as info:
        spec_from_mapping(data)
    (finding,) = info.value.findings
    assert finding.path == "k8s_version" and "must be a string" in finding.message


def test_missing_api_version_is_accepted_like_npa() -> None:
    loaded = parse_spec_text(MINIMAL.replace("apiVersion: npa.soperator/v0.0.1\n", ""))
    assert loaded.spec.api_version == "npa.soperator/v0.0.1"


def test_defaults_follow_npa_contract() -> None:
    spec = parse_spec_text(MINIMAL).spec
    pool = spec.workers[0]
    assert (pool.platform, pool.boot_disk_gib, pool.docker_cache_gib) == ("cpu-d3", 512, 372)
    assert spec.control_plane.system.min_size == 3
    assert spec.control_plane.system.effective_max_size == 24
    assert spec.control_plane.login.preset == "16vcpu-64gb"
    assert spec.slurm_operator_version == "4.1.6"
    assert (spec.effective_k8s_version, spec.effective_node_group_version) == ("1.34", "72")
    assert spec.jail_size_gib == 512 and spec.accounting is False
    assert spec.rest_enabled is False


def test_rest_follows_accounting_when_omitted() -> None:
    spec = parse_spec_text(MINIMAL + "accounting: true\n").spec
    assert spec.slurm_rest_enabled is None and spec.rest_enabled is True


def test_pool_helpers() -> None:
    gpu = WorkerPoolSpec(name="g", platform="gpu-h200-sxm", preset="8gpu-128vcpu-1600gb")
    assert gpu.is_gpu() and gpu.gpus_per_node == 8
    assert gpu.capacity_mode() == "on-demand" and gpu.reservation_selector_kind() == ""
    assert gpu.capacity_mode({"g": "capacityblockgroup-x"}) == "reserved"
    assert gpu.reservation_selector_kind({"g": "capacityblockgroup-x"}) == "id"
    named = gpu.model_copy(update={"capacity_block_group_name": "my-block"})
    assert named.reservation_selector_kind() == "name" and named.capacity_mode() == "reserved"
    pre = gpu.model_copy(update={"preemptible": True})
    assert pre.capacity_mode() == "preemptible"
    cpu = WorkerPoolSpec(name="c")
    assert not cpu.is_gpu() and cpu.gpus_per_node == 0
    summary = named.summary()
    assert summary["reservation_selector"] == "name"
    assert "my-block" not in str(summary)


def test_dump_round_trips_set_fields_and_drops_ids() -> None:
    text = MINIMAL.replace("region: eu-north1", "region: eu-north1\naccounting: true")
    spec = parse_spec_text(text).spec
    again = parse_spec_text(dump_spec_yaml(spec)).spec
    assert again == spec
    dumped = dump_spec_yaml(spec)
    assert "boot_disk_gib" not in dumped  # only what was set
    secret = spec.model_copy(
        update={
            "workers": [
                WorkerPoolSpec(
                    name="gpu",
                    platform="gpu-h200-sxm",
                    preset="8gpu-128vcpu-1600gb",
                    fabric="fabric-3",
                    capacity_block_group="capacityblockgroup-secret1",
                )
            ]
        }
    )
    assert "capacityblockgroup-secret1" not in dump_spec_yaml(secret)
    assert "capacityblockgroup-secret1" in dump_spec_yaml(secret, include_secrets=True)


def test_spec_from_mapping_rejects_non_mappings() -> None:
    with pytest.raises(SpecError, match="must be a mapping"):
        spec_from_mapping(["not", "a", "mapping"])


def test_summary_is_stable_and_secret_free() -> None:
    spec = SoperatorSpec(
        name="demo",
        workers=[
            WorkerPoolSpec(
                name="gpu",
                platform="gpu-h200-sxm",
                preset="8gpu-128vcpu-1600gb",
                capacity_block_group="capacityblockgroup-zzz",
            )
        ],
    )
    summary = spec.summary()
    assert summary["workers"][0]["reservation_selector"] == "id"
    assert "capacityblockgroup-zzz" not in repr(summary)
    assert list(summary) == list(spec.summary())


def test_alias_bomb_is_cut_short() -> None:
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(7):
        prev, cur = chr(97 + i), chr(98 + i)
        lines.append(f"{cur}: &{cur} [{', '.join([f'*{prev}'] * 10)}]")
    with pytest.raises(SpecError, match="more than 50000 values"):
        parse_spec_text("\n".join(lines) + "\n")


def test_deep_nesting_is_an_error_not_a_crash() -> None:
    with pytest.raises(SpecError, match="nesting"):
        parse_spec_text("a: " + "[" * 5000 + "]" * 5000)


def test_every_rule_finding_from_a_file_has_a_position(tmp_path: Path) -> None:
    text = """\
apiVersion: npa.soperator/v0.0.1
name: X
region: us-central1
slurm_rest_enabled: true
control_plane:
  system: {min_size: 2, preset: 2vcpu-8gb}
  login: {preset: 8vcpu-32gb}
workers:
  - name: cpu
    fabric: fabric-3
    docker_cache: true
    docker_cache_gib: 100
  - name: cpu
    platform: gpu-b200-sxm
    preset: 8gpu-160vcpu-1792gb
    boot_disk_gib: 128
"""
    path = tmp_path / "cluster.yaml"
    path.write_text(text)
    with pytest.raises(SpecError) as info:
        load_spec(path)
    found = info.value.findings
    assert len([f for f in found if f.is_error]) >= 9
    assert all(f.file == str(path) and f.line and f.column for f in found)
    by_path = {f.path: f.line for f in found}
    assert by_path["name"] == 2 and by_path["workers[1].fabric"] == 13  # pool has no fabric


def test_dump_quotes_version_strings() -> None:
    # An unquoted 1.30 would read back as the number 1.3; dumped specs never rely on luck.
    spec = parse_spec_text(
        "apiVersion: npa.soperator/v0.0.1\nname: q1\nworkers: [{name: cpu}]\n"
        'slurm_operator_version: "4.1.6"\nk8s_version: "1.30"\nnode_group_version: "72"\n'
    ).spec
    dumped = dump_spec_yaml(spec)
    for line in (
        'slurm_operator_version: "4.1.6"',
        'k8s_version: "1.30"',
        'node_group_version: "72"',
    ):
        assert line in dumped
    assert parse_spec_text(dumped).spec.k8s_version == "1.30"
