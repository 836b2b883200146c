"""The spec files the app reads and writes, as the backend hands them to the screens: a
mapping for the form (every setting in the file kept), the findings that kept the model from
reading a file, the text of an opened file with only the changed fields edited, and an
atomic write that refuses a file changed on disk since it was opened.

Library modules are imported inside the methods, as in tui/backend.py: the app's first
frame loads none of them."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from npa_sop_tui.spec.findings import Finding


class SpecFiles:
    """Spec reading, checking and writing (no state: the `Backend` is one of these)."""

    def kube_context(self, name: str) -> str:
        from npa_sop_tui.recipe.render import kube_context

        return kube_context(name)

    def default_spec_path(self, name: str) -> Path:
        """Where the wizard offers to write a new cluster's spec: ./cluster.yaml, in the
        sandbox too (the file is the user's; only the cluster's state is sandboxed)."""
        return Path.cwd() / "cluster.yaml"

    def user_spec_for(self, name: str) -> Path | None:
        """The user's own spec file of cluster `name`: ./cluster.yaml when its `name:` is
        `name` (what the wizard writes and deploys), else None."""
        import yaml

        path = self.default_spec_path(name)
        try:
            doc = yaml.safe_load(path.read_text(encoding="utf-8")) if path.is_file() else None
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            return None
        return path if isinstance(doc, dict) and doc.get("name") == name else None

    def example_mapping(self) -> dict[str, Any]:
        """A new cluster: the smallest spec the wizard starts from."""
        return {
            "apiVersion": "npa.soperator/v0.0.1",
            "name": "",
            "region": "",
            "control_plane": {"system": {"min_size": 3}},
            "workers": [],
            "accounting": False,
        }

    def load_spec(self, path: Path) -> dict[str, Any]:
        """Read cluster.yaml as a mapping; every setting in the file is kept."""
        from npa_sop_tui.spec.model import load_spec

        # validate=False: a file with rule errors still opens, and the wizard shows them
        loaded = load_spec(Path(path), validate=False)
        return self.to_mapping(loaded.spec)

    def open_with_findings(self, path: Path) -> tuple[dict[str, Any], Any, list[Finding]]:
        """(mapping, round-trip document, findings) of a spec whose fields the model refuses
        (an unknown key, a wrong type): the form gets the file's own mapping, every field it
        can read, and the findings say where and what to fix. A file that is not a YAML
        mapping still raises (there is nothing to show in a form)."""
        from npa_sop_tui.spec.roundtrip import SpecDocument

        document = SpecDocument.read(path)
        mapping, findings = self.read_text(document.original, path)
        return mapping, document, findings

    def parse_document(self, text: str, path: Path) -> Any:
        """The round-trip document of spec text not (yet) on disk."""
        from npa_sop_tui.spec.roundtrip import SpecDocument

        return SpecDocument.parse(text, path)

    def read_text(self, text: str, path: Path) -> tuple[dict[str, Any], list[Finding]]:
        """(mapping, findings that kept the model from reading it) of spec text."""
        from npa_sop_tui.spec.model import parse_spec_text
        from npa_sop_tui.spec.reading import SpecError
        from npa_sop_tui.spec.roundtrip import SpecDocument, plain

        try:
            loaded = parse_spec_text(text, source=str(path), validate=False)
        except SpecError as exc:
            return plain(SpecDocument.parse(text, path).data), list(exc.findings)
        return self.to_mapping(loaded.spec), []

    def edited_text(
        self, document: Any, before: Mapping[str, Any], after: Mapping[str, Any]
    ) -> tuple[str, str]:
        """(new text, unified diff) of an opened file with the form's changes applied.

        Only the fields that differ between `before` and `after` are edited, so the rest of
        the file (comments, order, quoting, flow style) stays byte for byte.
        """
        from npa_sop_tui.spec.roundtrip import SpecDocument

        doc = SpecDocument.parse(document.original, document.path)
        doc.apply_changes(before, after)
        return doc.render(), doc.diff()

    def write_text(self, path: Path, text: str, *, expected: str | None = None) -> Any:
        """Write spec text atomically (a symlink's target, mode and owner kept); returns the
        document of what is now on disk. With `expected` (the text the file held when it was
        opened), a file changed on disk since is not overwritten (`FileChanged`)."""
        from npa_sop_tui.home.file_edit import replace_checked
        from npa_sop_tui.spec.roundtrip import SpecDocument

        before = expected.encode("utf-8") if expected is not None else None
        replace_checked(Path(path), text.encode("utf-8"), expected=before)
        return SpecDocument.parse(text, Path(path))

    def to_mapping(self, spec: Any) -> dict[str, Any]:
        from npa_sop_tui.spec.yaml_dump import REVEAL_SECRETS

        # exclude_unset: the file written back has what the user set, no more; secrets kept
        # as they are (a capacity block ID in the file must survive a round trip).
        return spec.model_dump(
            mode="json", by_alias=True, exclude_unset=True, context={REVEAL_SECRETS: True}
        )

    def check(self, mapping: Mapping[str, Any]) -> tuple[Any | None, list[Finding]]:
        """Parse and validate a mapping: (spec or None, every finding)."""
        from npa_sop_tui.errors import NpaError
        from npa_sop_tui.spec.model import spec_from_mapping
        from npa_sop_tui.spec.validate import validate_spec

        try:
            spec = spec_from_mapping(dict(mapping), source="wizard", validate=False)
        except NpaError as exc:
            findings = getattr(exc, "findings", None)
            if findings:
                return None, list(findings)
            return None, [Finding("error", "", exc.message, exc.hint)]
        return spec, validate_spec(spec)

    def dump_yaml(self, spec: Any) -> str:
        from npa_sop_tui.spec.yaml_dump import dump_spec_yaml

        return dump_spec_yaml(spec)
