"""The compiled kernels of a workload, compiled ahead of their use: in a child process, or before the first run.

A new environment (or an edited tree: :mod:`stumpcheck.numerics.kernel_cache`) has no compiled kernels, and
the first command that needs them compiles them: for ``verify --quick`` the population's float64 kernels, the
fast rigorous layer of the tube and of the region (C2's re-check of the committed certificate), C5's corpus
kernels and C6's certified training run, about two thirds of a first run's CPU. :func:`warm_up` compiles the
kernels of some :data:`WORKLOADS` entries, in order, in a child process while the command does other work
(``verify`` starts it with C1, for the population, the corpus and the training kernels; C2 compiles the tube's
and the region's itself, in two processes at once); the kernels go into the shared cache. Before an entry
that needs a workload the command waits for it (:meth:`WarmUp.wait_for`: the child compiles what the command
would compile itself, so waiting never costs more than compiling), then loads the kernels from the cache; the
child meanwhile goes on with the next workloads. The child ends with its parent
(:func:`stumpcheck.numerics.processes.watch_parent`) and ignores Ctrl-C; the command stops it when it ends. A workload compiled to the end leaves a mark in the
cache folder (:func:`warmed`), and is not compiled again.

``python -m stumpcheck.numerics.kernel_warmup`` compiles every workload in this process (for an install
step, or a machine image): the next commands find them compiled. After it, ``verify --quick`` compiles no
kernel (benchmarks/bench_verify.py checks that it adds no file to the cache).

A workload calls the package's own entry points on small inputs of the types the real inputs have (float64
arrays, C order; the certificates' own records), so the compiled specialisations are the ones a real run
uses; the sizes do not matter to numba. Each checks the result it computed (a proof that stopped early
would have skipped kernels) and raises RuntimeError otherwise.
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
    a certified interval (the sorted, pruned enclosures of the fast layer: certified/fast/corpus_sorted.py)."""
    from fractions import Fraction

    from stumpcheck.numerics.corpus.corpora import make_corpus
    from stumpcheck.numerics.corpus.empirical import loss_and_gradient
    from stumpcheck.numerics.corpus.interval.run import prove_interval

    corpus = make_corpus(64, 4096, seed=0)  # 2^18 tokens: enough for the kernels' parallel paths
    for method in ("dense", "pruned"):
        for threads in (1, None):
            loss_and_gradient(corpus.x, corpus.theta, 2010.0, 2000.0, method=method, threads=threads)
    small = make_corpus(16, 16, seed=0)
    run, _ = prove_interval(small.x, small.theta, b_max=Fraction(16))
    _check(run.b_end > run.b_start, "the interval proof of a 16² corpus proved nothing")


def _tube_kernels() -> None:
    """C2's tube: the fast float64 interval θ-integrals (points, Hessians, ellipse cells; certified/fast) of a
    certified tube from (10, 10) to T = 0.05 (two intervals, light settings), and the re-check of its
    certificate in the fast arithmetic, as ``verify --quick`` re-checks the committed one."""
    from stumpcheck.numerics.certified.tube.build import certified_tube
    from stumpcheck.numerics.certified.tube.certificate import flow_certificate, recheck_flow_certificate
    from stumpcheck.numerics.certified.tube.piece import Settings

    light = Settings(defect_points=8, hessian_points=3, subdivisions=2, cells=(3, 1))
    tube = certified_tube(10.0, 10.0, 0.05, settings=light, max_step=0.03, arithmetic="fast")
    _check(tube.complete, f"the short tube is incomplete: {tube.stop_reason}")
    document = flow_certificate(tube)
    result = recheck_flow_certificate(document, int(document["dps"]) + 10, workers=1, arithmetic="fast")
    _check(result.passed, f"the short tube's certificate does not re-check: {result.message}")


def _region_kernels() -> None:
    """C2's region: the generated θ-integrands of the region's four obligations in float64 intervals
    (certified/fast/generated_integrands.py), proved on b ∈ [30, 30.6] (one piece each) and re-checked, as
    ``verify --quick`` re-checks the committed certificate's region and tail."""
    from fractions import Fraction

    from stumpcheck.numerics.certified.region.any_certificate import recheck_any
    from stumpcheck.numerics.certified.region.certificate import region_certificate
    from stumpcheck.numerics.certified.region.invariant_region import DEFAULT_REGION

    document = region_certificate(DEFAULT_REGION.with_b_max(Fraction("30.6")), arithmetic="fast")
    _check(document["status"] == "proved", f"the short region is {document['status']}")
    ok, message = recheck_any(document, arithmetic="fast")
    _check(ok, f"the short region's certificate does not re-check: {message}")


def _training_kernels() -> None:
    """C6's certified training run (the Lohner steps of certified_run/lohner.py) for 5 steps on a 16² corpus,
    and C9's certified descent of a 4-step run (its curvature bounds)."""
    from stumpcheck.numerics.corpus.certified_run import certify_training
    from stumpcheck.numerics.corpus.corpora import make_corpus
    from stumpcheck.numerics.corpus.descent import certify_descent
    from stumpcheck.numerics.corpus.gd import default_eta, train_gd

    corpus = make_corpus(16, 16, seed=0)
    chain = certify_training(corpus.x, corpus.theta, a0=6.0, b0=4.0, eta=100.0, max_steps=5)
    _check(chain.proved and chain.steps == 5, f"the 5-step training chain ended unproved: {chain.stopped_because}")
    eta, _ = default_eta(corpus.x, corpus.theta, 10.0, 10.0)
    run = train_gd(corpus.x, corpus.theta, a0=10.0, b0=10.0, eta=eta, steps=4)
    proof = certify_descent(corpus.x, corpus.theta, run.trajectory["a"], run.trajectory["b"], float(eta))
    _check(proof.proved, "the 4-step descent is not proved")


def _check(condition: bool, why: str) -> None:
    if not condition:
        raise RuntimeError(f"kernel warm-up: {why}")


#: name -> the function that compiles its kernels (compiled in this order: that of the entries of ``verify``
#: that use them, C2 (population, tube, region), C5 (corpus), C6 (corpus, training))
WORKLOADS = {"population": _population_kernels, "tube": _tube_kernels, "region": _region_kernels,
             "corpus": _corpus_kernels, "training": _training_kernels}


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
