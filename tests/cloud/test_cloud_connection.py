"""The SDK's background import (warm-up) never imports a module the caller's thread may be
importing at the same moment: everything it needs outside the SDK's own packages is
imported first, in the caller's thread.

Two threads importing one package and its submodule at once can fail in CPython 3.11 with
`_DeadlockError`, and the process then hangs at exit: a refused sign-in in `npa soperator
preflight` once hung that way until it was killed.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from npa_sop_tui.cloud import connection

# What the SDK brings that npa itself never imports before waiting for the warm-up.
SDK_OWN = {"nebius", "grpc", "google", "cryptography", "jwt", "_cffi_backend"}

NEW_MODULES = """
import importlib, json, sys
import npa_sop_tui.cloud.connection as connection
for name in (connection.SHARED_WITH_THE_SDK if sys.argv[1] == "shared" else ()):
    importlib.import_module(name)
before = set(sys.modules)
connection.import_the_sdk()
print(json.dumps(sorted(set(sys.modules) - before)))
"""


def modules_the_sdk_imports(first: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", NEW_MODULES, first], capture_output=True, text=True, check=True
    )
    return [str(m) for m in json.loads(done.stdout)]


def outside_the_sdk(modules: list[str]) -> list[str]:
    tops = {m: m.split(".")[0] for m in modules}
    return [m for m, top in tops.items() if top not in SDK_OWN and not top.startswith("_cython")
            and not m.startswith("_openssl")]  # fmt: skip


def test_after_the_shared_modules_the_background_import_loads_only_the_sdks_own() -> None:
    assert outside_the_sdk(modules_the_sdk_imports("shared")) == []


def test_without_them_it_would_import_the_standard_library_beside_the_caller() -> None:
    """The check above can fail: on its own the SDK's import loads the standard library's
    packages (asyncio, http, urllib, …) that npa's own code imports too."""
    bare = outside_the_sdk(modules_the_sdk_imports("none"))
    assert {"asyncio", "http.client", "urllib.request"} <= set(bare)
    assert all(m.split(".")[0] in sys.stdlib_module_names or m == "typing_extensions"
               for m in bare)  # fmt: skip


def test_warm_up_imports_the_shared_modules_before_its_thread_starts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[str] = []

    class Thread:
        def __init__(self, **kwargs: object) -> None:
            self.name = kwargs["name"]

        def start(self) -> None:
            seen.append("start")

        def join(self) -> None:
            seen.append("join")

    import importlib
    import threading

    monkeypatch.setattr(threading, "Thread", Thread)
    monkeypatch.setattr(importlib, "import_module", seen.append)
    monkeypatch.setattr(connection, "_warming", [])
    connection.warm_up()
    connection.warm_up()  # once per process
    connection.wait_for_warm_up()
    assert seen == [*connection.SHARED_WITH_THE_SDK, "start", "join"]
