"""The SDK loads only on paths that call the cloud."""

from __future__ import annotations

import subprocess
import sys


def test_cloud_modules_and_cli_do_not_import_the_sdk() -> None:
    code = (
        "import sys\n"
        "import npa_sop_tui.cloud, npa_sop_tui.cloud.preflight, npa_sop_tui.cloud.nebius_sdk\n"
        "import npa_sop_tui.cli, npa_sop_tui.lifecycle.cloud_steps\n"
        "from npa_sop_tui.cloud.client import CloudSettings, connect\n"
        "connect(CloudSettings(endpoint='127.0.0.1:9'))\n"
        "heavy = [m for m in sys.modules if m.split('.')[0] in ('nebius', 'grpc')]\n"
        "print(heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
