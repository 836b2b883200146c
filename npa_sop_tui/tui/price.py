"""The price line of the wizard's review step (the backend adapter calls this)."""

from __future__ import annotations

from typing import Any

from npa_sop_tui.cloud.client import CloudCredentialsMissing, CloudError
from npa_sop_tui.cloud.needs import price_requests
from npa_sop_tui.cloud.report_text import money
from npa_sop_tui.errors import UsageError


async def price_text(spec: Any, environment: Any, *, profile: str | None = None) -> str:
    """`Hourly price ≈ $X: gpu $Y, cpu $Z, control plane $W`, or why it is unknown."""
    import argparse

    from npa_sop_tui.lifecycle.cloud_steps import cloud_client, reads_for

    sandboxed = bool(environment.is_sandbox)
    identity = environment.identity(spec) if sandboxed else environment.settings.identity(spec)
    options = argparse.Namespace(
        cloud=None, environment=environment, profile=profile, cloud_timeout=30
    )
    try:
        reads = reads_for(options, identity=identity)
        async with cloud_client(options, environment, reads) as client:
            quote = await client.estimate_hourly(price_requests(spec), identity.project_id)
    except (CloudError, CloudCredentialsMissing, UsageError) as exc:
        return f"Hourly price: unknown ({exc.message})"
    control = sum((v for k, v in quote.hourly.items() if k.startswith("control-plane/")), 0)
    # "filesystem/controller-spool" is one word to a line wrapper: at 60 columns it broke
    # mid-word. Spaced, a part wraps between its words.
    parts = [
        f"{k.replace('/', ' ')} {money(str(v), quote.currency)}"
        for k, v in quote.hourly.items()
        if not k.startswith("control-plane/")
    ]
    parts.append(f"control plane {money(str(control), quote.currency)}")
    where = " (sandbox prices)" if sandboxed else ""
    total = money(str(quote.total_hourly), quote.currency)
    daily = money(str(quote.total_daily), quote.currency)
    return f"Hourly price{where} ≈ {total} ({daily} per day): " + ", ".join(parts)
