"""Compiled kernels are the tree's (numerics/kernel_cache.py, issue 37 item 10).

numba's own cache keyed a kernel on its defining file only: after an edit of ``certified/fast/rounding.py``
the kernels of ``interval.py`` that inline its rounding went on running their old machine code. Here a copy
of the package is edited: the enclosure the kernel computes changes at once, and the copy's cache folder
(named by the hash of the kernel sources) is a new one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stumpcheck.numerics import kernel_cache
from tests.installed_layout import installed_tree

#: an interval sum [1, 1] + [0.1, 0.1] from the compiled kernel of interval.py (which inlines rounding.py's up
#: and down), and the folders of the cache it was loaded from or saved to
PROBE = """
import json
from stumpcheck.numerics import kernel_cache
from stumpcheck.numerics.certified.fast.interval import add
lo, hi = add(1.0, 1.0, 0.1, 0.1)
print(json.dumps({"enclosure": [lo.hex(), hi.hex()], "folder": str(kernel_cache.kernel_folder()),
                  "cached": sorted(p.name for p in kernel_cache.kernel_folder().rglob("interval.add-*.nbi"))}))
"""


@pytest.fixture()
def tree(tmp_path):
    """A copy of the package in its installed layout, with its own (empty) kernel cache."""
    installed_tree(tmp_path / "site")
    return tmp_path


def _probe(tree: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree / "site"), "NUMBA_CACHE_DIR": str(tree / "cache")}
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=tree, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_an_edited_rounding_helper_changes_the_enclosure_of_a_kernel_that_inlines_it(tree):
    first = _probe(tree)
    assert first["cached"], "the kernel was not cached"
    assert Path(first["folder"]).is_relative_to(tree / "cache")
    again = _probe(tree)
    assert again == first  # the same tree: the same folder, the kernel loaded from it
    rounding = tree / "site" / "stumpcheck" / "numerics" / "certified" / "fast" / "rounding.py"
    text = rounding.read_text(encoding="utf-8")
    assert "_ULP = 2.0 ** -52" in text
    rounding.write_text(text.replace("_ULP = 2.0 ** -52", "_ULP = 2.0 ** -40"), encoding="utf-8")
    edited = _probe(tree)
    assert edited["folder"] != first["folder"]
    lo, hi = (float.fromhex(x) for x in first["enclosure"])
    lo2, hi2 = (float.fromhex(x) for x in edited["enclosure"])
    assert lo2 < lo <= 1.1 <= hi < hi2  # the wider widening of the edited helper, not the cached machine code


def test_the_key_covers_the_kernels_and_what_they_import_and_nothing_else(tree):
    root = tree / "site" / "stumpcheck" / "numerics"
    names = {str(p.relative_to(root)) for p in kernel_cache.kernel_sources(root)}
    assert {"certified/fast/rounding.py", "certified/fast/interval.py", "corpus/kernel_pruned.py",
            "population/one_head_float64.py", "precision.py", "kernel_cache.py"} <= names
    assert "flow/run.py" not in names and "scheduling.py" not in names
    key = kernel_cache.source_key(root)
    (root / "flow" / "run.py").write_text((root / "flow" / "run.py").read_text() + "\n# an edit\n")
    kernel_cache.source_key.cache_clear()
    assert kernel_cache.source_key(root) == key  # not a kernel's source
    (root / "precision.py").write_text((root / "precision.py").read_text() + "\n# an edit\n")
    kernel_cache.source_key.cache_clear()
    assert kernel_cache.source_key(root) != key  # imported by kernels (their constants and helpers)


def test_the_package_s_kernels_use_the_tree_locator():
    from stumpcheck.numerics.certified.fast import interval
    from stumpcheck.numerics.corpus import kernel

    for dispatcher in (interval.add, kernel.__dict__[next(n for n in vars(kernel) if hasattr(getattr(kernel, n),
                                                                                          "_cache"))]):
        locator = dispatcher._cache._impl.locator
        assert type(locator).__name__ == "TreeLocator", type(locator)
        assert Path(locator.get_cache_path()).is_relative_to(kernel_cache.kernel_folder())


@pytest.mark.slow
def test_every_warm_up_workload_compiles_and_is_marked(tmp_path):
    """``python -m stumpcheck.numerics.kernel_warmup`` into an empty cache: each workload's kernels are cached
    and marked (a workload whose entry points changed would fail here, not silently in verify's child)."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-m", "stumpcheck.numerics.kernel_warmup"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=3600)
    assert done.returncode == 0, done.stderr[-3000:]
    folders = list((tmp_path / "cache" / "stumpcheck-kernels").iterdir())
    assert len(folders) == 1
    from stumpcheck.numerics.kernel_warmup import WORKLOADS

    assert {p.name for p in folders[0].glob("warmed-*")} == {f"warmed-{name}" for name in WORKLOADS}
    cached = {p.name.split("-")[0] for p in folders[0].rglob("*.nbi")}
    assert {"one_head_float64._integrate", "kernel_pruned.pruned_tasks", "kernel.dense_tasks"} <= cached
