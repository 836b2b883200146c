"""The transport under `NebiusCloudClient`: one signed-in SDK per client, every request
bounded, and the SDK's failures turned into npa's errors.

The SDK is imported inside methods only: importing this module is cheap, and the first call
pays the SDK's import (about a second). The SDK runs its own event loop in a background
thread; its requests can be awaited from any loop, Textual's included.

Every call is bounded twice: the SDK's own `timeout=` (the gRPC deadline) and an
`asyncio.wait_for` around it, so neither a silent server nor a stuck resolver can hang a
caller. Credentials are handed to the SDK as the user keeps them (token in the environment,
a service-account file, the CLI profile); nothing is copied anywhere.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from npa_sop_tui.cloud.connection import CloudError, CloudSettings, CloudTimeout

T = TypeVar("T")
MAX_PAGES = 50  # a listing longer than this is cut (the SDK's messages parse slowly)
PAGE_SIZE = 200


class _NotFound(Exception):
    pass


def _request_kwargs(budget: float) -> dict[str, Any]:
    """Every request's bound, and the option that makes a failed sign-in fail it at once."""
    from npa_sop_tui.cloud.signin import fail_fast

    return {"timeout": budget, **fail_fast()}


def _enum(value: Any, *prefixes: str) -> str:
    """`STATE_ACTIVE` → `active`; unknown values keep their number."""
    name = getattr(value, "name", None) or str(value)
    for prefix in prefixes:
        if name.startswith(prefix):
            name = name[len(prefix) :]
            break
    return name.lower()


class NebiusCalls:
    """Connection and bounded calls; the read mixins (nebius_sdk_*.py) build on these."""

    def __init__(self, settings: CloudSettings) -> None:
        self.settings = settings
        self._sdk: Any = None
        self._lock = asyncio.Lock()
        self.calls = 0  # made so far (tests, benchmarks)
        self._sign: Any = None  # the cloud.signin SignIn in use, once connected
        self._answered = False  # a call has come back: sign-in worked

    # --- connection --------------------------------------------------------------------

    async def _get(self) -> Any:
        async with self._lock:
            if self._sdk is not None:
                return self._sdk
            from npa_sop_tui.cloud.connection import wait_for_warm_up
            from npa_sop_tui.cloud.signin import new_sdk, sign_in

            await asyncio.to_thread(wait_for_warm_up)
            s = self.settings
            self._sign = sign_in(
                iam_token=s.iam_token,
                credentials_file=s.credentials_file,
                profile=s.profile,
                cli_config=s.cli_config,
            )
            self._sdk = new_sdk(self._sign, s.endpoint)
            return self._sdk

    async def close(self) -> None:
        async with self._lock:
            sdk, self._sdk = self._sdk, None
        if sdk is not None:
            try:
                await asyncio.wait_for(sdk.close(), 10)
            except Exception:  # closing must never turn a result into a failure
                return

    # --- calls ---------------------------------------------------------------------------

    async def _call(
        self,
        what: str,
        make: Callable[[Any, dict[str, Any]], Awaitable[T]],
        deadline: float | None = None,
    ) -> T:
        sdk = await self._get()
        from nebius.aio.service_error import RequestError

        budget = self.settings.timeout if deadline is None else deadline - time.monotonic()
        if budget <= 0:
            raise CloudTimeout(f"{what}: no answer within {self.settings.timeout:g}s")
        self.calls += 1
        try:
            answer = await asyncio.wait_for(make(sdk, _request_kwargs(budget)), budget + 1)
        except TimeoutError:
            raise self._timeout(what) from None
        except RequestError as exc:
            raise self._failure(what, exc) from None
        except Exception as exc:  # the SDK's sign-in errors are of several types
            from npa_sop_tui.cloud.signin import refused

            failed = refused(exc, self._sign)
            if failed is None:
                raise CloudError(f"{what} failed: {type(exc).__name__}: {exc}") from None
            raise failed from None
        self._answered = True
        return answer

    def _timeout(self, what: str) -> CloudError:
        message = f"{what}: no answer within {self.settings.timeout:g}s"
        if not self._answered and self._sign is not None:
            return CloudTimeout(message, hint=f"signing in used the {self._sign.source}; check "
                                "the network, then the credentials")  # fmt: skip
        return CloudTimeout(message)

    def _failure(self, what: str, exc: Exception) -> Exception:
        from npa_sop_tui.cloud.signin import refused, request_failure

        name, message = request_failure(exc)
        if name == "NOT_FOUND":
            return _NotFound()
        if name == "DEADLINE_EXCEEDED":
            return self._timeout(what)
        failed = refused(exc, self._sign)
        if failed is not None:
            return failed
        hint = None
        if name == "PERMISSION_DENIED":
            hint = "check that the profile or token can read this tenant/project"
        return CloudError(f"{what} failed: {name}: {message}", hint=hint)

    async def _pages(
        self, what: str, fetch: Callable[[Any, str, dict[str, Any]], Awaitable[Any]]
    ) -> list[Any]:
        """Every item of a paged listing, all pages within one timeout."""
        deadline = time.monotonic() + self.settings.timeout
        items: list[Any] = []
        token = ""
        for _ in range(MAX_PAGES):
            page = await self._call(
                what, lambda sdk, kw, tok=token: fetch(sdk, tok, kw), deadline=deadline
            )
            items.extend(page.items)
            token = page.next_page_token
            if not token:
                break
        return items

    async def _list(self, what: str, service: Any, request: Any, parent_id: str) -> list[Any]:
        """Every item of `service`'s List under `parent_id` (`request`: its request class)."""

        def fetch(sdk: Any, token: str, kw: dict[str, Any]) -> Any:
            req = request(parent_id=parent_id, page_size=PAGE_SIZE, page_token=token)
            return service(sdk).list(req, **kw)

        return await self._pages(what, fetch)

    async def _get_or_none(self, what: str, service: Any, request: Any, item_id: str) -> Any:
        """`service`'s Get of `item_id` (`request`: its request class); None when it is gone."""
        try:
            return await self._call(
                what, lambda sdk, kw: service(sdk).get(request(id=item_id), **kw)
            )
        except _NotFound:
            return None
