"""The spec model's own rules, word for word (model.py): type errors as findings, unquoted
versions, rule checking on a half-readable spec, file problems, SpecError's text, summaries
and dumping.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import pytest
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from npa_sop_tui.spec.findings import Finding, error, warning
from npa_sop_tui.spec.model import (
    SoperatorSpec,
    SpecError,
    WorkerPoolSpec,
    findings_from_validation_error,
    kube_context,
    load_spec,
    parse_spec_text,
    spec_from_mapping,
)
from npa_sop_tui.spec.yaml_dump import dump_spec_yaml

MINIMAL = """\
apiVersion: npa.soperator/v0.0.1
name: demo
region: eu-north1
workers:
  - name: cpu
    preset: 16vcpu-64gb
    size: 2
"""
Row = tuple[str, str, str, str | None, int | None, int | None]
SPEC_FIELDS = (
    "apiVersion, name, region, tenant_id, project_id, subnet_id, root_login_ssh_public_key, "
    "ssh_public_keys, control_plane, workers, accounting, telemetry, slurm_rest_enabled, "
    "use_default_apparmor_profile, jail_size_gib, slurm_operator_version, k8s_version, "
    "node_group_version"
)
BOOL_HINT = "write a YAML boolean without quotes: true or false"
INT_HINT = "write a number without quotes, e.g. 2"


def rows_of(findings: list[Finding]) -> list[Row]:
    return [(f.level, f.path, f.message, f.hint, f.line, f.column) for f in findings]


def refused(text: str, **kw: Any) -> list[Row]:
    with pytest.raises(SpecError) as info:
        parse_spec_text(text, source="c.yaml", **kw)
    assert all(f.file == "c.yaml" for f in info.value.findings)
    return rows_of(info.value.findings)


def refused_mapping(data: Any, **kw: Any) -> SpecError:
    with pytest.raises(SpecError) as info:
        spec_from_mapping(data, **kw)
    return info.value


# --- pydantic errors as findings ------------------------------------------------------------

TYPE_CASES: dict[str, tuple[str, list[Row]]] = {
    "missing-name": (
        "workers: []\n",
        [
            ("error", "name", "required field is missing", None, 1, 1),
            ("error", "workers", "at least one worker pool is required", None, 1, 10),
        ],
    ),
    "quoted-bool": (
        MINIMAL + "accounting: 'false'\n",
        [("error", "accounting", "must be true or false, got 'false'", BOOL_HINT, 8, 13)],
    ),
    "quoted-number": (
        MINIMAL.replace("size: 2", "size: '2'"),
        [("error", "workers[0].size", "must be a whole number, got '2'", INT_HINT, 7, 11)],
    ),
    "number-as-name": (
        MINIMAL.replace("name: demo", "name: 5"),
        [("error", "name", "must be a string, got 5", "quote the value", 2, 7)],
    ),
    "api-version": (
        MINIMAL.replace("v0.0.1", "v9"),
        [
            (
                "error",
                "apiVersion",
                "unsupported apiVersion 'npa.soperator/v9'; expected npa.soperator/v0.0.1",
                "use apiVersion: npa.soperator/v0.0.1",
                1,
                13,
            )
        ],
    ),
    "workers-mapping": (
        "name: demo\nworkers: {}\n",
        [("error", "workers", "must be a list, got {}", None, 2, 10)],
    ),
    "control-plane-scalar": (
        MINIMAL + "control_plane: 5\n",
        [("error", "control_plane", "must be a mapping (key: value), got 5", None, 8, 16)],
    ),
    "unknown-top-level-close": (
        MINIMAL + "acounting: true\n",
        [
            (
                "error",
                "acounting",
                "unknown field 'acounting'",
                "did you mean 'accounting'?",
                8,
                1,
            )
        ],
    ),
    "unknown-top-level-far": (
        MINIMAL + "zzz: 1\n",
        [("error", "zzz", "unknown field 'zzz'", f"allowed fields: {SPEC_FIELDS}", 8, 1)],
    ),
    "unknown-nested": (
        MINIMAL + "control_plane:\n  system:\n    min_szie: 3\n",
        [
            (
                "error",
                "control_plane.system.min_szie",
                "unknown field 'min_szie'",
                "did you mean 'min_size'?",
                10,
                5,
            )
        ],
    ),
    "unknown-nested-far": (
        MINIMAL + "control_plane:\n  system:\n    qqq: 3\n",
        [
            (
                "error",
                "control_plane.system.qqq",
                "unknown field 'qqq'",
                "allowed fields: min_size, max_size, preset",
                10,
                5,
            )
        ],
    ),
    "long-value-is-cut": (
        MINIMAL + f"telemetry: '{'y' * 58}'\n",
        [
            (
                "error",
                "telemetry",
                f"must be true or false, got '{'y' * 58}'",
                BOOL_HINT,
                8,
                12,
            )
        ],
    ),
    "longer-value-is-cut": (
        MINIMAL + f"telemetry: '{'y' * 59}'\n",
        [
            (
                "error",
                "telemetry",
                f"must be true or false, got '{'y' * 56}...",
                BOOL_HINT,
                8,
                12,
            )
        ],
    ),
}


@pytest.mark.parametrize("case", list(TYPE_CASES))
def test_model_errors_word_for_word(case: str) -> None:
    text, expected = TYPE_CASES[case]
    assert refused(text) == expected


class _Other(BaseModel):
    model_config = ConfigDict(extra="forbid")
    gamma: int = 0


class _Leaf(BaseModel):
    model_config = ConfigDict(extra="forbid")
    alpha: int = 0
    beta: str = ""
    sub: _Other | None = None


class _Lax(BaseModel):
    """Not strict, like the workflow and tool models that share this translation."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    api_version: Literal["wf/v1", "wf/v2"] = Field(default="wf/v1", alias="apiVersion")
    mode: Literal["a", "b", "c"] = "a"
    count: int = 0
    items: list[_Leaf] = Field(default_factory=list)
    deep: list[list[_Leaf]] | None = None
    by_name: dict[str, _Leaf] = Field(default_factory=dict)
    choice: _Leaf | _Other | None = None
    leaf: _Leaf | None = None


LAX_CASES: dict[str, tuple[dict[str, Any], list[tuple[str, str, str | None]]]] = {
    "unparsable-int": (
        {"count": "abc"},
        [("count", "must be a whole number, got 'abc'", INT_HINT)],
    ),
    "fractional-int": ({"count": 2.5}, [("count", "must be a whole number, got 2.5", INT_HINT)]),
    "own-api-version": (
        {"apiVersion": "x"},
        [
            (
                "apiVersion",
                "unsupported apiVersion 'x'; expected wf/v1 or wf/v2",
                "use apiVersion: wf/v1 or wf/v2",
            )
        ],
    ),
    "other-literal": ({"mode": "z"}, [("mode", "Input should be 'a', 'b' or 'c'", None)]),
    "dict-given-list": (
        {"by_name": [1]},
        [("by_name", "must be a mapping (key: value), got [1]", None)],
    ),
    "item-not-a-mapping": (
        {"items": [5]},
        [("items[0]", "must be a mapping (key: value), got 5", None)],
    ),
    "unknown-in-list-item": (
        {"items": [{"alhpa": 1}]},
        [("items[0].alhpa", "unknown field 'alhpa'", "did you mean 'alpha'?")],
    ),
    "unknown-in-nested-lists": (
        {"deep": [[{"zzz": 1}]]},
        [("deep[0][0].zzz", "unknown field 'zzz'", "allowed fields: alpha, beta, sub")],
    ),
    "unknown-below-a-list-item": (
        {"items": [{"sub": {"zzz": 1}}]},
        [("items[0].sub.zzz", "unknown field 'zzz'", "allowed fields: gamma")],
    ),
    "unknown-in-optional-model": (
        {"leaf": {"bta": ""}},
        [("leaf.bta", "unknown field 'bta'", "did you mean 'beta'?")],
    ),
    # Inside a dict of models or a union the model is not known: no guess rather than a wrong one
    "unknown-in-dict-value": (
        {"by_name": {"k": {"alhpa": 1}}},
        [("by_name.k.alhpa", "unknown field 'alhpa'", None)],
    ),
    "unknown-in-union": (
        {"choice": {"zzz": 1}},
        [
            ("choice._Leaf.zzz", "unknown field 'zzz'", None),
            ("choice._Other.zzz", "unknown field 'zzz'", None),
        ],
    ),
}


@pytest.mark.parametrize("case", list(LAX_CASES))
def test_shared_translation_for_other_models(case: str) -> None:
    data, expected = LAX_CASES[case]
    with pytest.raises(ValidationError) as info:
        _Lax.model_validate(data)
    found = findings_from_validation_error(info.value, _Lax, None)
    assert [(f.path, f.message, f.hint) for f in found] == expected
    assert all(f.level == "error" and f.line is None for f in found)


# --- unquoted versions ----------------------------------------------------------------------


def test_unquoted_versions_are_read_as_written_with_a_warning_each() -> None:
    loaded = parse_spec_text(MINIMAL + "k8s_version: 1.30\nnode_group_version: 72\n", source="c")
    assert (loaded.spec.k8s_version, loaded.spec.node_group_version) == ("1.30", "72")
    assert rows_of(loaded.findings) == [
        (
            "warning",
            "k8s_version",
            "unquoted version 1.30 read as the string '1.30'",
            'quote it: k8s_version: "1.30" (YAML would read 1.30 as 1.3)',
            8,
            14,
        ),
        (
            "warning",
            "node_group_version",
            "unquoted version 72 read as the string '72'",
            'quote it: node_group_version: "72" (YAML would read 1.30 as 1.3)',
            9,
            21,
        ),
    ]


def test_versions_from_python_numbers() -> None:
    """An int has one reading; a float (1.3 or 1.30?) is refused, and the rest still read."""
    base = {"name": "demo", "workers": [{"name": "cpu", "preset": "16vcpu-64gb"}]}
    spec = spec_from_mapping({**base, "node_group_version": 72})
    assert spec.node_group_version == "72"
    err = refused_mapping({**base, "k8s_version": 1.3, "node_group_version": 72})
    assert [(f.level, f.path, f.message) for f in err.findings] == [
        ("error", "k8s_version", "must be a string, got 1.3"),
        ("warning", "node_group_version", "unquoted version 72 read as the string '72'"),
    ]
    err = refused_mapping({**base, "slurm_operator_version": True})
    assert [(f.path, f.message) for f in err.findings] == [
        ("slurm_operator_version", "must be a string, got True")
    ]


# --- rules on a half-readable spec ------------------------------------------------------------


def test_rules_still_run_on_what_the_model_could_read() -> None:
    text = MINIMAL.replace("name: demo", "name: Demo").replace("size: 2", "size: two")
    rows = refused(text)
    assert [(r[0], r[1], r[4]) for r in rows] == [
        ("error", "name", 2),
        ("error", "workers[0].size", 7),
    ]
    assert rows[0][2].startswith("cluster name 'Demo' breaks the recipe's company_name rule")


def test_a_missing_name_gets_a_placeholder_so_the_rest_is_checked() -> None:
    rows = refused("workers:\n  - name: cpu\n    size: 0\n")
    assert [(r[1], r[2]) for r in rows] == [
        ("name", "required field is missing"),
        ("workers[0].size", "must be >= 1"),
    ]


def test_a_misspelt_key_is_not_also_reported_as_its_missing_field() -> None:
    # `nme:` is a misspelt `name:`: one finding for it, none for the placeholder name
    rows = refused("nme: demo\nworkers:\n  - name: cpu\n    size: 0\n")
    assert [(r[1], r[2], r[3]) for r in rows] == [
        ("name", "required field is missing", None),
        ("nme", "unknown field 'nme'", "did you mean 'name'?"),
        ("workers[0].size", "must be >= 1", None),
    ]


def test_a_misspelt_section_is_not_also_reported_as_empty() -> None:
    rows = refused("name: demo\nwrokers:\n  - name: cpu\n")
    assert [(r[1], r[2], r[3]) for r in rows] == [
        ("wrokers", "unknown field 'wrokers'", "did you mean 'workers'?")
    ]


def test_each_unreadable_field_keeps_its_rule_findings_away() -> None:
    # dropped `workers: 5` leaves no pools: not a finding of its own, whatever follows it
    rows = refused("name: demo\nworkers: 5\nacounting: true\n")
    assert [r[1] for r in rows] == ["workers", "acounting"]


def test_a_far_off_unknown_key_does_not_stop_the_rules() -> None:
    rows = refused(MINIMAL.replace("name: demo", "name: Demo") + "zzz: 1\n")
    assert [r[1] for r in rows] == ["name", "zzz"]


def test_a_pool_without_a_name_still_gets_its_rules_checked() -> None:
    rows = refused("name: Demo\nworkers:\n  - size: 0\n")
    assert [(r[1], r[2]) for r in rows] == [
        (
            "name",
            "cluster name 'Demo' " + "breaks the recipe's company_name rule: 2-32 "
            "characters, lowercase letters, digits and '-', starting with a letter and ending "
            "with a letter or digit",
        ),
        ("workers[0].name", "required field is missing"),
        ("workers[0].size", "must be >= 1"),
    ]


def test_the_callers_mapping_is_left_as_it_was() -> None:
    data = {"name": "Demo", "workers": [{"name": "cpu", "size": "2", "fabrc": "x"}]}
    before = repr(data)
    refused_mapping(data)
    assert repr(data) == before


def test_a_misspelt_pool_key_is_not_also_reported_as_its_missing_field() -> None:
    text = MINIMAL.replace("name: demo", "name: Demo") + (
        "  - name: gpu\n    platform: gpu-h100-sxm\n    preset: 8gpu-128vcpu-1600gb\n"
        "    fabrc: fabric-3\n    preemptible: true\n"
    )
    assert [(r[1], r[3]) for r in refused(text)] == [
        ("name", "try 'demo'"),
        ("workers[1].fabrc", "did you mean 'fabric'?"),
    ]


def test_a_misspelt_nested_key_is_matched_in_its_own_model() -> None:
    text = MINIMAL + "    fabrc: fabric-3\n"
    rows = refused(text)
    assert [(r[1], r[2], r[3]) for r in rows] == [
        ("workers[0].fabrc", "unknown field 'fabrc'", "did you mean 'fabric'?")
    ]


def test_a_misspelt_section_key_near_a_top_level_name_hides_no_top_level_problem() -> None:
    # `regon` is close to the spec's `region`, but it sits in control_plane, which has no such
    # field: the unknown region is still reported, and the allowed fields are control_plane's
    text = MINIMAL.replace("eu-north1", "mars-1") + "control_plane:\n  regon: x\n"
    rows = refused(text)
    assert [(r[1], r[2]) for r in rows] == [
        ("region", "unknown region 'mars-1'"),
        ("control_plane.regon", "unknown field 'regon'"),
    ]
    assert rows[1][3] == "allowed fields: system, controller, login, accounting"


def test_run_time_capacity_counts_while_the_model_has_errors() -> None:
    """A pool reserved at run time is not called on-demand, nor allowed to be preemptible,
    just because another field is unreadable."""
    text = MINIMAL.replace("name: demo", "name: demo\ntelemetry: 'no'") + (
        "  - name: gpu\n    platform: gpu-h100-sxm\n    preset: 8gpu-128vcpu-1600gb\n"
        "    fabric: fabric-3\n    preemptible: true\n"
    )
    rows = refused(text, capacity={"gpu": "capacityblockgroup-x"})
    assert [(r[0], r[1], r[2]) for r in rows] == [
        ("error", "telemetry", "must be true or false, got 'no'"),
        (
            "error",
            "workers[1].preemptible",
            "reserved capacity is mutually exclusive with preemptible=true (capacity block "
            "group given at run time)",
        ),
    ]
    rows = refused(text.replace("preemptible: true", "preemptible: false"))
    assert [r[1] for r in rows] == ["telemetry"]  # no warnings while errors are shown


def test_an_unreadable_name_does_not_hide_the_other_problems() -> None:
    text = MINIMAL.replace("name: demo", "name: 2024").replace("size: 2", "size: 0")
    assert [(r[1], r[2]) for r in refused(text)] == [
        ("name", "must be a string, got 2024"),
        ("workers[0].size", "must be >= 1"),
    ]


def test_an_unreadable_list_item_skips_the_rules() -> None:
    """Dropping one pool would shift its siblings' indexes: only the model error is shown."""
    text = MINIMAL + "  - 5\n  - name: x\n    size: 0\n"
    assert [r[1] for r in refused(text)] == ["workers[1]"]


def test_an_unreadable_field_of_the_last_item_still_lets_rules_run() -> None:
    text = MINIMAL.replace("name: demo", "name: Demo") + "  - name: x\n    size: '1'\n"
    assert [r[1] for r in refused(text)] == ["name", "workers[1].size"]


def test_rules_run_without_an_unreadable_section() -> None:
    text = MINIMAL.replace("name: demo", "name: Demo") + "control_plane: [1]\n"
    assert [r[1] for r in refused(text)] == ["name", "control_plane"]


def test_rules_skipped_for_errors_under_unreadable_parents() -> None:
    text = MINIMAL.replace("name: demo", "name: Demo") + "control_plane:\n  system: 5\n"
    assert [r[1] for r in refused(text)] == ["name", "control_plane.system"]


def test_validation_can_be_turned_off_only_on_request() -> None:
    data = {"name": "Demo", "workers": [{"name": "cpu", "size": 0}]}
    err = refused_mapping(data)
    assert [f.path for f in err.findings] == ["name", "workers[0].size"]
    assert spec_from_mapping(data, validate=False).name == "Demo"
    assert parse_spec_text("name: Demo\n", validate=False).spec.name == "Demo"
    err = refused_mapping({"name": "Demo", "workers": [{"name": "cpu", "size": "0"}]})
    assert [f.path for f in err.findings] == ["workers[0].size", "name"]
    err = refused_mapping({"name": 1}, validate=False)
    assert [f.path for f in err.findings] == ["name"]


def test_error_sources() -> None:
    err = refused_mapping({"name": "Demo", "workers": []}, source="fleet a")
    assert str(err) == "fleet a: invalid spec (2 errors, 0 warnings)"
    err = refused_mapping({"name": 1, "workers": 2})
    assert str(err) == "<mapping>: invalid spec (2 errors, 0 warnings)"
    err = refused_mapping([1])
    assert rows_of(err.findings) == [
        ("error", "", "spec must be a mapping (key: value)", None, None, None)
    ]
    assert err.findings[0].file == "<mapping>"
    deep: list[Any] = []
    for _ in range(100_000):
        deep = [deep]
    err = refused_mapping({"name": "demo", "workers": deep})
    assert str(err) == (
        "invalid spec: workers[0]: must be a mapping (key: value), got a list nested too deeply"
    )
    with pytest.raises(SpecError) as info:
        parse_spec_text(MINIMAL.replace("name: demo", "name: Demo").replace("size: 2", "size: 0"))
    assert str(info.value) == "<string>: invalid spec (2 errors, 0 warnings)"
    assert {f.file for f in info.value.findings} == {"<string>"}


def test_several_yaml_problems_name_the_file_in_the_head() -> None:
    with pytest.raises(SpecError) as info:
        parse_spec_text("name: a\nname: b\nworkers: []\nworkers: []\n", source="c.yaml")
    assert str(info.value) == "c.yaml: invalid spec (2 errors, 0 warnings)"


def test_exotic_python_values_are_findings_not_crashes() -> None:
    err = refused_mapping({"name": "demo", "workers": [{"name": "cpu"}], "region": object()})
    assert [(f.path, f.message[:22]) for f in err.findings] == [
        ("region", "must be a string, got ")
    ]
    with pytest.raises(SpecError) as info:
        parse_spec_text(b"name: x")  # type: ignore[arg-type]
    assert rows_of(info.value.findings) == [
        ("error", "", "spec text must be a string", None, None, None)
    ]
    assert str(info.value) == "invalid spec: <string> spec text must be a string"


def test_a_model_library_failure_is_still_a_spec_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """The safety net for values the model library cannot even inspect (no traceback)."""

    def explode(data: Any) -> SoperatorSpec:
        raise TypeError("boom")

    monkeypatch.setattr(SoperatorSpec, "model_validate", explode)
    err = refused_mapping({"name": "demo"}, source="sdk")
    assert rows_of(err.findings) == [("error", "", "cannot read spec: boom", None, None, None)]
    assert str(err) == "invalid spec: sdk cannot read spec: boom"


# --- files ----------------------------------------------------------------------------------


def test_file_problems_word_for_word(tmp_path: Path) -> None:
    def problem(path: Path) -> tuple[str, list[tuple[str, str, str | None, str | None]]]:
        with pytest.raises(SpecError) as info:
            load_spec(path)
        rows = [(f.path, f.message, f.hint, f.file) for f in info.value.findings]
        return str(info.value), rows

    missing = tmp_path / "nope.yaml"
    assert problem(missing) == (
        f"invalid spec: {missing} spec file not found (looked for {missing.resolve()}) "
        "(hint: check the path; relative paths start from the current folder)",
        [
            (
                "",
                f"spec file not found (looked for {missing.resolve()})",
                "check the path; relative paths start from the current folder",
                str(missing),
            )
        ],
    )
    assert problem(tmp_path) == (
        f"invalid spec: {tmp_path} is a folder, not a spec file",
        [("", "is a folder, not a spec file", None, str(tmp_path))],
    )
    binary = tmp_path / "bin.yaml"
    binary.write_bytes(b"name: \xff\n")
    assert problem(binary)[1] == [("", "spec is not UTF-8 text (byte 6)", None, str(binary))]
    exact = tmp_path / "exact.yaml"
    exact.write_text(MINIMAL + "#" * (1024 * 1024 - len(MINIMAL) - 1) + "\n")
    assert exact.stat().st_size == 1024 * 1024
    assert load_spec(exact).spec.name == "demo"  # exactly 1 MiB is allowed
    big = tmp_path / "big.yaml"
    big.write_text(exact.read_text() + "\n")
    assert problem(big)[1] == [
        ("", "spec is larger than 1 MiB", "is this the right file?", str(big))
    ]


def test_unreadable_path_says_why(tmp_path: Path) -> None:
    inside_a_file = tmp_path / "file.yaml"
    inside_a_file.write_text(MINIMAL)
    with pytest.raises(SpecError) as info:
        load_spec(inside_a_file / "x.yaml")
    assert [(f.level, f.path, f.message, f.hint, f.file) for f in info.value.findings] == [
        ("error", "", "cannot read spec file: Not a directory", None, str(inside_a_file / "x.yaml"))
    ]


def test_loaded_file_keeps_path_source_and_positions(tmp_path: Path) -> None:
    spec_file = tmp_path / "c.yaml"
    spec_file.write_text(MINIMAL + "k8s_version: 1.30\n")
    loaded = load_spec(spec_file)
    assert loaded.path == spec_file and loaded.source == str(spec_file)
    assert loaded.position("workers[0].size") == (7, 11)
    assert [(f.file, f.line) for f in loaded.findings] == [(str(spec_file), 8)]
    assert load_spec(spec_file, validate=False).findings[0].path == "k8s_version"
    spec_file.write_text(MINIMAL.replace("size: 2", "size: 0"))
    assert load_spec(spec_file, validate=False).spec.workers[0].size == 0
    loaded = parse_spec_text(MINIMAL)
    assert loaded.source == "<string>" and loaded.path is None
    assert loaded.position("name") == (2, 7)
    reserved = MINIMAL + (
        "  - name: gpu\n    platform: gpu-h100-sxm\n    preset: 8gpu-128vcpu-1600gb\n"
        "    fabric: fabric-3\n"
    )
    spec_file.write_text(reserved)
    # the CPU-before-GPU order warning stays; the on-demand one goes with run-time capacity
    reserved_now = load_spec(spec_file, capacity={"gpu": "capacityblockgroup-x"})
    assert [f.path for f in reserved_now.findings] == ["workers[0]"]
    assert [f.path for f in load_spec(spec_file).findings] == ["workers[1]", "workers[0]"]


def test_a_loaded_spec_without_positions_has_none() -> None:
    from npa_sop_tui.spec.model import LoadedSpec

    spec = spec_from_mapping(
        {"name": "demo", "workers": [{"name": "cpu", "preset": "16vcpu-64gb"}]}
    )
    assert LoadedSpec(spec=spec, path=None, source="x").position("name") is None


# --- SpecError ------------------------------------------------------------------------------


def test_spec_error_orders_errors_first_then_by_position() -> None:
    findings = [
        warning("w", "warn", None).at("f", 1, 1),
        error("f", "line1-nocol").at("f", 1, None),
        error("b", "second").at("f", 3, 2),
        error("c", "third").at("f", 3, 9),
        error("a", "first").at("f", None, None),
        error("g", "col1").at("f", 3, 1),
        error("d", "col").at("f", 3, None),
        error("e", "line1").at("f", 1, 5),
    ]
    err = SpecError(findings, source="f")
    assert [f.path for f in err.findings] == ["a", "f", "e", "d", "g", "b", "c", "w"]


def test_spec_error_text() -> None:
    one = SpecError([error("name", "bad").at("c.yaml", 2, 7), warning("x", "meh")], source="c.yaml")
    assert str(one) == "invalid spec: c.yaml:2:7 name: bad"
    assert one.render() == "invalid spec: c.yaml:2:7 name: bad"
    assert one.hint is None
    two = SpecError(
        [error("a", "one"), error("b", "two", "fix it"), warning("c", "meh")], source="s"
    )
    assert str(two) == "s: invalid spec (2 errors, 1 warning)"
    assert two.render() == (
        "s: invalid spec (2 errors, 1 warning)\n  a: one\n  b: two (hint: fix it)\n"
        "  warning: c: meh"
    )
    assert str(SpecError([error("a", "one"), error("b", "two")])) == (
        "invalid spec (2 errors, 0 warnings)"
    )
    assert str(SpecError([warning("c", "meh")], source="s")) == "s: invalid spec"
    assert str(SpecError([])) == "invalid spec"
    assert SpecError([error("a", "one")]).json_extra() == {
        "findings": [
            {
                "level": "error",
                "path": "a",
                "message": "one",
                "hint": None,
                "file": None,
                "line": None,
                "column": None,
            }
        ]
    }


# --- summaries, kube context, dumping -----------------------------------------------------------


def test_summaries_word_for_word() -> None:
    spec = spec_from_mapping(
        {
            "name": "demo",
            "region": "eu-north1",
            "accounting": True,
            "telemetry": True,
            "control_plane": {"system": {"min_size": 4, "preset": "32vcpu-128gb"}},
            "workers": [
                {
                    "name": "gpu",
                    "platform": "gpu-h100-sxm",
                    "preset": "8gpu-128vcpu-1600gb",
                    "fabric": "fabric-3",
                    "size": 2,
                    "docker_cache": True,
                },
                {"name": "cpu", "preset": "16vcpu-64gb", "preemptible": True},
            ],
        }
    )
    assert spec.summary({"gpu": "capacityblockgroup-x"}) == {
        "name": "demo",
        "region": "eu-north1",
        "kube_context": "nebius-demo-slurm",
        "sizing_tier": "XS",
        "worker_count": 3,
        "slurm_operator_version": "4.1.6",
        "k8s_version": "1.34",
        "node_group_version": "72",
        "accounting": True,
        "slurm_rest_enabled": True,
        "telemetry": True,
        "control_plane": {
            "system_min_size": 4,
            "system_max_size": 24,
            "system_preset": "32vcpu-128gb",
            "controller_preset": None,
            "login_preset": "16vcpu-64gb",
            "accounting_preset": None,
        },
        "workers": [
            {
                "name": "gpu",
                "platform": "gpu-h100-sxm",
                "preset": "8gpu-128vcpu-1600gb",
                "size": 2,
                "gpus_per_node": 8,
                "preemptible": False,
                "docker_cache": True,
                "capacity_mode": "reserved",
                "reservation_selector": "id",
            },
            {
                "name": "cpu",
                "platform": "cpu-d3",
                "preset": "16vcpu-64gb",
                "size": 1,
                "gpus_per_node": 0,
                "preemptible": True,
                "docker_cache": False,
                "capacity_mode": "preemptible",
                "reservation_selector": None,
            },
        ],
    }
    assert spec.pool("cpu") is spec.workers[1]
    assert spec.pool("nope") is None


def test_the_name_may_come_first_like_in_npas_sdk() -> None:
    import inspect

    spec = SoperatorSpec("demo", workers=[WorkerPoolSpec("cpu", size=2)])
    assert (spec.name, spec.workers[0].name, spec.workers[0].size) == ("demo", "cpu", 2)
    assert SoperatorSpec(name="demo").name == "demo"
    with pytest.raises(TypeError) as info:
        WorkerPoolSpec("cpu", name="gpu")
    assert str(info.value) == "WorkerPoolSpec() got multiple values for argument 'name'"
    with pytest.raises(ValidationError):
        SoperatorSpec(None)  # validated like the keyword: strict, not "no name given"
    # the positional order is npa's dataclass order (tests/sdk/test_contract_sdk.py)
    assert WorkerPoolSpec.positional[:4] == ("name", "platform", "preset", "size")
    assert "*args" in str(inspect.signature(WorkerPoolSpec.__init__))


def test_kube_context_name() -> None:
    assert kube_context("My Lab") == "nebius-my-lab-slurm"
    assert kube_context("demo") == "nebius-demo-slurm"


def test_dump_keeps_set_fields_in_order_and_quotes_versions() -> None:
    spec = SoperatorSpec.model_validate(
        {
            "region": "eu-north1",
            "name": "demo",
            "k8s_version": "1.30",
            "workers": [
                WorkerPoolSpec(
                    name="gpu",
                    platform="gpu-h100-sxm",
                    preset="8gpu-128vcpu-1600gb",
                    capacity_block_group="capacityblockgroup-secret",
                )
            ],
        }
    )
    assert dump_spec_yaml(spec) == (
        "apiVersion: npa.soperator/v0.0.1\n"
        "name: demo\n"
        "region: eu-north1\n"
        "workers:\n"
        "- name: gpu\n"
        "  platform: gpu-h100-sxm\n"
        "  preset: 8gpu-128vcpu-1600gb\n"
        'k8s_version: "1.30"\n'
    )
    with_ids = dump_spec_yaml(spec, include_secrets=True)
    assert yaml.safe_load(with_ids)["workers"][0]["capacity_block_group"] == (
        "capacityblockgroup-secret"
    )
    bare = SoperatorSpec.model_validate({"name": "demo"})
    assert dump_spec_yaml(bare) == "apiVersion: npa.soperator/v0.0.1\nname: demo\n"
