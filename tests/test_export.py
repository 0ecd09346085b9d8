"""Golden test: `stumpcheck export` regenerates derivations/ and numerics/generated/ byte for byte."""

from __future__ import annotations

import filecmp
from pathlib import Path

import pytest
import sympy as sp

from stumpcheck.theory.export import ASYMPTOTICS_MODULE, GENERATED_MODULES, export, load_json

ROOT = Path(__file__).resolve().parent.parent
COMMITTED = ROOT / "derivations"


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    out = tmp_path_factory.mktemp("derivations")
    package = tmp_path_factory.mktemp("generated")
    export(out, "all", package_dir=package)
    return out, package


def _files(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}


def test_export_reproduces_committed_derivations_byte_for_byte(fresh):
    out, _ = fresh
    assert _files(out) == _files(COMMITTED), "file lists differ: run `stumpcheck export`"
    differing = [name for name in sorted(_files(out))
                 if (out / name).read_bytes() != (COMMITTED / name).read_bytes()]
    assert differing == [], f"regenerated files differ from derivations/: {differing}"


def test_generated_package_modules_match_the_export(fresh):
    out, package = fresh
    for filename in (*GENERATED_MODULES.values(), ASYMPTOTICS_MODULE):
        assert filecmp.cmp(package / filename, ROOT / "numerics" / "generated" / filename, shallow=False), \
            f"numerics/generated/{filename} is stale: run `stumpcheck export --update-package`"
        assert filecmp.cmp(out / "py" / filename, package / filename, shallow=False)


def test_every_json_export_loads_back_to_the_same_expression(fresh):
    out, _ = fresh
    from stumpcheck.theory.catalogue import results

    by_name = {r.name: r.expr for r in results()}
    for path in sorted((out / "json").glob("*.json")):
        loaded = load_json(path)
        assert sp.srepr(loaded) == sp.srepr(by_name[path.stem]), path.name


def test_readme_lists_every_file(fresh):
    out, _ = fresh
    readme = (out / "README.md").read_text(encoding="utf-8")
    for name in _files(out):
        assert f"`{name}`" in readme, name


def test_unknown_format_is_rejected(tmp_path):
    with pytest.raises(ValueError, match="unknown format"):
        export(tmp_path, "pdf")
