"""The package as it installs: pyproject.toml's ``package-dir`` mapping applied to the source tree.

setuptools installs the repository's theory/ and numerics/ folders as ``stumpcheck.theory`` and
``stumpcheck.numerics``. Tools that read a package from its folder (import-linter) need that
layout on disk; :func:`installed_tree` copies the sources into it, as the wheel would.
"""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def setuptools_config() -> dict:
    with open(ROOT / "pyproject.toml", "rb") as handle:
        return tomllib.load(handle)["tool"]["setuptools"]


def source_dir(package: str, package_dir: dict) -> Path:
    """The folder a package is read from: the longest mapped prefix, then the rest of its name."""
    parts = package.split(".")
    for cut in range(len(parts), 0, -1):
        prefix = ".".join(parts[:cut])
        if prefix in package_dir:
            return ROOT / package_dir[prefix] / Path(*parts[cut:])
    return ROOT / Path(*parts)


def mapped_packages() -> dict[str, Path]:
    """Every folder with an ``__init__.py`` under the mapped roots, by the package name it installs as."""
    package_dir = setuptools_config()["package-dir"]
    found = {}
    for name, folder in package_dir.items():
        for init in sorted((ROOT / folder).rglob("__init__.py")):
            rel = init.parent.relative_to(ROOT / folder)
            found[".".join([name, *rel.parts])] = init.parent
    return found


def installed_tree(dest: Path) -> Path:
    """Copy the listed packages' modules into ``dest`` in their installed layout; return ``dest``."""
    config = setuptools_config()
    for package in config["packages"]:
        src = source_dir(package, config["package-dir"])
        target = dest / Path(*package.split("."))
        target.mkdir(parents=True, exist_ok=True)
        for module in src.glob("*.py"):
            shutil.copy2(module, target / module.name)
    return dest
