"""The spec rules' module-level tables and patterns (spec/validate_cluster.py,
spec/validate_workers.py), pinned to the recipe rule each one carries (mutmut does not
mutate module constants): a changed entry fails a named test."""

from __future__ import annotations

import pytest

from npa_sop_tui.spec import validate_cluster as v
from npa_sop_tui.spec import validate_workers as w


@pytest.mark.parametrize(("name", "ok"), [
    ("ab", True), ("npasop", True), ("a1", True), ("my-cluster-2", True),
    ("a", False), ("1abc", False), ("abc-", False), ("Abc", False), ("a_b", False), ("a.b", False),
])  # fmt: skip
def test_company_name_pattern_is_the_recipes(name: str, ok: bool) -> None:
    """company_name becomes the kube context and resource names: lowercase letters, digits
    and '-', starting with a letter, not ending with '-'."""
    assert bool(v.COMPANY_NAME_RE.match(name)) is ok


@pytest.mark.parametrize(("name", "ok"), [
    ("a", True), ("gpu", True), ("gpu-h100-2", True), ("c9", True),
    ("9gpu", False), ("gpu-", False), ("GPU", False), ("gpu_1", False), ("", False),
])  # fmt: skip
def test_pool_name_pattern(name: str, ok: bool) -> None:
    assert bool(w.POOL_NAME_RE.match(name)) is ok


def test_pool_names_are_at_most_40_characters() -> None:
    """Slurm node names are `<pool>-<i>` (and `<pool>-rack<N>-<i>` on GB300), and Kubernetes
    names derived from them must stay within their limits."""
    from npa_sop_tui.spec.model import SpecError, spec_from_mapping

    def pool_named(name: str) -> object:
        return spec_from_mapping({"apiVersion": "npa.soperator/v0.0.1", "name": "np",
                                  "region": "eu-north1", "workers": [{"name": name}]})  # fmt: skip

    pool_named("p" * 40)
    with pytest.raises(SpecError, match="at most 40"):
        pool_named("p" * 41)


@pytest.mark.parametrize(("version", "ok"), [
    ("4.1.6", True), ("10.0.0", True), ("04.1.6", False), ("4.1", False), ("v4.1.6", False),
])  # fmt: skip
def test_operator_version_is_plain_semver(version: str, ok: bool) -> None:
    assert bool(v.SEMVER_RE.match(version)) is ok


@pytest.mark.parametrize(("version", "ok"), [("1.34", True), ("1.3", True), ("1", False),
                                             ("1.34.1", False), ("v1.34", False)])  # fmt: skip
def test_k8s_version_is_major_minor(version: str, ok: bool) -> None:
    assert bool(v.K8S_RE.match(version)) is ok


@pytest.mark.parametrize(
    ("version", "ok"),
    [("72", True), ("72.1", True), ("a1", True), (".72", False), ("7 2", False), ("", False)],
)
def test_node_group_version_pattern(version: str, ok: bool) -> None:
    assert bool(v.NODE_GROUP_RE.match(version)) is ok


def test_recipe_4_1_12_knows_only_two_k8s_versions() -> None:
    """driver_presets.tf at 9a187732 maps GPU drivers for Kubernetes 1.35 and 1.36 only."""
    assert v.K8S_VERSIONS_4_1_12 == ("1.35", "1.36")
