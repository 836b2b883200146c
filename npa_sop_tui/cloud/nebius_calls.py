"""The transport under `NebiusCloudClient`: one signed-in SDK per client, every request
bounded, and the SDK's failures turned into npa's errors.

The SDK is imported inside methods only: importing this module is cheap, and the first call
pays the SDK's import (about a second). The SDK runs its own event loop in a background
thread; its requests can be awaited from any loop, Textual's included.

Every call is bounded twice: the SDK's own `timeout=` (the gRPC deadline) and an
`asyncio.wait_for` around it, so neither a silent server nor a stuck resolver can hang a
caller. A failure says what failed where: the call, the address the SDK sends it to, the gRPC
status, and which credentials signed in (never the credentials themselves). Credentials are
handed to the SDK as the user keeps them (token in the environment, a service-account file,
the CLI profile); nothing is copied anywhere.

A listing reads at most `MAX_PAGES` pages; one that had more says so in `notes` (preflight
shows them as warnings) instead of passing a cut list off as the whole.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from npa_sop_tui.cloud.connection import CloudError, CloudSettings, CloudTimeout

T = TypeVar("T")
MAX_PAGES = 50  # a listing longer than this is cut (the SDK's messages parse slowly)
PAGE_SIZE = 200


class _NotFound(Exception):
    pass


class ServiceMissing(CloudError):
    """The address answered UNIMPLEMENTED: it does not serve this service or method."""


def _today() -> dt.date:
    return dt.datetime.now(dt.UTC).date()


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
        self.notes: list[str] = []  # listings cut at MAX_PAGES (shown as warnings)
        self.today: Callable[[], dt.date] = _today  # service sunsets are judged by it (tests)

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

    def address(self, service: Any) -> str:
        """Where the SDK sends calls of `service` (a generated client class): the endpoint
        npa was given, else the service's address under the profile's endpoint or the
        SDK's default domain (as `nebius.aio.channel.Channel` resolves routes)."""
        from npa_sop_tui.cloud.signin import service_address

        return service_address(service, self.settings.endpoint, self._sign)

    def _where(self, what: str, service: Any) -> str:
        return f"{what} at {self.address(service)}" if service is not None else what

    async def _call(
        self,
        what: str,
        make: Callable[[Any, dict[str, Any]], Awaitable[T]],
        deadline: float | None = None,
        *,
        service: Any = None,
    ) -> T:
        """One bounded request; `service` (the client class `make` uses) names its address
        in errors."""
        sdk = await self._get()
        from nebius.aio.service_error import RequestError

        where = self._where(what, service)
        budget = self.settings.timeout if deadline is None else deadline - time.monotonic()
        if budget <= 0:
            raise self._timeout(where)
        self.calls += 1
        try:
            answer = await asyncio.wait_for(make(sdk, _request_kwargs(budget)), budget + 1)
        except TimeoutError:
            raise self._timeout(where) from None
        except RequestError as exc:
            raise self._failure(where, exc) from None
        except Exception as exc:  # the SDK's sign-in errors are of several types
            from npa_sop_tui.cloud.signin import refused

            failed = refused(exc, self._sign)
            if failed is None:
                raise CloudError(
                    f"{where} failed: {type(exc).__name__}: {exc}{self._signed_in()}"
                ) from None
            raise failed from None
        self._answered = True
        return answer

    def _signed_in(self) -> str:
        return f" (credentials: {self._sign.source})" if self._sign is not None else ""

    def _timeout(self, where: str) -> CloudError:
        message = f"{where}: no answer within {self.settings.timeout:g}s{self._signed_in()}"
        if not self._answered:
            return CloudTimeout(message, hint="check the network and the address (and "
                                "NPA_NEBIUS_ENDPOINT if set), then the credentials; "
                                "--cloud-timeout sets the bound")  # fmt: skip
        return CloudTimeout(message)

    def _failure(self, where: str, exc: Exception) -> Exception:
        from npa_sop_tui.cloud.signin import refused, request_failure

        name, message = request_failure(exc)
        if name == "NOT_FOUND":
            return _NotFound()
        if name == "DEADLINE_EXCEEDED":
            return self._timeout(where)
        failed = refused(exc, self._sign)
        if failed is not None:
            return failed
        text = f"{where} failed: {name}: {message}{self._signed_in()}"
        if name == "UNIMPLEMENTED":
            return ServiceMissing(text, hint="the address does not serve this service; check "
                                  "NPA_NEBIUS_ENDPOINT or the profile's endpoint")  # fmt: skip
        hint = None
        if name == "PERMISSION_DENIED":
            hint = "check that the profile or token can read this tenant/project"
        elif name == "UNAVAILABLE":
            hint = "check the network and the address (and NPA_NEBIUS_ENDPOINT if set)"
        return CloudError(text, hint=hint)

    async def _pages(
        self,
        what: str,
        fetch: Callable[[Any, str, dict[str, Any]], Awaitable[Any]],
        service: Any = None,
    ) -> list[Any]:
        """The items of a paged listing, all pages within one timeout; at most `MAX_PAGES`
        pages (a longer listing is noted in `notes`)."""
        deadline = time.monotonic() + self.settings.timeout
        items: list[Any] = []
        token = ""
        for _ in range(MAX_PAGES):
            page = await self._call(
                what,
                lambda sdk, kw, tok=token: fetch(sdk, tok, kw),
                deadline=deadline,
                service=service,
            )
            items.extend(page.items)
            token = page.next_page_token
            if not token:
                return items
        self.notes.append(
            f"{self._where(what, service)}: the listing stopped after {MAX_PAGES} pages "
            f"({len(items)} items); the rest was not read"
        )
        return items

    async def _list(self, what: str, service: Any, request: Any, parent_id: str) -> list[Any]:
        """Every item of `service`'s List under `parent_id` (`request`: its request class)."""

        def fetch(sdk: Any, token: str, kw: dict[str, Any]) -> Any:
            req = request(parent_id=parent_id, page_size=PAGE_SIZE, page_token=token)
            return service(sdk).list(req, **kw)

        return await self._pages(what, fetch, service)

    async def _get_or_none(self, what: str, service: Any, request: Any, item_id: str) -> Any:
        """`service`'s Get of `item_id` (`request`: its request class); None when it is gone."""
        try:
            return await self._call(
                what, lambda sdk, kw: service(sdk).get(request(id=item_id), **kw), service=service
            )
        except _NotFound:
            return None
