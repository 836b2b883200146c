"""No product call uses what the installed Nebius SDK marks deprecated (the marks read from
the SDK itself: tests/testkit/sdk_marks.py), save the one fallback that ends by date; and the
SDK's deprecation lines go to the debug log, never to stderr."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

from npa_sop_tui.cloud.iam_projects import V1_SUNSET

from testkit.sdk_marks import deprecated_uses, method_mark, product_marks

REPO = Path(__file__).resolve().parents[2]
# The one deprecated service npa may still call, where, and until when (the fallback ends by
# date in the code itself: tests/cloud/test_cloud_iam_projects.py).
FALLBACK = ("npa_sop_tui/cloud/iam_projects.py", "service nebius.iam.v1.ProjectService")


def test_no_product_code_uses_a_deprecated_sdk_service_method_message_or_field() -> None:
    found = product_marks(REPO / "npa_sop_tui")
    unexpected = [m for m in found if (m.file, m.what) != FALLBACK]
    listed = "\n".join(f"{m.file}:{m.line}: {m.what}: {m.details}" for m in unexpected)
    assert not unexpected, listed


def test_the_v1_fallback_is_the_one_the_sdk_dates_and_ends_on_that_day() -> None:
    """The exception above holds only for the service the SDK says is supported until the
    day npa's fallback ends, and only where that fallback lives."""
    from nebius.api.nebius.iam.v1 import ProjectServiceClient

    stated = re.search(r"Supported until (\d\d)/(\d\d)/(\d\d)",
                       ProjectServiceClient.__service_deprecation_details__ or "")  # fmt: skip
    assert stated, "the SDK no longer dates the v1 ProjectService: revisit the fallback"
    month, day, year = (int(g) for g in stated.groups())
    assert (2000 + year, month, day) == (V1_SUNSET.year, V1_SUNSET.month, V1_SUNSET.day)
    found = [m for m in product_marks(REPO / "npa_sop_tui") if (m.file, m.what) == FALLBACK]
    assert found, "the v1 fallback is gone: drop FALLBACK from this test"


def test_a_call_the_sdk_marks_deprecated_is_found() -> None:
    """The checker finds a deprecated service (built or imported), a deprecated field given
    to a message, and a method its descriptor marks deprecated."""
    source = (
        "from nebius.api.nebius.iam import v1 as iam\n"
        "from nebius.api.nebius.mk8s.v1 import GetClusterRequest\n"
        "async def f(sdk):\n"
        "    await iam.TenantServiceClient(sdk).get(iam.GetTenantRequest(id='t'))\n"
        "    return GetClusterRequest(id='c', resource_version=3)\n"
    )
    found = {(m.line, m.what) for m in deprecated_uses(source, "x.py")}
    assert (4, "service nebius.iam.v1.TenantService") in found
    assert (5, "field nebius.mk8s.v1.GetClusterRequest.resource_version") in found
    assert not deprecated_uses(
        source.replace(", resource_version=3", "").replace(
            "iam.TenantServiceClient(sdk).get(iam.GetTenantRequest(id='t'))", "None"
        ),
        "x.py",
    )

    def method(name: str, deprecated: bool) -> SimpleNamespace:
        return SimpleNamespace(name=name, GetOptions=lambda: SimpleNamespace(deprecated=deprecated))

    marked = SimpleNamespace(
        __service_name__="nebius.x.v1.Thing",
        get_descriptor=lambda: SimpleNamespace(
            methods=[method("GetByName", True), method("Get", False)]
        ),
    )
    assert method_mark(marked, "get_by_name") == "nebius.x.v1.Thing.GetByName is marked deprecated"
    assert method_mark(marked, "get") is None


_READS = """
import asyncio, datetime as dt, json, sys
from npa_sop_tui.cloud.client import CloudSettings, connect
from npa_sop_tui.cloud.model import PriceRequest
from npa_sop_tui.sandbox.fake_cloud_state import default_state
from npa_sop_tui.sandbox.fake_nebius import FakeNebius

# No handler of the test's own: one would keep Python's last-resort stderr handler away and
# hide what this checks. What the SDK warned about, it remembers (it warns once each).
from nebius.base.protos.direct import _DEPRECATION_SEEN

state = default_state()
state.iam_v2 = sys.argv[1] == "v2"
if len(sys.argv) > 2:  # `--debug`: the debug log under this home
    import os
    os.environ["NPA_HOME"] = sys.argv[2]
    from npa_sop_tui.home import debuglog
    debuglog.start(["soperator", "preflight", "--debug"])

async def main(endpoint):
    import os
    os.environ["NEBIUS_IAM_TOKEN"] = "t"
    client = connect(CloudSettings(endpoint=endpoint, timeout=20))
    client.today = lambda: dt.date(2026, 12, 6)
    try:
        tenant = await client.project_tenant(state.project_id)
        if sys.argv[1] == "v2":
            await client.whoami()
            await client.quotas(state.tenant_id)
            await client.capacity_block_groups(state.tenant_id)
            await client.capacity_allowances(state.project_id)
            await client.resource_advice(state.tenant_id)
            await client.platforms(state.project_id)
            await client.subnets(state.project_id)
            await client.mk8s_clusters(state.project_id)
            await client.mk8s_cluster("mk8scluster-none")
            await client.node_groups("mk8scluster-none")
            await client.filesystem("computefilesystem-none")
            await client.allocation("vpcallocation-none")
            await client.gpu_cluster("computegpucluster-none")
            await client.bucket("storagebucket-none")
            await client.estimate_hourly([PriceRequest("w", "cpu-d3", "4vcpu-16gb", 1)],
                                         state.project_id)
    finally:
        await client.close()
    return tenant

with FakeNebius(state) as cloud:
    tenant = asyncio.run(main(cloud.endpoint))
seen = sorted(f"{kind} {symbol} is deprecated" for kind, symbol, _ in _DEPRECATION_SEEN)
print(json.dumps({"tenant": tenant, "deprecations": seen}))
"""


def _reads(mode: str, *home: Path) -> tuple[dict[str, object], str]:
    args = [sys.executable, "-c", _READS, mode, *map(str, home)]
    done = subprocess.run(args, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr


def test_every_read_runs_without_a_deprecation_and_the_fallbacks_line_stays_off_stderr(
    tmp_path: Path,
) -> None:
    """In a fresh process (the SDK warns once per process): every read the client makes
    raises no deprecation record; the v1 fallback does raise one (the SDK's), which reaches
    the `--debug` log but not stderr."""
    result, err = _reads("v2")
    assert result == {"tenant": "tenant-sandbox", "deprecations": []}, result
    assert "deprecat" not in err.lower(), err
    for home in (None, tmp_path):
        result, err = _reads("v1", *([home] if home else []))
        assert result["tenant"] == "tenant-sandbox"
        assert any("nebius.iam.v1.ProjectService is deprecated" in d
                   for d in result["deprecations"]), result  # fmt: skip
        assert "deprecat" not in err.lower(), err
    log = (tmp_path / "logs" / "npa-debug.log").read_text()
    assert "WARNING deprecation: Service nebius.iam.v1.ProjectService is deprecated" in log, log
