"""The install step's warm-up leaves ``verify --quick`` nothing to compile (numerics/kernel_warmup.py, issue 36).

``python -m stumpcheck.numerics.kernel_warmup`` into new empty caches (numba's ``NUMBA_CACHE_DIR`` and the
translated fast kernels' ``STUMPCHECK_CACHE``), then ``stumpcheck verify --quick``: the verify run must add no
compiled kernel's file (numba's index .nbi or data .nbc) to the cache. A kernel that the run compiles itself
is named in the failure, with the module it belongs to. Minutes (the warm-up and a whole ``verify --quick``):
``-m slow`` only.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def _kernel_files(cache: Path) -> set[str]:
    return {p.relative_to(cache).as_posix() for p in cache.rglob("*") if p.is_file() and p.suffix in (".nbi", ".nbc")}


@pytest.mark.slow
def test_verify_quick_compiles_nothing_after_the_warm_up(tmp_path):
    cache = tmp_path / "numba-cache"
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "STUMPCHECK_CACHE": str(tmp_path / "stumpcheck-cache")}
    done = subprocess.run([sys.executable, "-m", "stumpcheck.numerics.kernel_warmup"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=3600)
    assert done.returncode == 0, done.stderr[-3000:]
    warmed = _kernel_files(cache)
    assert warmed, "the warm-up cached no kernel"
    done = subprocess.run([sys.executable, "-m", "stumpcheck", "verify", "--quick", "--out", str(tmp_path / "out")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=7200)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    added = sorted(_kernel_files(cache) - warmed)
    assert not added, f"verify --quick compiled {len(added)} kernel files the warm-up did not: {added}"
