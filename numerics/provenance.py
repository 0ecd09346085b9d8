"""What every reported figure carries: versions, commit, machine, date."""

from __future__ import annotations

import datetime
import platform
import subprocess
from importlib import metadata
from pathlib import Path

__all__ = ["provenance"]


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def _source_version() -> str | None:
    """The version of the source tree when it runs without being installed (read from pyproject.toml,
    so that this engine module imports nothing of the checking layer above it)."""
    import tomllib

    try:
        with open(Path(__file__).resolve().parent.parent / "pyproject.toml", "rb") as handle:
            version = tomllib.load(handle)["project"]["version"]
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        return None
    return f"{version} (source tree, not installed)"


def _git_commit() -> str | None:
    root = Path(__file__).resolve().parent.parent
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def provenance(**extra) -> dict:
    """Package versions, git commit (if any), machine, UTC date, plus ``extra``."""
    return {
        "stumpcheck": _version("stumpcheck") or _source_version(),
        "versions": {p: _version(p) for p in ("sympy", "mpmath", "numpy", "python-flint", "matplotlib")},
        "python": platform.python_version(),
        "git_commit": _git_commit(),
        "machine": f"{platform.system()} {platform.machine()} ({platform.node()})",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        **extra,
    }
