"""A stand-in recipe whose cluster owns a real `nebius_compute_v1_filesystem` (under the
stand-in nebius/nebius provider), as the recipe's filestore module declares its jail.

The packaged stand-in is copied as it is (same variables, module graph and marker) and gets a
`filestore` module with the jail filesystem: parent the project, name
`soperator-<company_name>-jail` (what the sandbox's fake Nebius calls it), type, size and block
size from `filestore_jail.spec` as upstream reads them.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from npa_sop_tui.sandbox.local_terraform import standin_recipe_dir
from npa_sop_tui.sandbox.nebius_provider.mirror import SOURCE, VERSION

FILESTORE_TF = """\
# Stand-in for modules/filestore: the jail as a Nebius filesystem (stand-in provider).
terraform {
  required_providers {
    nebius = { source = "%(source)s", version = "%(version)s" }
  }
}

variable "project_id" { type = string }
variable "name" { type = string }
variable "size_gibibytes" { type = number }
variable "block_size_kibibytes" { type = number }

resource "nebius_compute_v1_filesystem" "jail" {
  parent_id        = var.project_id
  name             = var.name
  type             = "NETWORK_SSD"
  size_bytes       = var.size_gibibytes * 1024 * 1024 * 1024
  block_size_bytes = var.block_size_kibibytes * 1024
}
"""

MODULE_CALL = """
module "filestore" {
  source = "../../modules/filestore"

  project_id           = var.iam_project_id
  name                 = "soperator-${var.company_name}-jail"
  size_gibibytes       = try(var.filestore_jail.spec.size_gibibytes, 1024)
  block_size_kibibytes = try(var.filestore_jail.spec.block_size_kibibytes, 4)
}
"""

PROVIDER_REQUIREMENT = """    nebius = {
      source  = "%s"
      version = "%s"
    }
"""


def filesystem_recipe(base: Path) -> Path:
    """The variant's `soperator/` folder under `base`."""
    root = base / "soperator"
    shutil.copytree(standin_recipe_dir(), root)
    (root / "modules" / "filestore").mkdir()
    (root / "modules" / "filestore" / "main.tf").write_text(
        FILESTORE_TF % {"source": SOURCE, "version": VERSION}
    )
    example = root / "installations" / "example"
    with (example / "main.tf").open("a") as handle:
        handle.write(MODULE_CALL)
    terraform_tf = example / "terraform.tf"
    text = terraform_tf.read_text()
    anchor = "  required_providers {\n"
    assert anchor in text, "the stand-in's terraform.tf changed shape"
    terraform_tf.write_text(
        text.replace(anchor, anchor + PROVIDER_REQUIREMENT % (SOURCE, VERSION), 1)
    )
    return root
