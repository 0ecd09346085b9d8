"""Corpus loss + exact gradient: dense and pruned paths against PyTorch autograd and the np.exp floor.

Usage: python benchmarks/bench_empirical.py [--tokens 1e6 1e7] [--b 50 500] [--n 1000] [--seed 0]
       [--ref-tasks 100] [--threads 1]

For each corpus (m = tokens / n tasks of n points, x ~ U[0, 1], θ ~ U[0, 1], seeded) and each b,
at a = a_cal(b) on the derived calibration relation, one evaluation of (L̂, ∇L̂), one-head model, by

  dense       numerics.corpus.empirical.loss_and_gradient(method="dense"), every token, chunked;
  pruned      the same with method="pruned" on a SortedCorpus (the one-off sort is timed apart);
  torch       PyTorch CPU autograd, float64: s = a·y − b·x, softmax, θ̂ = Σ αx, L̂ = mean ½(θ̂ − θ)²,
              L̂.backward() (what a typical implementation looks like), same process, same threads;
  exp floor   np.exp over an array of the same number of tokens (at least one exp per token).

Reported: seconds (best of 3 runs, 1 if a run exceeds 20 s), ratios against torch and the exp
floor, and the accuracy of each: the relative error of ∂L̂/∂a and ∂L̂/∂b on a sub-corpus of the
first ``--ref-tasks`` tasks against an mpmath reference (40 digits; the covariance in its centred
form Σ α (y − ȳ)(x − θ̂), whose cancellation is absorbed by the 40 digits: evidence high-precision
when a 50-digit evaluation agrees). Threads: numpy/BLAS and torch are set to ``--threads``.
torch is optional (pip install torch==2.13.0); without it those columns say "missing".
"""

from __future__ import annotations

import argparse
import json
import os
import sys

if __name__ == "__main__":  # before numpy/BLAS start their thread pools
    _threads = "1"
    for i, arg in enumerate(sys.argv):
        if arg == "--threads" and i + 1 < len(sys.argv):
            _threads = sys.argv[i + 1]
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, _threads)

import mpmath
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from numerics.corpus.corpora import make_corpus  # noqa: E402
from numerics.corpus.empirical import loss_and_gradient, sort_corpus, window_sizes  # noqa: E402
from numerics.generated import asymptotics_numpy as derived  # noqa: E402
from numerics.provenance import provenance  # noqa: E402
from timing import best_of  # noqa: E402  (benchmarks/timing.py, next to this script)

SLOW_SECONDS = 20.0
REPEATS = 3


def timed(fn):
    seconds, result, _ = best_of(fn, repeats=REPEATS, slow_seconds=SLOW_SECONDS)
    return seconds, result


def torch_inputs(torch, x, theta):
    """Tensors prepared once, outside the timed region (a copy: torch wants writable memory)."""
    xt = torch.from_numpy(np.array(x, dtype=np.float64))
    tt = torch.from_numpy(np.array(theta, dtype=np.float64))
    return xt, tt, (xt >= tt[:, None]).to(torch.float64)


def torch_loss_and_gradient(torch, inputs, a, b):
    """The straightforward autograd implementation (float64)."""
    xt, tt, y = inputs
    at = torch.tensor(a, dtype=torch.float64, requires_grad=True)
    bt = torch.tensor(b, dtype=torch.float64, requires_grad=True)
    alpha = torch.softmax(at * y - bt * xt, dim=1)
    theta_hat = (alpha * xt).sum(dim=1)
    loss = 0.5 * ((theta_hat - tt) ** 2).mean()
    loss.backward()
    return loss.item(), np.array([at.grad.item(), bt.grad.item()])


def reference_gradient(x, theta, a, b, dps: int) -> tuple:
    """(L̂, ∂L̂/∂a, ∂L̂/∂b) of the one-head model at ``dps`` digits (mpmath), from the definitions."""
    with mpmath.workdps(dps):
        a, b = mpmath.mpf(a), mpmath.mpf(b)
        total_l = total_a = total_b = mpmath.mpf(0)
        for row, th in zip(x, theta):
            xs = [mpmath.mpf(float(v)) for v in row]
            ys = [1 if float(v) >= float(th) else 0 for v in row]
            scores = [a * y - b * v for y, v in zip(ys, xs)]
            top = max(scores)
            weights = [mpmath.exp(s - top) for s in scores]
            z = mpmath.fsum(weights)
            alpha = [w / z for w in weights]
            theta_hat = mpmath.fsum(p * v for p, v in zip(alpha, xs))
            y_bar = mpmath.fsum(p * y for p, y in zip(alpha, ys))
            d_a = mpmath.fsum(p * (y - y_bar) * (v - theta_hat) for p, y, v in zip(alpha, ys, xs))
            d_b = -mpmath.fsum(p * (v - theta_hat) ** 2 for p, v in zip(alpha, xs))
            e = theta_hat - mpmath.mpf(float(th))
            total_l += e * e / 2
            total_a += e * d_a
            total_b += e * d_b
        m = len(theta)
        return total_l / m, total_a / m, total_b / m


def rel_error(value, reference) -> float:
    reference = mpmath.mpf(reference)
    if reference == 0:
        return float("nan")
    return float(abs(mpmath.mpf(float(value)) - reference) / abs(reference))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=float, nargs="+", default=[1e6, 1e7])
    parser.add_argument("--b", type=float, nargs="+", default=[50.0, 500.0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--ref-tasks", type=int, default=100)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    try:
        import torch

        torch.set_num_threads(args.threads)
        torch_version = torch.__version__
    except ImportError:
        torch, torch_version = None, None
    print(f"# bench_empirical: one-head model, float64, seed {args.seed}, n = {args.n}, threads {args.threads}, "
          f"torch {torch_version or 'missing (pip install torch==2.13.0)'}")
    rows = []
    accuracy = []
    for tokens in args.tokens:
        m = max(1, int(round(tokens / args.n)))
        corpus = make_corpus(m, args.n, seed=args.seed)
        sort_seconds, sorted_corpus = timed(lambda: sort_corpus(corpus.x, corpus.theta))
        exp_seconds, _ = timed(lambda: np.exp(corpus.x))
        inputs = torch_inputs(torch, corpus.x, corpus.theta) if torch is not None else None
        for b in args.b:
            a = float(derived.calibration_a(b))
            dense_s, (loss_d, grad_d) = timed(lambda: loss_and_gradient(corpus.x, corpus.theta, a, b))
            pruned_s, (loss_p, grad_p) = timed(
                lambda: loss_and_gradient(sorted_corpus, None, a, b, method="pruned"))
            if torch is not None:
                torch_s, (_, grad_t) = timed(lambda: torch_loss_and_gradient(torch, inputs, a, b))
            else:
                torch_s, grad_t = None, None
            touched = window_sizes(sorted_corpus, b)["fraction"]
            row = {"tokens": m * args.n, "m": m, "n": args.n, "a": a, "b": b, "seed": args.seed,
                   "dense_s": dense_s, "pruned_s": pruned_s, "sort_s": sort_seconds, "torch_s": torch_s,
                   "exp_s": exp_seconds, "pruned_fraction_touched": touched,
                   "dense_vs_pruned_rel": float(np.max(np.abs(grad_p - grad_d) / np.abs(grad_d))),
                   "torch_vs_dense_rel": (None if grad_t is None
                                          else float(np.max(np.abs(grad_t - grad_d) / np.abs(grad_d)))),
                   "loss": loss_d, "grad": grad_d.tolist()}
            rows.append(row)
        corpus = sorted_corpus = inputs = None  # free the arrays before the next size
    # accuracy against mpmath on a small sub-corpus (the first ref-tasks tasks of the first corpus)
    sub = make_corpus(max(1, int(round(args.tokens[0] / args.n))), args.n, seed=args.seed)
    xs, ts = sub.x[:args.ref_tasks], sub.theta[:args.ref_tasks]
    for b in args.b:
        a = float(derived.calibration_a(b))
        ref = reference_gradient(xs, ts, a, b, 40)
        check = reference_gradient(xs, ts, a, b, 50)
        agree = min(rel_error(float(r), c) for r, c in zip(ref, check))
        results = {"dense": loss_and_gradient(xs, ts, a, b),
                   "pruned": loss_and_gradient(sort_corpus(xs, ts), None, a, b, method="pruned")}
        if torch is not None:
            results["torch"] = torch_loss_and_gradient(torch, torch_inputs(torch, xs, ts), a, b)
        for name, (loss, grad) in results.items():
            accuracy.append({"method": name, "b": b, "a": a, "tasks": len(ts), "n": args.n, "seed": args.seed,
                             "rel_err_loss": rel_error(loss, ref[0]), "rel_err_grad_a": rel_error(grad[0], ref[1]),
                             "rel_err_grad_b": rel_error(grad[1], ref[2]),
                             "reference": "mpmath 40 digits (50-digit check agrees to rel. "
                                          f"{agree:.1e})", "ref_grad": [float(ref[1]), float(ref[2])]})

    print(f"{'tokens':>8} {'b':>5} {'dense s':>9} {'pruned s':>9} {'touched':>8} {'sort s':>7} {'torch s':>9} "
          f"{'exp s':>8} {'torch/dense':>11} {'torch/pruned':>12} {'dense/exp':>9} {'pruned/exp':>10}")
    for r in rows:
        t = r["torch_s"]
        print(f"{r['tokens']:>8.0e} {r['b']:>5g} {r['dense_s']:>9.4f} {r['pruned_s']:>9.4f} "
              f"{r['pruned_fraction_touched']:>8.3f} {r['sort_s']:>7.3f} "
              f"{('%.4f' % t) if t else 'missing':>9} {r['exp_s']:>8.4f} "
              f"{('%.2f' % (t / r['dense_s'])) if t else '-':>11} {('%.2f' % (t / r['pruned_s'])) if t else '-':>12} "
              f"{r['dense_s'] / r['exp_s']:>9.2f} {r['pruned_s'] / r['exp_s']:>10.2f}")
    print(f"\naccuracy on the first {args.ref_tasks} tasks (n = {args.n}, seed {args.seed}) vs mpmath 40 digits:")
    print(f"{'method':>8} {'b':>5} {'rel err L':>10} {'rel err dL/da':>14} {'rel err dL/db':>14}")
    for r in accuracy:
        print(f"{r['method']:>8} {r['b']:>5g} {r['rel_err_loss']:>10.1e} {r['rel_err_grad_a']:>14.1e} "
              f"{r['rel_err_grad_b']:>14.1e}")
    record = {"benchmark": "bench_empirical", "timing": rows, "accuracy": accuracy, "threads": args.threads,
              "torch": torch_version, "timing_rule": f"best of {REPEATS} (1 run if > {SLOW_SECONDS} s)",
              "provenance": provenance(seed=args.seed, precision="float64")}
    print("JSON " + json.dumps(record, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
