"""The compiled kernels of a workload, compiled ahead of their use: in a child process, or before the first run.

A new environment (or an edited tree: :mod:`stumpcheck.numerics.kernel_cache`) has no compiled kernels, and
the first command that needs them compiles them: for ``verify --quick`` the population's float64 kernels (C2),
C5's corpus kernels and C6's, about a third of a first run on an idle machine. :func:`warm_up` compiles the
kernels of some :data:`WORKLOADS` entries, in order, in a child process while the command does other work
(``verify`` starts it with C1); the kernels go into the shared cache. Before an entry that needs a workload
the command waits for it (:meth:`WarmUp.wait_for`: the child compiles what the command would compile itself,
so waiting never costs more than compiling), then loads the kernels from the cache; the child meanwhile goes
on with the next workloads. The child ends with its parent (:func:`stumpcheck.numerics.processes.watch_parent`)
and ignores Ctrl-C; the command stops it when it ends. A workload compiled to the end leaves a mark in the
cache folder (:func:`warmed`), and is not compiled again.

``python -m stumpcheck.numerics.kernel_warmup`` compiles every workload in this process (for an install
step, or a machine image): the next commands find them compiled.

A workload calls the package's own entry points on small inputs of the types the real inputs have (float64
arrays, C order), so the compiled specialisations are the ones a real run uses; the sizes do not matter
to numba.
"""

from __future__ import annotations

import os

__all__ = ["WAIT_SECONDS", "WORKLOADS", "WarmUp", "compile_workload", "main", "warm_up", "warmed"]

#: the longest a command waits for a workload (about 2 min of compiling on a loaded 2-core machine)
WAIT_SECONDS = 900.0


def _population_kernels() -> None:
    """The population's float64 L, ∇L, ∇²L (C2, the flows, the tube's points)."""
    from stumpcheck.numerics.population.one_head_float64 import loss_gradient_hessian, quadrature_size, switch_point

    loss_gradient_hessian(12.0, 10.0)
    switch_point(12.0, 10.0)
    quadrature_size(12.0, 10.0)


def _corpus_kernels() -> None:
    """C5's kernels: the corpus L̂, ∇L̂ (dense, and pruned at a b beyond the window; one thread and several) and
    a certified interval."""
    from fractions import Fraction

    from stumpcheck.numerics.corpus.corpora import make_corpus
    from stumpcheck.numerics.corpus.empirical import loss_and_gradient
    from stumpcheck.numerics.corpus.interval.run import prove_interval

    corpus = make_corpus(64, 4096, seed=0)  # 2^18 tokens: enough for the kernels' parallel paths
    for method in ("dense", "pruned"):
        for threads in (1, None):
            loss_and_gradient(corpus.x, corpus.theta, 2010.0, 2000.0, method=method, threads=threads)
    small = make_corpus(16, 16, seed=0)
    prove_interval(small.x, small.theta, b_max=Fraction(16))


#: name -> the function that compiles its kernels (compiled in this order)
WORKLOADS = {"population": _population_kernels, "corpus": _corpus_kernels}


def _mark(name: str):
    from stumpcheck.numerics.kernel_cache import kernel_folder

    return kernel_folder() / f"warmed-{name}"


def warmed(name: str) -> bool:
    """True when the kernels of workload ``name`` were compiled to the end into this tree's cache folder."""
    return _mark(name).exists()


def compile_workload(name: str) -> None:
    """Compile the kernels of workload ``name`` here (loading those already cached), then mark it warmed."""
    WORKLOADS[name]()
    _mark(name).write_text("")


def _child(names: list, parent_pid: int, kernel_signal: bool) -> None:
    from stumpcheck.numerics.processes import ignore_interrupts, watch_parent

    watch_parent(parent_pid, kernel_signal=kernel_signal)
    ignore_interrupts()
    try:
        for name in names:
            compile_workload(name)
    except Exception:  # noqa: BLE001 - the command then compiles what it needs itself, as without a warm-up
        os._exit(1)  # quietly: the command's own output is not the place for it (tests/test_kernel_cache.py is)


class WarmUp:
    """A child process compiling the workloads ``names`` in order (or nothing: all warmed, or not wanted)."""

    def __init__(self, names, wanted: bool = True):
        self.process = None
        self.names = [name for name in names if not warmed(name)] if wanted else []
        if not self.names:
            return
        import multiprocessing

        from stumpcheck.numerics.processes import interrupts_deferred, started_by_main_thread

        context = multiprocessing.get_context("spawn")  # a fresh interpreter: no state of the command is copied
        self.process = context.Process(target=_child, args=(self.names, os.getpid(), started_by_main_thread()),
                                       daemon=True, name="stumpcheck-warm-up")
        with interrupts_deferred():
            self.process.start()

    def wait_for(self, name) -> None:
        """Return once workload ``name`` is compiled, or the child has ended (or ``name`` is not the child's);
        after :data:`WAIT_SECONDS` at most, a guard against a child that makes no progress."""
        import time

        deadline = time.monotonic() + WAIT_SECONDS
        while (name in self.names and self.process is not None and self.process.is_alive()
               and not warmed(name) and time.monotonic() < deadline):
            time.sleep(0.05)

    def stop(self) -> None:
        """End the child now (what it compiled is cached; the rest is compiled where it is needed)."""
        if self.process is not None:
            if self.process.is_alive():
                self.process.kill()
            self.process.join()
            self.process = None

    def __enter__(self) -> WarmUp:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def warm_up(names, wanted: bool = True) -> WarmUp:
    """A :class:`WarmUp` of the workloads ``names`` (in order): a context manager whose exit stops the child."""
    return WarmUp(list(names), wanted)


def main() -> None:
    """Compile every workload's kernels in this process."""
    for name in WORKLOADS:
        compile_workload(name)
        print(f"compiled the {name} kernels into {_mark(name).parent}")


if __name__ == "__main__":
    main()
