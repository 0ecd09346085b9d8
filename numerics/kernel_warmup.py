"""The compiled kernels of a workload, compiled ahead of their use: in a child process, or before the first run.

A new environment (or an edited tree: :mod:`stumpcheck.numerics.kernel_cache`) has no compiled kernels, and
the first command that needs them compiles them: for ``verify --quick`` that was C5's corpus kernels, about
30 s of a 100 s first run. :func:`warm_up` compiles the kernels of a :data:`WORKLOADS` entry in a child
process while the command does other work (``verify`` starts it for C5 while C1–C4 run); the kernels go
into the shared cache, where the command then finds them. The child is niced (it takes the idle core, not
the command's), ends with its parent (:func:`stumpcheck.numerics.processes.watch_parent`) and ignores
Ctrl-C; the command stops it when the kernels are due (:meth:`WarmUp.stop`: whatever it has compiled by
then is in the cache, the rest the command compiles itself, as without it). A workload whose kernels were
compiled to the end leaves a mark in the cache folder (:func:`warmed`), and is not started again.

``python -m stumpcheck.numerics.kernel_warmup`` compiles every workload in this process (for an install
step, or a machine image): the next commands find them compiled.

A workload calls the package's own entry points on small inputs of the types the real inputs have (float64
arrays, C order), so the compiled specialisations are the ones a real run uses; the sizes do not matter
to numba.
"""

from __future__ import annotations

import os

__all__ = ["WORKLOADS", "WarmUp", "compile_workload", "main", "warm_up", "warmed"]


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


#: name -> the function that compiles its kernels
WORKLOADS = {"corpus": _corpus_kernels}


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


def _child(name: str, parent_pid: int, kernel_signal: bool) -> None:
    from stumpcheck.numerics.processes import ignore_interrupts, watch_parent

    watch_parent(parent_pid, kernel_signal=kernel_signal)
    ignore_interrupts()
    try:
        os.nice(10)  # the idle core's work: the command's own processes come first
    except (OSError, AttributeError):
        pass
    compile_workload(name)


class WarmUp:
    """A child process compiling workload ``name`` (or nothing, when it is warmed or not wanted)."""

    def __init__(self, name: str, wanted: bool = True):
        self.process = None
        if not wanted or warmed(name):
            return
        import multiprocessing

        from stumpcheck.numerics.processes import interrupts_deferred, started_by_main_thread

        context = multiprocessing.get_context("spawn")  # a fresh interpreter: no state of the command is copied
        self.process = context.Process(target=_child, args=(name, os.getpid(), started_by_main_thread()),
                                       daemon=True, name=f"stumpcheck-warm-up-{name}")
        with interrupts_deferred():
            self.process.start()

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


def warm_up(name: str, wanted: bool = True) -> WarmUp:
    """A :class:`WarmUp` of workload ``name``: a context manager whose exit stops the child."""
    return WarmUp(name, wanted)


def main() -> None:
    """Compile every workload's kernels in this process."""
    for name in WORKLOADS:
        compile_workload(name)
        print(f"compiled the {name} kernels into {_mark(name).parent}")


if __name__ == "__main__":
    main()
