"""Run a command against another revision of this repository, for same-session baselines.

"Today's commit" baselines (the 30-digit flow, ``verify --quick``) are timed by running the same
command from a clean export of an earlier revision (``git archive``), with that export first on
``PYTHONPATH`` so that its packages shadow the installed ones; both are timed in the same run, so
their ratio is what a benchmark reports.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

__all__ = ["REPO", "REFERENCE_REVISION", "export_revision", "timed_run"]

REPO = Path(__file__).resolve().parent.parent
#: The revision "today's commit" rows compare against (the last commit before the performance work);
#: ``python -m benchmarks --reference REV`` or STUMPCHECK_BENCH_REFERENCE overrides it.
REFERENCE_REVISION = os.environ.get("STUMPCHECK_BENCH_REFERENCE", "1b42087")


def export_revision(revision: str, into: str | os.PathLike | None = None) -> Path:
    """Extract ``git archive revision`` into a new folder (under ``into`` or a temporary one)
    and return it. Raises RuntimeError with git's message if the revision is unknown."""
    target = Path(tempfile.mkdtemp(prefix="rev-", dir=into))
    archive = target / "rev.tar"
    done = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", "-o", str(archive), revision],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"git archive {revision}: {done.stderr.strip()}")
    with tarfile.open(archive) as tar:
        tar.extractall(target / "src", filter="data")
    archive.unlink()
    return target / "src"


def timed_run(argv: list[str], *, source: Path | None = None, cwd: str | os.PathLike | None = None,
              env: dict | None = None, timeout: float | None = None) -> tuple[float, subprocess.CompletedProcess]:
    """Wall seconds and the completed process of ``python argv...`` (``argv[0]`` is ``-m`` or a
    script), with ``source`` (an exported revision) first on PYTHONPATH when given, else this
    checkout's code as installed."""
    environment = dict(os.environ if env is None else env)
    if source is not None:
        environment["PYTHONPATH"] = os.pathsep.join([str(source), environment.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, *argv], cwd=cwd, env=environment, capture_output=True, text=True,
                          timeout=timeout)
    return time.perf_counter() - start, done
