"""The package layers are a contract (docs/README.md, "Layout"): import-linter's contracts in
pyproject.toml — theory/ below numerics/ below stumpcheck/, numerics' concept subpackages in one
direction (corpus > flow > certified > population), and a lemma registry that does not import its
contents. Run here so that a change that breaks a layer fails the default suite."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_import_contracts_are_kept():
    pytest.importorskip("importlinter")
    code = ("import sys; from importlinter.cli import lint_imports; "
            "sys.exit(lint_imports(config_filename='pyproject.toml', no_cache=True, no_logo=True))")
    # the sources under test come first on the path, whatever is installed
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert "3 kept, 0 broken" in out.stdout


def test_a_broken_layer_is_reported(tmp_path):
    """The contract can fail: a numerics module that imports the checking layer breaks it."""
    pytest.importorskip("importlinter")
    for name in ("theory", "numerics", "stumpcheck"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text("")
    (tmp_path / "numerics" / "bad.py").write_text("import stumpcheck\n")
    (tmp_path / "setup.toml").write_text(
        '[tool.importlinter]\nroot_packages = ["theory", "numerics", "stumpcheck"]\n\n'
        '[[tool.importlinter.contracts]]\nname = "layers"\ntype = "layers"\n'
        'layers = ["stumpcheck", "numerics", "theory"]\n')
    code = ("import sys; from importlinter.cli import lint_imports; "
            "sys.exit(lint_imports(config_filename='setup.toml', no_cache=True, no_logo=True))")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert out.returncode != 0 and "numerics.bad -> stumpcheck" in out.stdout, out.stdout + out.stderr
