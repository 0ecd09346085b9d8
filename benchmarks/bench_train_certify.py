"""``train --certify``: the certified chain of a GD run against the float64 run it certifies.

``run(quick)`` rows, on the seeded corpus m = n = 256 (quick: 128), seed 0, from the trainer's
large-resolution start (b₀ = (m ∧ n)/4, a₀ = calibration_a(b₀)) with its population step η, until
b ≥ (m ∧ n)/2 (or 20 000 steps):

* **certified / numpy GD**: ``stumpcheck.numerics.corpus.certified_run.certify_training`` (the Lohner chain,
  fast float64 intervals) against the same GD written below in plain numpy (importing nothing of ours;
  a₀, b₀ and η are passed as numbers). Target ≤ 20 (issue 34).
* **certified / our float64 trainer**: against ``stumpcheck.numerics.corpus.gd.train_gd`` (informative).
* **final box**: the relative width of the certified final box in b (target ≤ 10⁻⁶; the row's "seconds"
  are the width and the bound).
* **re-check / proof**: ``recheck_training`` of the certificate as ``stumpcheck recheck`` runs it (every step
  re-enclosed, steps in parallel on numba's threads; Arb at the last step's centre) against the certified
  chain (sequential). Target ≤ 1, on wall seconds (the re-check's advantage is its parallelism); the CPU
  ratio is in the note.

Timing: CPU seconds of this process (``time.process_time``, all its threads), the best of ``repeats``
interleaved rounds (1 for the certified chain and the re-check, which take seconds): on the shared machine
wall times varied by 3× with the load, CPU times by less. Wall seconds are in the details.

Usage: python -m benchmarks.bench_train_certify [--quick]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # run as a script: benchmarks/ and the repository on the path
    sys.path[:0] = [str(Path(__file__).resolve().parent.parent)]
from benchmarks.rows import format_rows, row  # noqa: E402

MAX_STEPS = 20000


def numpy_gd(x, theta, a0: float, b0: float, eta: float, b_target: float, max_steps: int):
    """Constant-step GD on L̂ = (1/m) Σ ½(θ̂ⱼ − θⱼ)², one head, in plain numpy: (steps, a, b).

    θ̂ = Σ αᵢxᵢ, α = softmax(a·y − b·x) per task (scores shifted by their maximum), ∂θ̂/∂a = Cov_α(x, y),
    ∂θ̂/∂b = −Var_α(x) (centred); stops at the first k with k = max_steps or b_k ≥ b_target."""
    y = (x >= theta[:, None]).astype(np.float64)
    a, b = a0, b0
    k = 0
    while k < max_steps and b < b_target:
        s = a * y - b * x
        s -= s.max(axis=1, keepdims=True)
        w = np.exp(s)
        w /= w.sum(axis=1, keepdims=True)
        mean = (w * x).sum(axis=1)
        d = x - mean[:, None]
        e = mean - theta
        cov = (w * d * y).sum(axis=1)
        var = (w * d * d).sum(axis=1)
        a, b = a - eta * float(np.mean(e * cov)), b + eta * float(np.mean(e * var))
        k += 1
    return k, a, b


def _cpu(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return time.process_time() - cpu, time.perf_counter() - wall, result


def _rows(size: int, repeats: int) -> list[dict]:
    from stumpcheck.numerics.corpus.certified_run import certify_training
    from stumpcheck.numerics.corpus.certified_run.certificate import training_certificate
    from stumpcheck.numerics.corpus.certified_run.recheck import recheck_training
    from stumpcheck.numerics.corpus.checkpoint import corpus_fingerprint
    from stumpcheck.numerics.corpus.corpora import make_corpus
    from stumpcheck.numerics.corpus.gd import train_gd
    from stumpcheck.numerics.corpus.steps import choose_eta, large_resolution_start

    corpus = make_corpus(size, size, seed=0)
    x, theta = corpus.x, corpus.theta
    a0, b0 = large_resolution_start(size, size)
    eta, _ = choose_eta(x, theta, a0, b0, "population")
    target = size / 2
    certify = lambda: certify_training(x, theta, a0=a0, b0=b0, eta=eta, b_target=target, max_steps=MAX_STEPS,  # noqa: E731
                                       threads=1)
    ours = lambda: train_gd(x, theta, a0=a0, b0=b0, eta=eta, steps=MAX_STEPS, b_target=target)  # noqa: E731
    plain = lambda: numpy_gd(x, theta, a0, b0, eta, target, MAX_STEPS)  # noqa: E731
    certify_training(x, theta, a0=a0, b0=b0, eta=eta, max_steps=2, threads=1)   # compile, load the caches
    ours()
    plain()
    best = {"plain": (np.inf, np.inf), "ours": (np.inf, np.inf)}
    results = {}
    for _ in range(repeats):
        for name, fn in (("plain", plain), ("ours", ours)):
            cpu, wall, results[name] = _cpu(fn)
            best[name] = (min(best[name][0], cpu), min(best[name][1], wall))
    cpu_c, wall_c, chain = _cpu(certify)
    trained = results["ours"]
    document = json.loads(json.dumps(training_certificate(
        chain, {"sha256": corpus_fingerprint(x, theta), "m": size, "n": size},
        float_run={"a": trained.trajectory["a"], "b": trained.trajectory["b"], "steps": trained.steps,
                   "stopped_because": trained.stopped_because, "method": "dense"})))
    cpu_r, wall_r, (ok, reason, _, _) = _cpu(lambda: recheck_training(document, x, theta))
    wall_c2, cpu_c2 = wall_c, cpu_c
    steps_plain, _, b_plain = results["plain"]
    width = chain.relative_width_b()
    details = {"m": size, "n": size, "seed": 0, "a0": a0, "b0": b0, "eta": eta, "b_target": target,
               "certified_steps": chain.steps, "proved": chain.proved, "stopped_because": chain.stopped_because,
               "final_box": chain.final_box, "relative_width_b": width, "float64_steps": trained.steps,
               "float64_b": trained.b, "numpy_steps": steps_plain, "numpy_b": b_plain,
               "wall_s": {"certified": wall_c, "ours": best["ours"][1], "numpy": best["plain"][1], "recheck": wall_r},
               "cpu_s": {"certified": cpu_c, "ours": best["ours"][0], "numpy": best["plain"][0], "recheck": cpu_r},
               "recheck": [ok, reason], "repeats": repeats}
    name = f"m = n = {size}, large-resolution start to b >= {target:g}"
    proof = f"{chain.steps} steps {'proved' if chain.proved else 'NOT proved: ' + chain.stopped_because}"
    return [
        row(f"train --certify chain, {name}", cpu_c, "plain numpy GD, same run", best["plain"][0], kind="ours/bound",
            target=("<=", 20.0), details=details,
            note=f"{proof}; numpy GD {steps_plain} steps, final b differs from ours by "
                 f"{abs(b_plain - trained.b) / trained.b:.1e} rel.; CPU seconds"),
        row(f"train --certify chain vs our float64 trainer, {name}", cpu_c, "train_gd (float64)", best["ours"][0],
            kind="ours/bound", details=details, note="informative; CPU seconds"),
        row(f"certified final box, relative width in b, {name}", width, "the bound 1e-6", 1e-6, kind="ours/bound",
            target=("<=", 1.0), details=details, note=f"b in [{chain.final_box['b'][0]!r}, {chain.final_box['b'][1]!r}]"),
        row(f"recheck of the training certificate vs its proof, {name}", wall_r, "the certified chain", wall_c2,
            kind="ours/bound", target=("<=", 1.0), details=details,
            note=f"{'PASS' if ok else 'FAIL: ' + reason}; every step re-enclosed, Arb at the last centre; wall "
                 f"seconds; CPU ratio {cpu_r / cpu_c2:.3g}"),
    ]


def run(quick: bool = False) -> list[dict]:
    return _rows(128 if quick else 256, 2 if quick else 3)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    print(format_rows(run(quick=args.quick)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
