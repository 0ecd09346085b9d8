"""Compile the numba kernels in a second process while the first does other work, when numba's cache is empty.

The compiled kernels — the float64 population integral (:mod:`stumpcheck.numerics.population.one_head_float64`)
and the corpus kernels (:mod:`stumpcheck.numerics.corpus.kernel`, :mod:`~stumpcheck.numerics.corpus.kernel_pruned`)
— are cached on disk (numba ``cache=True``); in a fresh environment their first use compiles them, about 10 s
of CPU in all (the threaded dense and pruned loops, the serial pruned loop, the population integral). A
command whose first work needs none of them (``stumpcheck verify``: C1 checks the generated code in mpmath and
Arb) calls :func:`start` at its beginning: if no cache index of the corpus kernels is found, a child process
(``python -m stumpcheck.numerics.precompile``) makes the calls the package makes — the population integral
(:func:`compile_population_kernels`), then a small and a large corpus (:func:`compile_corpus_kernels`) —
which compiles them and writes the cache, on the machine's other core, and reports each stage on its
standard output. :func:`wait` — called before the first call of a population kernel and before the first
import of a corpus kernel module — waits until the child reports that stage, so that the kernels are then
loaded from the cache instead of being compiled a second time. Nothing changes in what is computed: the child
only fills the cache, with the argument types of this process's calls. On a machine whose other core is
busy the child and the caller share one core, and the first run takes about as long as without it.

The child ends with its parent (``prctl(PR_SET_PDEATHSIG)`` on Linux,
:func:`stumpcheck.numerics.processes.arm_parent_death_signal`); :func:`wait` gives up after
:data:`WAIT_SECONDS` (the caller then compiles, as without it). STUMPCHECK_PRECOMPILE=0 turns it off. Where
the cache is looked for: NUMBA_CACHE_DIR when it is set, else numba's in-tree cache (``__pycache__`` next to
the kernel's source); a cache elsewhere (numba's user-wide folder, for a read-only installation) is not seen,
and the child then only loads it (a second or two of CPU on the other core).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["start", "wait", "corpus_cache_present", "compile_population_kernels", "compile_corpus_kernels",
           "WAIT_SECONDS"]

#: how long :func:`wait` waits for the child before the caller compiles for itself
WAIT_SECONDS = 120.0
#: the kernels whose cache index :func:`corpus_cache_present` looks for (module file stem, function name)
_INDEXED = (("kernel", "dense_tasks"), ("kernel_pruned", "pruned_tasks"), ("kernel_pruned", "_tasks"))

_child: subprocess.Popen | None = None
_reported: set = set()   # the stages the child has reported compiled


def corpus_cache_present() -> bool:
    """True when a numba cache index of every corpus kernel in :data:`_INDEXED` is found (no import of them)."""
    custom = os.environ.get("NUMBA_CACHE_DIR")
    for stem, name in _INDEXED:
        pattern = f"{stem}.{name}-*.nbi"
        if custom:  # numba then caches there only, below a copy of the source's absolute path
            found = any(Path(custom).rglob(pattern))
        else:
            found = any((Path(__file__).resolve().parent / "corpus" / "__pycache__").glob(pattern))
        if not found:
            return False
    return True


def start(*, corpus: bool = True) -> bool:
    """Start the compiling child (the population kernels, then, with ``corpus``, the corpus kernels) unless the
    corpus kernels' cache is present, it is turned off or one is running; True if started."""
    global _child, _reported
    if _child is not None or os.environ.get("STUMPCHECK_PRECOMPILE", "1") == "0" or corpus_cache_present():
        return False
    stages = ["population", "corpus"] if corpus else ["population"]
    _child = subprocess.Popen([sys.executable, "-m", "stumpcheck.numerics.precompile", *stages],
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    _reported = set()
    return True


def wait(stage: str = "corpus") -> None:
    """Wait until a child started by :func:`start` has compiled ``stage`` (``"population"`` or ``"corpus"``, in
    that order; at most :data:`WAIT_SECONDS` in all): a no-op without one, and once the child has ended."""
    global _child
    child = _child
    if child is None or stage in _reported:
        return
    deadline = time.monotonic() + WAIT_SECONDS
    while stage not in _reported:
        left = deadline - time.monotonic()
        if left <= 0 or not _read_line(child, left):
            break
    if stage in _reported and child.poll() is None and stage != child.args[-1]:
        return  # more stages to come
    _child = None  # the last stage, the child's end or the time limit: done with it (its cache is written)
    if child.poll() is None:
        child.kill()
    child.wait()
    child.stdout.close()


def _read_line(child: subprocess.Popen, timeout: float) -> bool:
    """Read one stage line of the child within ``timeout`` seconds; False at its end or the timeout."""
    if sys.platform != "win32":
        import select

        ready, _, _ = select.select([child.stdout], [], [], timeout)
        if not ready:
            return False
    line = child.stdout.readline()
    if not line:
        return False
    _reported.add(line.decode("ascii", "replace").strip())
    return True


def compile_population_kernels() -> None:
    """Call the float64 population integral as the flow does (with and without the Hessian)."""
    from stumpcheck.numerics.population.one_head_float64 import loss_gradient_hessian, switch_point

    loss_gradient_hessian(12.0, 10.0)
    loss_gradient_hessian(12.0, 10.0, hessian=False)
    switch_point(12.0, 10.0)


def compile_corpus_kernels() -> None:
    """Call the corpus kernels as the package's callers do: dense and pruned on a small corpus (one thread) and
    pruned on a corpus at the size from which the kernels use numba's threads, one-head estimator."""
    import numpy as np

    from stumpcheck.numerics.corpus.empirical import _PARALLEL_TOKENS, loss_and_gradient, sort_corpus

    rng = np.random.default_rng(0)
    small_x, small_theta = rng.uniform(size=(8, 16)), rng.uniform(size=8)
    loss_and_gradient(small_x, small_theta, 12.0, 10.0, method="dense", threads=1)
    loss_and_gradient(sort_corpus(small_x, small_theta), None, 1050.0, 1000.0, method="pruned", threads=1)
    n = 256
    m = -(-_PARALLEL_TOKENS // n)
    large_x, large_theta = rng.uniform(size=(m, n)), rng.uniform(size=m)
    loss_and_gradient(sort_corpus(large_x, large_theta), None, 1050.0, 1000.0, method="pruned")


if __name__ == "__main__":
    from stumpcheck.numerics.processes import arm_parent_death_signal

    arm_parent_death_signal()
    for name in sys.argv[1:] or ["population", "corpus"]:
        {"population": compile_population_kernels, "corpus": compile_corpus_kernels}[name]()
        print(name, flush=True)
