"""The recipe hard-codes the `eu` API endpoint; installations elsewhere use the global one."""

from __future__ import annotations

from pathlib import Path

import pytest

from npa_sop_tui.recipe import installation, source
from npa_sop_tui.sandbox.local_terraform import standin_recipe_dir


@pytest.mark.parametrize(
    ("region", "endpoint"),
    [
        ("eu-north1", "api.eu.nebius.cloud:443"),
        ("eu-west2", "api.eu.nebius.cloud:443"),
        ("us-central1", "api.nebius.cloud:443"),
        ("me-west1", "api.nebius.cloud:443"),
        ("uk-south1", "api.nebius.cloud:443"),
    ],
)
def test_installation_points_the_provider_at_the_regions_api(
    npa_home: Path, region: str, endpoint: str
) -> None:
    recipe = source.resolve(standin_recipe_dir(), source.RecipeSettings())
    install = installation.prepare_installation(recipe, "ep", {}, {"TF_VAR_region": region})
    text = (install.dir / "terraform.tf").read_text()
    assert f'"{endpoint}"' in text
    other = ({"api.eu.nebius.cloud:443", "api.nebius.cloud:443"} - {endpoint}).pop()
    assert f'"{other}"' not in text
    # the example itself is left as upstream ships it
    assert '"api.eu.nebius.cloud:443"' in (recipe.example_dir / "terraform.tf").read_text()


def test_a_region_change_rewrites_the_endpoint_again(npa_home: Path) -> None:
    recipe = source.resolve(standin_recipe_dir(), source.RecipeSettings())
    installation.prepare_installation(recipe, "moves", {}, {"TF_VAR_region": "us-central1"})
    install = installation.prepare_installation(recipe, "moves", {}, {"TF_VAR_region": "eu-north1"})
    assert '"api.eu.nebius.cloud:443"' in (install.dir / "terraform.tf").read_text()
