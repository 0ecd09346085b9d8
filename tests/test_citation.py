"""CITATION.cff cites the version the package is: its `version` is pyproject.toml's, its `date-released`
(if present) a valid date, the date CHANGELOG.md gives that version's release."""

import datetime
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _citation_field(name, root=ROOT):
    """A top-level scalar field of CITATION.cff (``name: value``, quotes removed), else None."""
    for line in (root / "CITATION.cff").read_text(encoding="utf-8").splitlines():
        match = re.fullmatch(rf"{re.escape(name)}:\s*(.*?)\s*", line)
        if match:
            return match.group(1).strip("'\"")
    return None


def _package_version():
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]


def test_citation_version_is_the_package_version():
    import stumpcheck

    version = _package_version()
    assert _citation_field("version") == version, (
        f"CITATION.cff says version {_citation_field('version')!r}, pyproject.toml {version!r}")
    assert stumpcheck.__version__ == version


def test_citation_release_date_is_a_date_and_the_changelogs():
    released = _citation_field("date-released")
    if released is None:
        return
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", released), f"date-released must be YYYY-MM-DD, got {released!r}"
    date = datetime.date.fromisoformat(released)  # raises on a day that does not exist (2026-02-30)
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    heading = re.search(rf"^## {re.escape(_package_version())} \((\d{{4}}-\d{{2}}-\d{{2}})\)", changelog, re.M)
    if heading:
        assert date == datetime.date.fromisoformat(heading.group(1)), (
            f"CITATION.cff date-released {released}, CHANGELOG.md: {heading.group(0)}")


def test_citation_field_reader_reads_top_level_fields_only(tmp_path):
    (tmp_path / "CITATION.cff").write_text('title: "x"\nreferences:\n  - version: 9\nversion: "1.2.3"\n')
    assert _citation_field("version", tmp_path) == "1.2.3"
    assert _citation_field("date-released", tmp_path) is None
