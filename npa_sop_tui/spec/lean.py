"""The lean spec validator: the models' own schema run by pydantic-core, without pydantic.

A cold `npa soperator validate` is a script's most frequent call. `import pydantic` is cheap
(it loads pydantic-core and little else), but importing `BaseModel` and building the spec's
models costs more than everything else the command does together. The models compile to a
pydantic-core schema, so that schema is exported once (`lean_export.py`) to a cache file
under the npa home, and later runs validate with pydantic-core directly: the same schema,
the same errors, the same rules and messages (`reading.py` is shared), no model machinery.
The cache also keeps the catalog's data parsed (used while `catalog.yaml` is unchanged).

The cache cannot change a verdict. It is used only when all of these hold; anything else,
a missing or unreadable file included, means the models are used (and the cache is written
again):

- it is a regular file (not a symlink) owned by the user and writable by nobody else, in a
  folder of the user's that nobody else can enter (0700), none of it reached via a symlink;
- its key names the pydantic and pydantic-core versions, npa's version and a checksum of
  every source file the schema comes from, as running now;
- the key's SHA-256 of the content (schema, field tables, parsed catalog) matches the
  content, so an edit of any of it (an `extra_fields_behavior: ignore`, a region added to
  the catalog) makes the whole file unused;
- the schema holds no regular expression nor regex engine: the models have none (patterns
  live in the rules' code), so one in the cache was put there by someone else.

The file is the key as one JSON line, then the content as JSON; the hash covers the bytes
after the first newline exactly as written.
"""

from __future__ import annotations

import hashlib
import json
import os
import zlib
from pathlib import Path
from typing import Any

from npa_sop_tui.spec.reading import LoadedSpec, SpecReader, load_spec_file

CACHE_NAME = "lean-spec-schema.json"
# The files the exported schema is made from and read by: a change in any re-exports it.
_SOURCES = ("model.py", "model_fields.py", "derived.py", "lean_export.py", "lean.py")
_FORMAT = 2  # the cache file's layout: key line, then content
MAX_CACHE_BYTES = 8 * 1024 * 1024
# Schema keys that would make pydantic-core compile a pattern: the models have none.
_UNTRUSTED_KEYS = frozenset({"pattern", "regex_engine"})


def cache_path() -> Path:
    from npa_sop_tui.home.paths import npa_home

    return npa_home() / "cache" / CACHE_NAME


def validity_key() -> dict[str, Any]:
    """What the cache must have been made with to be used."""
    import pydantic
    import pydantic_core

    from npa_sop_tui import __version__

    here = Path(__file__).parent
    return {
        "format": _FORMAT,
        "npa": __version__,
        "pydantic": pydantic.VERSION,
        "pydantic_core": pydantic_core.__version__,
        "sources": {name: zlib.crc32((here / name).read_bytes()) for name in _SOURCES},
    }


class _Fields:
    """`reading.FieldIndex` from the exported tables."""

    def __init__(self, names: dict[str, list[str]], literals: dict[str, list[str]]) -> None:
        self.names = names
        self.literals = literals

    def names_at(self, loc: tuple[str | int, ...]) -> list[str] | None:
        return self.names.get(".".join(str(p) for p in loc if not isinstance(p, int)))

    def literal_choices(self, name: str) -> tuple[str, ...] | None:
        choices = self.literals.get(name)
        return tuple(choices) if choices is not None else None


def _revive(node: Any, classes: dict[str, type]) -> Any:
    """The exported schema with its `{"$py": …}` markers replaced by the stand-ins."""
    from npa_sop_tui.spec.derived import LEAN_FUNCTIONS, LEAN_MIXINS, LeanSecret

    def stand_in(marker: str) -> Any:
        kind, _, rest = marker.partition(":")
        if kind == "secret":
            return LeanSecret
        if kind == "list":
            return list
        if kind == "fn":
            return LEAN_FUNCTIONS[rest]
        if kind == "model":
            name, _, mixin = rest.partition(":")
            if name not in classes:
                bases = (LEAN_MIXINS[mixin],) if mixin else ()
                classes[name] = type(name, bases, {"__module__": __name__})
            return classes[name]
        raise KeyError(marker)

    def walk(item: Any) -> Any:
        if isinstance(item, dict):
            if set(item) == {"$py"}:
                return stand_in(item["$py"])
            if _UNTRUSTED_KEYS & set(item):
                raise ValueError("a regular expression in the cached schema")
            return {key: walk(value) for key, value in item.items()}
        if isinstance(item, list):
            return [walk(value) for value in item]
        return item

    return walk(node)


def _content_hash(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


def read_cache(path: Path | None = None) -> dict[str, Any] | None:
    """The cache's content when it may be used (see the module's docstring), else None."""
    from npa_sop_tui.home.files import read_trusted

    raw = read_trusted(path or cache_path(), limit=MAX_CACHE_BYTES)
    if raw is None:
        return None
    head, _, body = raw.partition(b"\n")
    key = json.loads(head)
    if not isinstance(key, dict) or key.pop("content_sha256", None) != _content_hash(body):
        return None
    if key != validity_key():
        return None
    doc = json.loads(body)
    return doc if isinstance(doc, dict) else None


def cached_reader(path: Path | None = None) -> SpecReader | None:
    """A reader over the cached schema, or None when there is no usable cache."""
    from pydantic_core import SchemaValidator

    try:
        doc = read_cache(path)
        if doc is None:
            return None
        validator = SchemaValidator(_revive(doc["schema"], {}))
        reader = SpecReader(validator.validate_python, _Fields(doc["fields"], doc["literals"]))
        catalog = doc.get("catalog")
        if isinstance(catalog, dict):
            from npa_sop_tui.spec.catalog import use_parsed

            use_parsed(catalog["crc32"], catalog["data"])  # checked against the file there
        return reader
    except Exception:  # missing, unreadable, stale, damaged or tampered: the models will do
        return None


def cache_bytes(content: dict[str, Any]) -> bytes:
    """The cache file for `content` (the export): key line with the content's hash, content."""
    body = json.dumps(content, separators=(",", ":")).encode("utf-8")
    key = {**validity_key(), "content_sha256": _content_hash(body)}
    return json.dumps(key, separators=(",", ":")).encode("utf-8") + b"\n" + body


def refresh_cache(path: Path | None = None) -> bool:
    """Export the models' schema to the cache; False when it cannot be (then say nothing:
    the cache only makes later runs faster, and `validate` must work without it, in an npa
    home that is read-only or not a folder too)."""
    from npa_sop_tui.home.fsutil import atomic_write_bytes
    from npa_sop_tui.spec.lean_export import export

    try:
        target = path or cache_path()
        atomic_write_bytes(target, cache_bytes(export()), mode=0o600)
    except Exception:  # LeanExportError, OSError, DiskFull, the home's UsageError …
        return False
    return True


def load_spec(path: str | Path, *, capacity: dict[str, str] | None = None) -> LoadedSpec:
    """`model.load_spec` for the CLI's `validate`: the cached schema when there is one, else
    the models (and the cache is written for next time). `NPA_LEAN_VALIDATE=0` always uses
    the models and leaves the cache alone."""
    lean = os.environ.get("NPA_LEAN_VALIDATE", "").strip() != "0"
    reader = cached_reader() if lean else None
    if reader is None:
        from npa_sop_tui.spec.model import READER

        if lean:
            refresh_cache()
        reader = READER
    return load_spec_file(path, reader, capacity=capacity)
