"""The lean validator (spec/lean.py) reads every spec exactly as the pydantic models do.

It runs the models' own schema, exported to a cache file, with pydantic-core alone. These
tests hold it to the models: the same findings (messages, hints, positions), the same values
and summaries, over the examples and hundreds of broken variants of them; and its cache is
used only when it was made from the code and libraries that are running.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel, SecretStr, ValidationError, field_validator

from npa_sop_tui.spec import catalog, lean, lean_export
from npa_sop_tui.spec.derived import LeanSecret, strip_secret
from npa_sop_tui.spec.model import (
    READER,
    SoperatorSpec,
    SpecError,
    WorkerPoolSpec,
    findings_from_validation_error,
)
from npa_sop_tui.spec.model_fields import ModelFields
from npa_sop_tui.spec.reading import LoadedSpec, SpecReader, parse_spec_text
from npa_sop_tui.spec.yaml_positions import load_yaml_mapping

from testkit.specs import ASSETS, COMMENTED, KEY, MINIMAL, REPO

EXAMPLES = sorted(p for p in ASSETS.glob("*.yaml") if "standin" not in p.name)
BAD_VALUES: list[Any] = ["x", "", "  ", 7, -1, 2.5, True, None, [], ["x"], {}, {"bogus": 1}]


@pytest.fixture(scope="module")
def lean_reader(tmp_path_factory: pytest.TempPathFactory) -> SpecReader:
    cache = tmp_path_factory.mktemp("lean") / lean.CACHE_NAME
    assert lean.refresh_cache(cache)
    reader = lean.cached_reader(cache)
    assert reader is not None
    return reader


def _plain(value: Any) -> Any:
    """A spec object as plain data, whichever validator made it (secrets shown as such)."""
    if hasattr(value, "get_secret_value"):
        return ("secret", value.get_secret_value())
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if hasattr(value, "__dict__"):
        return {k: _plain(v) for k, v in vars(value).items() if not k.startswith("__")}
    return value


def _outcome(text: str, reader: SpecReader, capacity: dict[str, str] | None = None) -> Any:
    try:
        loaded = parse_spec_text(text, reader, source="c.yaml", validate=True, capacity=capacity)
    except SpecError as exc:
        return ("refused", exc.message, exc.findings)
    spec = loaded.spec
    derived = (spec.kube_context, spec.sizing_tier, spec.worker_count, spec.has_gpu)
    return ("ok", loaded.findings, _plain(spec), spec.summary(capacity), derived)


def _paths(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield (*path, key)
            yield from _paths(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield (*path, i)
            yield from _paths(value, (*path, i))


def _variants(data: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Broken (and a few fine) copies of `data`: every value replaced by every bad value,
    every key dropped, and every key misspelt."""
    for path in _paths(data):
        *parents, last = path
        for change in [*BAD_VALUES, "drop", "misspell"]:
            variant = copy.deepcopy(data)
            parent: Any = variant
            for part in parents:
                parent = parent[part]
            if change == "drop":
                del parent[last]
            elif change == "misspell":
                if isinstance(last, int):
                    continue
                parent[last[:-1] or "x"] = parent.pop(last)
            else:
                parent[last] = change
            yield variant


def _corpus() -> list[str]:
    texts = [p.read_text() for p in EXAMPLES] + [MINIMAL, COMMENTED]
    for example in EXAMPLES:
        texts += [
            yaml.safe_dump(v, sort_keys=False)
            for v in _variants(yaml.safe_load(example.read_text()))
        ]
    texts += [
        "apiVersion: npa.soperator/v0.0.2\nname: demo\n",  # another version
        "name: demo\nk8s_version: 1.30\nnode_group_version: 72\n",  # unquoted versions
        "name: demo\nk8s_version: 1.3\n",
        f"name: demo\nroot_login_ssh_public_key: {KEY}\n",
        "name: demo\nroot_login_ssh_public_key: ssh-ed25519 AAAA\n",
        "name: demo\nworkers:\n  - name: g\n    platform: gpu-h200-sxm\n"
        "    preset: 8gpu-128vcpu-1600gb\n    capacity_block_group: capacityblockgroup-e0abc\n",
        "name: demo\nworkers:\n  - name: g\n    capacity_block_group: '   '\n",
        "name: demo\nworkers:\n  - name: g\n    capacity_block_group: 12\n",
        "- a list\n",
        "name: [unclosed\n",
    ]
    for key in ("self", "__dict__", "__class__", "__pydantic_fields_set__", "model_config"):
        texts += [f"name: demo\n{key}: 1\n", f"name: demo\nworkers:\n  - name: a\n    {key}: 1\n"]
    return texts


CORPUS = _corpus()


def test_the_corpus_is_broad() -> None:
    outcomes = [_outcome(text, READER) for text in CORPUS]
    assert len(CORPUS) > 900  # docs/spec.md says so
    assert sum(o[0] == "ok" for o in outcomes) > 20
    assert sum(o[0] == "refused" for o in outcomes) > 300


@pytest.mark.parametrize("start", range(0, len(CORPUS), 100))
def test_lean_reads_every_spec_as_the_models_do(lean_reader: SpecReader, start: int) -> None:
    for text in CORPUS[start : start + 100]:
        assert _outcome(text, lean_reader) == _outcome(text, READER), text


def test_run_time_capacity_counts_alike(lean_reader: SpecReader) -> None:
    text = (ASSETS / "gpu-reserved.yaml").read_text()
    pools = [p["name"] for p in yaml.safe_load(text)["workers"]]
    for capacity in ({}, {pools[0]: "capacityblockgroup-e01"}, {pools[0]: "wrong-prefix"}):
        assert _outcome(text, lean_reader, capacity) == _outcome(text, READER, capacity)


def test_the_lean_spec_hides_its_secret(lean_reader: SpecReader) -> None:
    text = "name: demo\nworkers:\n  - name: g\n    capacity_block_group: capacityblockgroup-e0abc\n"
    loaded = parse_spec_text(text, lean_reader, source="c.yaml", validate=False)
    secret = loaded.spec.workers[0].capacity_block_group
    assert "capacityblockgroup" not in f"{secret} {secret!r}"
    assert loaded.spec.workers[0].capacity_block_group_id == "capacityblockgroup-e0abc"


# --- the cache ------------------------------------------------------------------------------


def _split(cache: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    head, _, body = cache.read_bytes().partition(b"\n")
    return json.loads(head), json.loads(body)


def _rehashed(content: dict[str, Any], **key: Any) -> bytes:
    """A cache file for `content` with a correct content hash (what a deliberate forger
    writes), the key's other parts overridden by `key`."""
    head, _, body = lean.cache_bytes(content).partition(b"\n")
    return json.dumps({**json.loads(head), **key}).encode() + b"\n" + body


def test_a_cache_from_other_code_or_libraries_is_not_used(tmp_path: Path) -> None:
    cache = tmp_path / lean.CACHE_NAME
    assert lean.refresh_cache(cache)
    _, content = _split(cache)
    sources = lean.validity_key()["sources"]
    for part, stale in (
        ("pydantic_core", "0.0.1"),
        ("npa", "0.0.0"),
        ("sources", {**sources, "model.py": sources["model.py"] + 1}),  # model.py edited since
    ):
        cache.write_bytes(_rehashed(content, **{part: stale}))
        assert lean.cached_reader(cache) is None, part
    cache.write_bytes(_rehashed(content))
    assert lean.cached_reader(cache) is not None


@pytest.mark.parametrize(
    "damage",
    [
        lambda text: text[: len(text) // 2],  # cut short
        lambda text: "[]",
        lambda text: text.replace('"fn:blank_to_none"', '"fn:os.system"'),  # no such stand-in
        lambda text: text.replace('"type":"model"', '"type":"no-such-type"', 1),
    ],
)
def test_a_damaged_cache_is_not_used(tmp_path: Path, damage: Any) -> None:
    """Damaged content is unused even when its hash was made to match it."""
    cache = tmp_path / lean.CACHE_NAME
    assert lean.refresh_cache(cache)
    _, content = _split(cache)
    damaged = damage(json.dumps(content, separators=(",", ":")))
    try:
        parsed = json.loads(damaged)
    except ValueError:
        parsed = None
    cache.write_bytes(_rehashed(parsed) if isinstance(parsed, dict) else damaged.encode())
    assert lean.cached_reader(cache) is None


BAD_EXTRA = "bogus_field: 1\n"  # the models forbid unknown fields
BAD_REGION = ("region: us-central1", "region: xx-moon1")  # not a region in the catalog


def _verdicts(tmp_path: Path, tamper: Any) -> tuple[int, int, int]:
    """Exit codes of `validate` for a good spec, one with an unknown field and one with an
    unknown region, each run right after `tamper()` (a run that ignores the cache rebuilds
    it); the catalog parsed by an earlier run is forgotten each time, as in a new process."""
    from npa_sop_tui.cli.entry import main

    text = (ASSETS / "cluster.yaml").read_text()
    assert BAD_REGION[0] in text
    codes = []
    for name, body in (
        ("good", text),
        ("extra", text + BAD_EXTRA),
        ("region", text.replace(*BAD_REGION)),
    ):
        spec = tmp_path / f"{name}.yaml"
        spec.write_text(body)
        tamper()
        catalog._parsed = None
        catalog.load_catalog.cache_clear()
        codes.append(main(["soperator", "validate", "--spec", str(spec), "-o", "json"]))
    catalog._parsed = None
    catalog.load_catalog.cache_clear()
    return codes[0], codes[1], codes[2]


def _dicts(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _dicts(value)
    elif isinstance(node, list):
        for value in node:
            yield from _dicts(value)


def _edited(content: dict[str, Any], change: Any) -> dict[str, Any]:
    edited = copy.deepcopy(content)
    change(edited)
    return edited


def _ignore_extra(c: dict[str, Any]) -> None:
    found = 0
    for node in _dicts(c["schema"]):
        for key in ("extra_behavior", "extra_fields_behavior"):
            if node.get(key) == "forbid":
                node[key] = "ignore"
                found += 1
    assert found


def _add_region(c: dict[str, Any]) -> None:
    regions = c["catalog"]["data"]["regions"]
    regions["xx-moon1"] = regions["us-central1"]


def _add_pattern(c: dict[str, Any]) -> None:
    for node in _dicts(c["schema"]):
        if node.get("type") == "str":
            node["pattern"] = "^(a+)+$"
            node["regex_engine"] = "python-re"


def _drop_tables(c: dict[str, Any]) -> None:
    c["fields"], c["literals"] = {}, {}


def _tampers(cache: Path) -> list[tuple[str, Any]]:
    """(what, apply) for each way to tamper with the cache: its key, its content hash, each
    kind of content, and each condition on who could have written it."""
    fresh = cache.read_bytes()
    key, content = _split(cache)
    head = fresh.partition(b"\n")[0]

    def unhashed(change: Any) -> bytes:  # content edited, the stored hash left as it was
        return head + b"\n" + json.dumps(_edited(content, change), separators=(",", ":")).encode()

    def write(data: bytes, mode: int = 0o600, folder: int = 0o700, owner: int | None = None) -> Any:
        def apply() -> None:
            if cache.is_symlink() or cache.parent.is_symlink():
                return
            cache.write_bytes(data)
            cache.chmod(mode)
            cache.parent.chmod(folder)
            if owner is not None:
                os.chown(cache, owner, owner)

        return apply

    forged = _rehashed(_edited(content, _ignore_extra))  # trusted only by its hash
    patterned = _edited(content, _add_pattern)
    elsewhere = cache.parent.parent.parent / "planted-cache"

    def planted_folder() -> None:
        elsewhere.mkdir(mode=0o700, exist_ok=True)
        (elsewhere / lean.CACHE_NAME).write_bytes(forged)
        (elsewhere / lean.CACHE_NAME).chmod(0o600)
        if not cache.parent.is_symlink():
            shutil.rmtree(cache.parent)
            cache.parent.symlink_to(elsewhere)

    def planted_file() -> None:
        planted_folder()
        if cache.parent.is_symlink():
            cache.parent.unlink()
            cache.parent.mkdir(mode=0o700)
        cache.unlink(missing_ok=True)
        cache.symlink_to(elsewhere / lean.CACHE_NAME)

    return [
        ("schema: extra fields ignored", write(unhashed(_ignore_extra))),
        ("catalog: a region added, its CRC kept", write(unhashed(_add_region))),
        ("field tables emptied", write(unhashed(_drop_tables))),
        ("key: content hash", write(fresh.replace(key["content_sha256"].encode(), b"0" * 64))),
        ("key: npa version", write(fresh.replace(json.dumps(key["npa"]).encode(), b'"9.9"', 1))),
        ("schema: a python-re pattern, hash recomputed", write(_rehashed(patterned))),
        ("file mode 0666", write(forged, mode=0o666)),
        ("file group-writable", write(forged, mode=0o620)),
        ("folder 0755", write(forged, folder=0o755)),
        ("owned by another user", write(forged, owner=4242)),
        ("cache folder is a symlink", planted_folder),
        ("cache file is a symlink", planted_file),
    ]


def test_validation_cache_tampering_cannot_change_a_verdict(npa_home: Path, tmp_path: Path) -> None:
    """Every field kind of the cache (key, content hash, schema, catalog, field tables, a
    pattern) and every condition on who wrote it (owner, modes, folder, symlinks), tampered
    with in turn: the verdicts stay the models', and nothing is written through a link."""
    assert _verdicts(tmp_path, lambda: None) == (0, 2, 2)  # the models; the cache is written
    cache = npa_home / "cache" / lean.CACHE_NAME
    assert lean.cached_reader(cache) is not None  # and used from now on
    assert _verdicts(tmp_path, lambda: None) == (0, 2, 2)
    for what, tamper in _tampers(cache):
        tamper()
        assert lean.cached_reader(cache) is None, what
        assert _verdicts(tmp_path, tamper) == (0, 2, 2), what
    # Each condition above is what refused its case: the same forged content (hash made to
    # match, which only the user could write here) in a trusted file is read.
    planted = tmp_path / "planted-cache" / lean.CACHE_NAME
    assert b'"ignore"' in planted.read_bytes()  # never rewritten through the links
    cache.unlink()
    cache.write_bytes(planted.read_bytes())
    cache.chmod(0o600)
    assert lean.cached_reader(cache) is not None


def test_the_cache_is_private(npa_home: Path) -> None:
    assert lean.refresh_cache()
    cache = npa_home / "cache" / lean.CACHE_NAME
    assert cache.stat().st_mode & 0o077 == 0 and cache.parent.stat().st_mode & 0o077 == 0


def test_export_refuses_what_it_has_no_stand_in_for() -> None:
    def shout(value: str) -> str:
        return value.upper()

    class Odd(BaseModel):
        name: str
        _shout = field_validator("name")(shout)

    with pytest.raises(lean_export.LeanExportError, match="shout"):
        lean_export.export(Odd)


# --- the CLI --------------------------------------------------------------------------------

PROBE = (
    "import sys\n"
    "from npa_sop_tui.cli.entry import main\n"
    "code = main(sys.argv[1:])\n"
    "print('MODELS', 'pydantic.main' in sys.modules, code)\n"
)


def _validate(spec: Path, home: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", PROBE, "soperator", "validate", "--spec", str(spec)],
        capture_output=True,
        text=True,
        env={**os.environ, "NPA_HOME": str(home), **env},
        cwd=REPO,
        check=False,
    )


@pytest.mark.parametrize("good", [True, False])
def test_validate_uses_the_models_once_then_the_cache(tmp_path: Path, good: bool) -> None:
    spec = tmp_path / "cluster.yaml"
    text = (ASSETS / "cluster.yaml").read_text()
    spec.write_text(text if good else text.replace("size: 2", "size: two") + "bogus: 1\n")
    code = 0 if good else 2
    first = _validate(spec, tmp_path / "home")
    assert first.stdout.endswith(f"MODELS True {code}\n"), first.stdout + first.stderr
    assert (tmp_path / "home" / "cache" / lean.CACHE_NAME).is_file()
    second = _validate(spec, tmp_path / "home")
    assert second.stdout.endswith(f"MODELS False {code}\n"), second.stdout + second.stderr
    assert (second.stdout, second.stderr) == (first.stdout.replace("True", "False"), first.stderr)


def test_validate_can_be_told_to_use_the_models(tmp_path: Path) -> None:
    for _ in range(2):
        done = _validate(ASSETS / "cluster.yaml", tmp_path, NPA_LEAN_VALIDATE="0")
        assert done.stdout.endswith("MODELS True 0\n"), done.stdout + done.stderr
    assert not (tmp_path / "cache").exists()


def test_the_cached_catalog_is_used_only_for_the_same_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The parsed catalog in the cache is used while catalog.yaml's CRC-32 is the one it was
    parsed from; a forged cache (hash recomputed) offering other data for the same CRC is what
    the hash cannot catch, so the catalog still checks the offer against its own file."""
    cache = tmp_path / lean.CACHE_NAME
    assert lean.refresh_cache(cache)
    _, content = _split(cache)
    expected = catalog.load_catalog()
    monkeypatch.setattr(catalog, "_parsed", None)
    content["catalog"]["crc32"] += 1  # parsed from another catalog.yaml
    cache.write_bytes(_rehashed(content))
    catalog.load_catalog.cache_clear()
    assert lean.cached_reader(cache) is not None
    assert catalog.load_catalog() == expected
    content["catalog"]["data"] = {"regions": "damaged"}
    content["catalog"]["crc32"] -= 1
    cache.write_bytes(_rehashed(content))
    catalog.load_catalog.cache_clear()
    assert lean.cached_reader(cache) is not None
    assert catalog.load_catalog() == expected  # a damaged offer is not used
    catalog.load_catalog.cache_clear()


def test_validate_works_where_no_cache_can_be_written(tmp_path: Path) -> None:
    home = tmp_path / "home-is-a-file"
    home.write_text("")
    done = _validate(ASSETS / "cluster.yaml", home)
    assert done.stdout.endswith("MODELS True 0\n"), done.stdout + done.stderr
    assert "error" not in done.stderr


# --- the parts the models and the lean validator share -------------------------------------


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("  capacityblockgroup-e01  ", "capacityblockgroup-e01"),
        ("   ", None),
        (None, None),
        (SecretStr(" capacityblockgroup-e01 "), "capacityblockgroup-e01"),
        (LeanSecret(""), None),
        (12, 12),  # left for the field's type to reject
    ],
)
def test_a_secret_is_stripped_whatever_it_comes_in(given: Any, expected: Any) -> None:
    assert strip_secret(given) == expected


def test_the_lean_secret_is_masked_and_compares_by_value() -> None:
    secret = LeanSecret("capacityblockgroup-e01")
    assert (str(secret), str(LeanSecret(""))) == ("**********", "")
    assert repr(secret) == "LeanSecret('**********')"
    assert secret == LeanSecret("capacityblockgroup-e01") == SecretStr("capacityblockgroup-e01")
    assert secret != LeanSecret("other") and secret != "capacityblockgroup-e01"
    assert hash(secret) == hash(LeanSecret("capacityblockgroup-e01")) and len(secret) == 22


def test_a_loaded_spec_keeps_what_it_is_given(lean_reader: SpecReader) -> None:
    spec = parse_spec_text(MINIMAL, lean_reader, source="c.yaml", validate=True).spec
    assert LoadedSpec(spec, Path("c.yaml"), "c.yaml").path == Path("c.yaml")
    assert LoadedSpec(spec, None, "c.yaml").findings == []


def test_lean_load_spec_runs_every_rule(npa_home: Path, tmp_path: Path) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(MINIMAL.replace("name: demo", "name: Bad_Name"))
    for _ in range(2):  # the models (writing the cache), then the cache
        with pytest.raises(SpecError) as err:
            lean.load_spec(path)
        assert [f.path for f in err.value.findings] == ["name"]
    assert (npa_home / "cache" / lean.CACHE_NAME).is_file()


def test_model_fields_answer_for_what_is_there() -> None:
    fields = ModelFields(SoperatorSpec)
    assert fields.literal_choices("apiVersion") == ("npa.soperator/v0.0.1",)
    assert fields.literal_choices("api_version") == ("npa.soperator/v0.0.1",)
    assert fields.literal_choices("no_such_field") is None
    assert fields.names_at(("workers", 0)) == list(WorkerPoolSpec.model_fields)
    assert fields.names_at(("region",)) is None


def test_validation_errors_are_placed_where_they_were_written() -> None:
    text = "name: demo\nworkers:\n  - name: cpu\n    size: two\n"
    doc = load_yaml_mapping(text, source="c.yaml", what="spec")
    with pytest.raises(ValidationError) as err:
        SoperatorSpec.model_validate(doc.data)
    (finding,) = findings_from_validation_error(err.value, SoperatorSpec, doc.positions)
    assert (finding.path, finding.file, finding.line, finding.column) == (
        "workers[0].size",
        "c.yaml",
        4,
        11,
    )
