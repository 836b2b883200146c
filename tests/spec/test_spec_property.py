"""Property tests: arbitrary text or data never escapes as anything but our own error."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from npa_sop_tui.recipe.render import recipe_problems, render
from npa_sop_tui.spec.model import SpecError, parse_spec_text, spec_from_mapping

from testkit.specs import KEY, MINIMAL

FIELDS = [
    "apiVersion",
    "name",
    "region",
    "workers",
    "control_plane",
    "accounting",
    "size",
    "platform",
    "preset",
    "fabric",
    "docker_cache",
    "k8s_version",
    "slurm_operator_version",
    "system",
    "min_size",
]
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=True),
    st.text(max_size=20),
    st.sampled_from(["npa.soperator/v0.0.1", "cpu-d3", "gpu-h100-sxm", "true", "1.34"]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(st.sampled_from(FIELDS), st.text(max_size=8)), inner, max_size=5),
    ),
    max_leaves=20,
)
yaml_chars = st.text(
    alphabet=st.sampled_from(list("abc:-[]{}&*!|>'\"#%@`,?\n\t 019.~<=\\\x00\xff\u2028")),
    max_size=80,
)
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(st.one_of(st.text(max_size=200), yaml_chars))
def test_any_text_raises_only_spec_error(text: str) -> None:
    try:
        parse_spec_text(text, source="p.yaml")
    except SpecError as exc:
        assert exc.findings and all(f.level in ("error", "warning") for f in exc.findings)
        assert exc.render()


@SETTINGS
@given(st.dictionaries(st.sampled_from(FIELDS), values, max_size=8))
def test_any_mapping_raises_only_spec_error(data: dict[str, Any]) -> None:
    try:
        spec_from_mapping(data)
    except SpecError as exc:
        assert exc.findings


@SETTINGS
@given(values)
def test_any_value_raises_only_spec_error(data: Any) -> None:
    try:
        spec_from_mapping(data)
    except SpecError as exc:
        assert exc.findings, "a SpecError always says what is wrong"


BASE = parse_spec_text(MINIMAL).spec.model_dump(by_alias=True, exclude_unset=True)
cpu_pool = st.fixed_dictionaries(
    {
        "platform": st.sampled_from(["cpu-d3", "cpu-e2"]),
        "preset": st.sampled_from(["8vcpu-32gb", "16vcpu-64gb", "64vcpu-256gb"]),
        "size": st.integers(min_value=1, max_value=1500),
        "docker_cache": st.booleans(),
        "docker_cache_gib": st.sampled_from([93, 372, 930]),
    }
)
gpu_pool = st.fixed_dictionaries(
    {
        "platform": st.sampled_from(["gpu-h100-sxm"]),
        "preset": st.sampled_from(["1gpu-16vcpu-200gb", "8gpu-128vcpu-1600gb"]),
        "size": st.integers(min_value=1, max_value=600),
        "preemptible": st.booleans(),
        "docker_cache": st.booleans(),
        "fabric": st.sampled_from(["fabric-3", "fabric-9"]),
    }
)


def _named(pools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"name": f"pool{i}", **p} for i, p in enumerate(pools)]


pools_lists = st.lists(st.one_of(cpu_pool, gpu_pool), min_size=1, max_size=4).map(_named)


@SETTINGS
@given(
    pools_lists,
    st.sampled_from(["4.1.6", "4.1.7", "4.1.12", "4.1.13"]),
    st.booleans(),
)
def test_every_valid_spec_renders_within_recipe_rules(
    workers: list[dict[str, Any]], version: str, accounting: bool
) -> None:
    data = copy.deepcopy(BASE)
    data.update(
        workers=workers,
        slurm_operator_version=version,
        use_default_apparmor_profile=version != "4.1.6",
        accounting=accounting,
    )
    # The generator builds only coherent specs, so each one must validate and render.
    spec = spec_from_mapping(data)
    rendered = render(spec, root_login_key=KEY)
    assert recipe_problems(rendered.tfvars, version) == []


@SETTINGS
@given(st.dictionaries(st.sampled_from(FIELDS), values, max_size=8))
def test_any_mapping_as_yaml_text_raises_only_spec_error(data: dict[str, Any]) -> None:
    import yaml

    try:
        text = yaml.safe_dump(data, allow_unicode=True)
    except (yaml.YAMLError, ValueError, OverflowError):
        return  # not representable as YAML; nothing to load
    try:
        loaded = parse_spec_text(text, source="m.yaml")
    except SpecError as exc:
        assert exc.findings
    else:
        assert loaded.spec.name == data["name"]
