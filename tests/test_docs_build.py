"""The rendered reference (docs/conf.py) builds with warnings as errors, nitpicky: every cross-reference
resolves.

CI builds it in `.ci/run` (html with -n -W, and doctest); this test is the same html build for local use,
marked slow. It needs the docs extra (`pip install -e '.[docs]'`) and is skipped without it. The fast
tests below check the resolver of docs/conf.py on single names.
"""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _conf():
    pytest.importorskip("sphinx", reason="the docs extra is not installed: pip install -e '.[docs]'")
    spec = importlib.util.spec_from_file_location("stumpcheck_docs_conf", ROOT / "docs" / "conf.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_reference_builds_without_warnings_or_unresolved_references(tmp_path):
    pytest.importorskip("sphinx", reason="the docs extra is not installed: pip install -e '.[docs]'")
    pytest.importorskip("myst_parser", reason="the docs extra is not installed: pip install -e '.[docs]'")
    result = subprocess.run(
        [sys.executable, "-m", "sphinx", "-n", "-W", "--keep-going", "-q", "-b", "html",
         "-d", str(tmp_path / "doctrees"), str(ROOT / "docs"), str(tmp_path / "html")],
        cwd=ROOT, capture_output=True, text=True, timeout=900)
    unresolved = [line for line in result.stderr.splitlines() if "reference target not found" in line]
    assert not unresolved, f"{len(unresolved)} unresolved cross-references:\n" + "\n".join(unresolved[:50])
    assert result.returncode == 0, result.stderr[-4000:]
    assert (tmp_path / "html" / "index.html").is_file()
    api = (tmp_path / "html" / "reference" / "api.html").read_text(encoding="utf-8")
    assert 'id="module-stumpcheck.api"' in api
    modules = (tmp_path / "html" / "reference" / "modules.html").read_text(encoding="utf-8")
    assert 'id="module-stumpcheck.numerics.flow.run"' in modules  # a private module has a target
    assert 'id="module-stumpcheck.api"' not in modules  # a rendered one is not listed twice


def test_every_module_is_found_with_its_docstring():
    modules = _conf()._modules()
    assert "stumpcheck" in modules and "stumpcheck.numerics.flow.run" in modules
    assert "stumpcheck.theory.symbols" in modules
    origin, first = modules["stumpcheck.numerics.flow.run"]
    assert origin.endswith("run.py") and first.startswith("The population gradient flow")


def test_a_name_of_the_package_imports_and_a_name_it_merely_imports_does_not():
    conf = _conf()
    from stumpcheck.numerics.population import error

    assert conf._import_object("stumpcheck.numerics.population.quantities.error") is error
    assert conf._import_object("stumpcheck.numerics.population.quantities.no_such_name") is None
    assert conf._import_object("stumpcheck.numerics.certified.enclosures.balls.mpmath.mpf") is None
    assert conf._import_object("mpmath.mpf") is None
