"""One Kubernetes informer: list, then watch from the last version seen, in its own thread.

The loop: list (remember resourceVersion) → watch from it with bookmarks and a server-side
timeout → on a clean end, watch again from the last version seen (bookmarks keep it current)
→ on 410 Gone re-list → on any other error back off and re-list. Custom resources whose CRD
is not installed yet answer 404; for an optional resource that is "not yet", polled again
later, and never an error. `KubeCollector` (status/kube_collector.py) runs one per resource.
"""

from __future__ import annotations

import contextlib
import json
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from npa_sop_tui.status.kube import NAMESPACE

_JITTER = random.Random()  # its own generator: backoff in a thread never moves the global one


class WatchGone(Exception):
    """The server no longer has history for our resourceVersion (410)."""


class ApiFailure(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class KubeSettings:
    context: str
    kubeconfig: Path | None = None
    namespace: str = NAMESPACE
    watch_timeout: int = 60  # seconds; every watch ends after this and is resumed
    crd_poll: float = 15.0  # how often to look again for a CRD that was missing
    backoff_initial: float = 0.5
    backoff_max: float = 30.0


@dataclass
class ResourceState:
    """What one informer knows: its objects and how its last attempt went."""

    key: str
    objects: dict[str, dict[str, Any]] = field(default_factory=dict)
    synced: bool = False  # at least one list succeeded
    missing: bool = False  # 404: the CRD is not installed (yet)
    error: str | None = None
    error_since: float | None = None
    last_ok: float | None = None
    relists: int = 0
    watches: int = 0
    watches_with_events: int = 0  # since the last 410


class Informer:
    def __init__(
        self,
        key: str,
        lister: Callable[..., Any],
        args: tuple[Any, ...],
        settings: KubeSettings,
        notify: Callable[[], None],
        stop: threading.Event,
        lock: threading.Lock,
        *,
        optional: bool = False,
    ) -> None:
        self.state = ResourceState(key)
        self._list_fn, self._args = lister, args
        self._settings, self._notify, self._stop = settings, notify, stop
        self._lock = lock
        self._optional = optional
        self._resp: Any = None
        self._rv = ""
        self.thread = threading.Thread(target=self._run, name=f"kube-{key}", daemon=True)

    # Called from the loop thread at shutdown: closing the socket unblocks the reader.
    def interrupt(self) -> None:
        resp = self._resp
        if resp is not None:
            with contextlib.suppress(Exception):
                resp.shutdown() if hasattr(resp, "shutdown") else None
            with contextlib.suppress(Exception):
                resp.close()

    def _call(self, **kwargs: Any) -> Any:
        from kubernetes.client.exceptions import ApiException

        try:
            return self._list_fn(*self._args, _preload_content=False, **kwargs)
        except ApiException as exc:
            raise ApiFailure(exc.status or 0, _api_message(exc)) from exc

    def _list(self) -> str:
        resp = self._call(_request_timeout=(5, 30))
        try:
            doc = json.loads(resp.data)
        finally:
            resp.release_conn()
        objects = {_obj_key(o): o for o in doc.get("items") or []}
        with self._lock:
            st = self.state
            st.objects = objects
            st.synced, st.missing = True, False
            st.error = st.error_since = None
            st.last_ok = time.time()
            st.relists += 1
        self._notify()
        return str((doc.get("metadata") or {}).get("resourceVersion") or "")

    def _watch(self, rv: str) -> None:
        from kubernetes.watch.watch import iter_resp_lines

        timeout = self._settings.watch_timeout
        resp = self._call(
            watch=True,
            resource_version=rv or None,
            allow_watch_bookmarks=True,
            timeout_seconds=int(timeout),
            _request_timeout=(5, timeout + 15),
        )
        self._resp = resp
        with self._lock:
            self.state.watches += 1
        try:
            for line in iter_resp_lines(resp):
                if self._stop.is_set():
                    break
                if not line:
                    continue
                event = json.loads(line)
                kind, obj = event.get("type"), event.get("object") or {}
                if kind == "ERROR":
                    code = obj.get("code") or 0
                    if code == 410:
                        raise WatchGone(obj.get("message") or "410 Gone")
                    raise ApiFailure(code, obj.get("message") or "watch error")
                rv = str((obj.get("metadata") or {}).get("resourceVersion") or rv)
                self._rv = rv
                if kind == "BOOKMARK":
                    with self._lock:
                        self.state.last_ok = time.time()  # the server is alive and current
                        self.state.watches_with_events += 1
                    continue
                with self._lock:
                    self.state.watches_with_events += 1
                    if kind == "DELETED":
                        self.state.objects.pop(_obj_key(obj), None)
                    else:
                        self.state.objects[_obj_key(obj)] = obj
                    self.state.last_ok = time.time()
                self._notify()
        finally:
            self._resp = None
            with contextlib.suppress(Exception):
                resp.release_conn()

    def _fail(self, message: str) -> None:
        with self._lock:
            st = self.state
            if st.error_since is None:
                st.error_since = time.time()
            st.error = message
        self._notify()

    def _sleep(self, seconds: float) -> None:
        self._stop.wait(seconds)

    def _backoff(self, step: float) -> None:
        """Wait `step` capped at `backoff_max`, minus up to half of it at random (jitter:
        informers that failed together do not retry together)."""
        capped = min(step, self._settings.backoff_max)
        self._sleep(capped * (1 - 0.5 * _JITTER.random()))

    def _watch_forever(self, rv: str) -> None:
        """Resume watches from the last version seen; one dropped stream is retried at once."""
        self._rv = rv
        may_retry = True
        while not self._stop.is_set():
            try:
                self._watch(self._rv)
                may_retry = True
            except (WatchGone, ApiFailure):
                raise
            except Exception:
                if self._stop.is_set() or not may_retry:
                    raise
                may_retry = False  # a dropped connection: resume once without backoff

    def _run(self) -> None:
        delay = 0.0
        s = self._settings
        gone_streak = 0
        while not self._stop.is_set():
            try:
                rv = self._list()
                delay = 0.0
                self._watch_forever(rv)
            except WatchGone:
                # History is gone: re-list at once; but a server that answers 410 right
                # after every list must not make us spin.
                gone_streak = gone_streak + 1 if self.state.watches_with_events == 0 else 1
                with self._lock:
                    self.state.watches_with_events = 0
                if gone_streak > 1:
                    self._backoff(s.backoff_initial * 2 ** (gone_streak - 2))
                continue
            except ApiFailure as exc:
                if exc.status == 404 and self._optional:
                    with self._lock:
                        self.state.missing, self.state.synced = True, True
                        self.state.objects = {}
                        self.state.error = self.state.error_since = None
                        self.state.last_ok = time.time()
                    self._notify()
                    self._sleep(s.crd_poll)
                    continue
                self._fail(f"{self.state.key}: HTTP {exc.status}: {exc}")
            except Exception as exc:  # network errors, dropped streams, bad JSON
                if self._stop.is_set():
                    break
                self._fail(f"{self.state.key}: {short_error(exc)}")
            delay = s.backoff_initial if delay == 0 else min(delay * 2, s.backoff_max)
            self._backoff(delay)


def copy_state(st: ResourceState) -> ResourceState:
    return ResourceState(
        st.key,
        dict(st.objects),
        st.synced,
        st.missing,
        st.error,
        st.error_since,
        st.last_ok,
        st.relists,
        st.watches,
        st.watches_with_events,
    )


def _obj_key(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace') or ''}/{meta.get('name')}"


def _api_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if body:
        with contextlib.suppress(ValueError, TypeError):
            doc = json.loads(body)
            if isinstance(doc, dict) and doc.get("message"):
                return str(doc["message"])
    return str(getattr(exc, "reason", None) or exc)


def short_error(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    first = text.splitlines()[0]
    # urllib3 wraps the interesting part deep inside; keep it readable.
    if "Connection refused" in text:
        return f"{type(exc).__name__}: connection refused"
    return first[:300]
