"""The package layers are a contract (docs/layout.md, "The layers, as contracts"): import-linter's
contracts in pyproject.toml (theory below numerics below the checking layer; the concept subpackages
of numerics and of numerics/certified in one direction; lemma definitions that do not import their
contents; no import cycle between the modules of a package). Run here so that a change that breaks a
layer fails the default suite.

import-linter reads a package from its folder, and theory/ and numerics/ install into stumpcheck by
pyproject's ``package-dir`` mapping; the contracts are therefore checked on a copy of the sources in
their installed layout (:func:`tests.installed_layout.installed_tree`).
"""

import os
import shutil
import subprocess
import sys

import pytest

from tests.installed_layout import ROOT, installed_tree

LINT = ("import sys; from importlinter.cli import lint_imports; "
        "sys.exit(lint_imports(config_filename='pyproject.toml', no_cache=True, no_logo=True))")


def _lint(tree, pyproject_text):
    (tree / "pyproject.toml").write_text(pyproject_text)
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run([sys.executable, "-c", LINT], cwd=tree, env=env, capture_output=True, text=True,
                          timeout=300)


def test_import_contracts_are_kept(tmp_path):
    pytest.importorskip("importlinter")
    tree = installed_tree(tmp_path / "site")
    text = (ROOT / "pyproject.toml").read_text()
    out = _lint(tree, text)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    contracts = text.count("[[tool.importlinter.contracts]]")
    assert contracts >= 5 and f"{contracts} kept, 0 broken" in out.stdout, out.stdout[-2000:]


def test_a_broken_layer_is_reported(tmp_path):
    """The contracts can fail: an engine module that imports the checking layer breaks the layers."""
    pytest.importorskip("importlinter")
    tree = installed_tree(tmp_path / "site")
    (tree / "stumpcheck" / "numerics" / "corpus" / "bad.py").write_text("import stumpcheck.cli\n")
    out = _lint(tree, (ROOT / "pyproject.toml").read_text())
    assert out.returncode != 0, out.stdout[-2000:]
    assert "stumpcheck.numerics.corpus.bad -> stumpcheck.cli" in out.stdout, out.stdout[-4000:]


def test_an_import_cycle_is_reported(tmp_path):
    """Two modules of one package that import each other (even inside a function) break the contract."""
    pytest.importorskip("importlinter")
    tree = installed_tree(tmp_path / "site")
    corpus = tree / "stumpcheck" / "numerics" / "corpus"
    (corpus / "ping.py").write_text("def f():\n    from stumpcheck.numerics.corpus import pong\n")
    (corpus / "pong.py").write_text("from stumpcheck.numerics.corpus import ping\n")
    out = _lint(tree, (ROOT / "pyproject.toml").read_text())
    assert out.returncode != 0 and "BROKEN" in out.stdout, out.stdout[-4000:]
