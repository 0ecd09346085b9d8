"""stumpcheck installs one top-level import name (docs/layout.md): the repository's theory/ and numerics/
folders are mapped into ``stumpcheck.theory`` and ``stumpcheck.numerics`` by pyproject's ``package-dir``.

* the explicit package list names every folder with an ``__init__.py`` under the mapped roots;
* the installed distribution (editable here, as README installs it) declares ``stumpcheck`` as its only
  top-level name, and a wheel built from the sources holds nothing else;
* a project with its own ``theory`` and ``numerics`` packages imports them and ours side by side;
* no package re-exports a name that is also one of its submodules (``import pkg.mod`` would then give
  the function in one session and the module in another).
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import shutil
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

import stumpcheck
from tests.installed_layout import ROOT, mapped_packages, setuptools_config


def test_the_package_list_names_every_package_folder():
    listed = set(setuptools_config()["packages"])
    found = set(mapped_packages())
    assert found == listed, f"missing from pyproject: {sorted(found - listed)}; stale: {sorted(listed - found)}"


def test_the_installed_distribution_has_one_top_level_name():
    dist = metadata.distribution("stumpcheck")
    assert dist.version == "0.2.0"
    assert (dist.read_text("top_level.txt") or "").split() == ["stumpcheck"]
    owners = {name for name, dists in metadata.packages_distributions().items() if "stumpcheck" in dists}
    assert owners == {"stumpcheck"}, owners


_SCRATCH = """
import json, sys
import theory, numerics, theory.symbols
import stumpcheck.theory.symbols, stumpcheck.numerics.precision
mods = sorted(k for k in sys.modules if k.split('.')[0] in ('theory', 'numerics'))
print(json.dumps({"theory": theory.__file__, "numerics": numerics.__file__, "symbols": theory.symbols.WHOSE,
                  "ours": stumpcheck.theory.symbols.__file__, "loaded": mods}))
"""


def test_a_project_with_its_own_theory_and_numerics_packages_does_not_mix(tmp_path):
    for name in ("theory", "numerics"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(f"WHOSE = 'project {name}'\n")
    (tmp_path / "theory" / "symbols.py").write_text("WHOSE = 'the project'\n")
    out = subprocess.run([sys.executable, "-c", _SCRATCH], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert Path(report["theory"]).parent == tmp_path / "theory"
    assert Path(report["numerics"]).parent == tmp_path / "numerics"
    assert report["symbols"] == "the project"
    assert Path(report["ours"]).resolve().is_relative_to(ROOT)
    assert report["loaded"] == ["numerics", "theory", "theory.symbols"]  # ours never load under these names


def test_outside_the_repository_there_is_no_theory_or_numerics_to_import(tmp_path):
    code = "import importlib.util as u; print(u.find_spec('theory'), u.find_spec('numerics'))"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # what the installation provides, alone
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0 and out.stdout.split() == ["None", "None"], out.stdout + out.stderr


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """(the wheel, the copy of the sources it was built from): built as ``pip install .`` builds it (an isolated
    build of a copy of the sources)."""
    tmp_path = tmp_path_factory.mktemp("wheel")
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, source / name)
    for folder in setuptools_config()["package-dir"].values():
        shutil.copytree(ROOT / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__"))
    out = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir",
                          str(tmp_path / "dist"), str(source)], capture_output=True, text=True, timeout=600)
    if out.returncode != 0 and "Could not find a version that satisfies the requirement setuptools" in out.stderr:
        pytest.skip("no package index to build the wheel with: " + out.stderr.strip().splitlines()[-1])
    assert out.returncode == 0, out.stderr[-3000:]
    (wheel,) = (tmp_path / "dist").glob("stumpcheck-0.2.0-*.whl")
    return wheel, source


def test_a_wheel_holds_only_the_stumpcheck_package(built, tmp_path):
    wheel, _ = built
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names}
    assert tops == {"stumpcheck", "stumpcheck-0.2.0.dist-info"}, sorted(tops)
    assert "stumpcheck/theory/model.py" in names and "stumpcheck/numerics/certified/tube/build.py" in names
    assert "stumpcheck/numerics/generated/taylor_forms_arb.json" in names
    assert "stumpcheck/data/flow_certificate_1e6_all_time.json" in names  # verify --quick re-checks it
    top_level = zipfile.ZipFile(wheel).read("stumpcheck-0.2.0.dist-info/top_level.txt").decode().split()
    assert top_level == ["stumpcheck"]
    # the non-editable install works from its own folder (dependencies from this environment)
    target = tmp_path / "site"
    out = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--quiet", "--target", str(target),
                          str(wheel)], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert sorted(p.name for p in target.iterdir() if not p.name.endswith(".dist-info") and p.name != "bin") == \
        ["stumpcheck"]
    probe = ("import json, mpmath, stumpcheck.theory, stumpcheck.numerics.population as p; mpmath.mp.dps = 20; "
             "from stumpcheck.numerics.certified.proofs.margin_taylor import STORED_FORMS; "
             "from stumpcheck.claims.population_all_time import committed_certificate; "
             "print(json.dumps([stumpcheck.theory.__file__, str(p.loss(10, 10)), STORED_FORMS.is_file() and "
             "committed_certificate()['region']['assumptions'] == []]))")
    env = {**os.environ, "PYTHONPATH": str(target)}
    out = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    where, value, forms = json.loads(out.stdout.strip().splitlines()[-1])
    assert Path(where).is_relative_to(target) and forms
    import mpmath

    from stumpcheck.numerics.population import loss

    with mpmath.workdps(20):
        assert value == str(loss(10, 10))  # the installed copy computes what the sources compute
    version = subprocess.run([sys.executable, "-m", "stumpcheck", "--version"], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=120)
    assert version.returncode == 0 and "0.2.0" in version.stdout, version.stdout + version.stderr


_FROM_THE_ROOT = """
import json, stumpcheck, stumpcheck.numerics.precision, stumpcheck.theory.symbols
from stumpcheck.numerics.population import loss
print(json.dumps([stumpcheck.__file__, stumpcheck.numerics.__file__, stumpcheck.theory.__file__, str(loss(10, 10))]))
"""


def test_a_non_editable_install_imports_from_the_repository_root(built, tmp_path):
    """In the repository root the tree's ``stumpcheck/`` comes first on ``sys.path`` and shadows an installed
    copy; it then maps the tree's theory/ and numerics/ into itself (stumpcheck/__init__.py), so the import,
    and pytest, work there after a non-editable install, with the tree's code throughout; elsewhere the
    installed copy is imported. The venv has the wheel and, for the dependencies, this environment's
    site-packages as a plain path entry (its editable install's finder is not run there)."""
    import sysconfig
    import venv

    wheel, tree = built
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               capture_output=True, text=True, check=True).stdout.strip())
    (site / "dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    out = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--quiet", "--target", str(site),
                          str(wheel)], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    finder = subprocess.run([str(python), "-c", "import sys; print([type(f).__name__ for f in sys.meta_path])"],
                            capture_output=True, text=True, env=env, cwd=tmp_path).stdout
    assert "Editable" not in finder, finder  # no editable mapping in this venv
    for cwd, owner in ((tree, tree), (tmp_path, site)):
        done = subprocess.run([str(python), "-c", _FROM_THE_ROOT], cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        package, numerics, theory, value = json.loads(done.stdout.strip().splitlines()[-1])
        assert all(Path(f).resolve().is_relative_to(owner) for f in (package, numerics, theory)), (cwd, package,
                                                                                                 numerics, theory)
        assert value.startswith("0.0")
    (tree / "tests").mkdir(exist_ok=True)
    (tree / "tests" / "test_probe.py").write_text(
        "import stumpcheck.numerics.precision\n\ndef test_probe():\n"
        "    assert stumpcheck.numerics.precision.InputError\n")
    done = subprocess.run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_probe.py"],
                          cwd=tree, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout[-2000:] + done.stderr[-2000:]


def _packages():
    yield stumpcheck
    for info in pkgutil.walk_packages(stumpcheck.__path__, "stumpcheck."):
        if info.ispkg:
            yield importlib.import_module(info.name)
    for root in ("stumpcheck.theory", "stumpcheck.numerics"):
        package = importlib.import_module(root)
        yield package
        for info in pkgutil.walk_packages(package.__path__, root + "."):
            if info.ispkg:
                yield importlib.import_module(info.name)


def test_no_package_exports_a_name_that_is_also_its_submodule():
    clashes = []
    for package in _packages():
        submodules = {info.name for info in pkgutil.iter_modules(package.__path__)}
        clashes += [f"{package.__name__}.{name}" for name in getattr(package, "__all__", ()) if name in submodules]
    assert not clashes, clashes


def test_the_layout_page_lists_every_module_and_nothing_else():
    import re

    text = (ROOT / "docs" / "layout.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^- `([\w/]+\.py)`:", text, flags=re.M))
    modules = set()
    for folder in setuptools_config()["package-dir"].values():
        modules |= {str(path.relative_to(ROOT)) for path in (ROOT / folder).rglob("*.py")
                    if path.name not in ("__init__.py", "__main__.py") and "__pycache__" not in path.parts}
    assert listed == modules, f"not listed: {sorted(modules - listed)}; no such module: {sorted(listed - modules)}"
