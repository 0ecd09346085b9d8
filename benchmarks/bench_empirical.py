"""Corpus loss + exact gradient (L̂, ∇L̂): the compiled kernel against the np.exp bound and PyTorch autograd.

``run(quick)`` returns rows (benchmarks/rows.py); ``python benchmarks/bench_empirical.py [--quick]``
prints them. Workload: one-head model, float64, a seeded corpus (x, θ ~ U[0, 1], n = 1000 points
per task, 10⁷ tokens; quick: 10⁶), at a = a_cal(b) on the derived calibration relation, b = 50 and
500. Variants, timed in this process with the repetitions interleaved (min wall time is the row's
figure; median, max and CPU seconds are in ``details``):

  ours dense    stumpcheck.numerics.corpus.empirical.loss_and_gradient(method="dense", threads=1 or 2);
  ours pruned   the same with method="pruned" on a SortedCorpus (its one-off sort timed apart);
  exp bound     np.exp over as many float64 tokens into a preallocated buffer (one exp per token);
  kernel exp    diagnostic, not a baseline: the kernel's own compiled exp (kernel_exp.exp_nonpositive)
                over the same tokens into the same buffer, so that the notes can say how many ns per
                token of ours are the exp itself;
  torch         PyTorch CPU autograd, float64, 1 thread: s = a·y − b·x, softmax, θ̂ = Σ αx,
                L̂ = mean ½(θ̂ − θ)², backward() (tensors built outside the timed region).

Accuracy: every component of (L̂, ∂L̂/∂a, ∂L̂/∂b) of each variant against a long-double
(np.longdouble) reference over the whole corpus, written here from the definitions: scores
shifted by their maximum, θ̂ = Σ αx, ∂θ̂/∂b = −Σ α (x − θ̂)² (two passes, centred), and
∂θ̂/∂a = Cov_α(y, x) = α_P α_N (x̄_P − x̄_N) (the binary-label covariance, a product of positive
factors: the centred Σ α (y − ȳ)(x − θ̂) cancels by ~10⁷ at b = 500). Compile time: the first call
in a fresh process with an empty kernel cache, and with the disk cache, against a warm call.
The baselines import nothing of this project. torch: ``pip install torch==2.13.0`` (``.[bench]``);
without it the torch rows say "missing".

OpenMP wait policy: this module sets OMP_WAIT_POLICY=PASSIVE (unless the environment sets it) when
it is imported, before torch or numba load an OpenMP runtime, so that the worker threads of a
two-thread variant sleep when it ends instead of spinning for milliseconds into the next
variant's time (the pruned one-thread call that followed the two-thread dense call used 20.8 ms of
process CPU in 12.5 ms of wall time with the default policy). The library sets the same default
(:mod:`stumpcheck.numerics.corpus.kernel`), but torch, imported first here, would load its runtime earlier.
The policy in force is in every row's details.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")   # see the module docstring; before torch and numba load

import numpy as np  # noqa: E402

if __package__ in (None, ""):  # python benchmarks/bench_empirical.py
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from benchmarks.rows import format_rows, row  # noqa: E402

N_POINTS = 1000
SEED = 0
B_VALUES = (50.0, 500.0)


# ---------------------------------------------------------------- baselines (nothing of ours)

def exp_bound(x, buffer):
    np.exp(x, out=buffer)


def kernel_exp_loop():
    """The kernel's exp alone over every token (a diagnostic of ours, compiled on first call)."""
    from numba import njit

    from stumpcheck.numerics.corpus.kernel_exp import exp_nonpositive

    @njit(cache=True)
    def loop(x, slope, buffer):
        for j in range(x.shape[0]):
            for i in range(x.shape[1]):
                buffer[j, i] = exp_nonpositive(slope * x[j, i])

    return loop


def torch_inputs(torch, x, theta):
    xt = torch.from_numpy(np.array(x, dtype=np.float64))
    tt = torch.from_numpy(np.array(theta, dtype=np.float64))
    return xt, tt, (xt >= tt[:, None]).to(torch.float64)


def torch_loss_and_gradient(torch, inputs, a, b):
    """What a typical autograd implementation looks like (float64)."""
    xt, tt, y = inputs
    at = torch.tensor(a, dtype=torch.float64, requires_grad=True)
    bt = torch.tensor(b, dtype=torch.float64, requires_grad=True)
    alpha = torch.softmax(at * y - bt * xt, dim=1)
    theta_hat = (alpha * xt).sum(dim=1)
    loss = 0.5 * ((theta_hat - tt) ** 2).mean()
    loss.backward()
    return loss.item(), np.array([at.grad.item(), bt.grad.item()])


def long_double_reference(x, theta, a, b, rows_per_block=500):
    """(L̂, ∂L̂/∂a, ∂L̂/∂b) of the one-head model in np.longdouble, two passes per task (see the module
    docstring for the forms)."""
    L = np.longdouble
    a, b = L(a), L(b)
    total = np.zeros(3, dtype=L)
    m = x.shape[0]
    for start in range(0, m, rows_per_block):
        xs = x[start:start + rows_per_block].astype(L)
        th = theta[start:start + rows_per_block].astype(L)
        y = xs >= th[:, None]
        s = np.where(y, a, L(0)) - b * xs
        w = np.exp(s - s.max(axis=1, keepdims=True))
        z = w.sum(axis=1)
        alpha = w / z[:, None]
        theta_hat = (alpha * xs).sum(axis=1)
        e = theta_hat - th
        alpha_p = np.where(y, alpha, L(0)).sum(axis=1)
        alpha_n = np.where(y, L(0), alpha).sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean_p = np.where(y, alpha * xs, L(0)).sum(axis=1) / alpha_p
            mean_n = np.where(y, L(0), alpha * xs).sum(axis=1) / alpha_n
        d_a = np.where((alpha_p > 0) & (alpha_n > 0), alpha_p * alpha_n * (mean_p - mean_n), L(0))
        centred = xs - theta_hat[:, None]
        d_b = -(alpha * centred * centred).sum(axis=1)
        total += np.array([(e * e / 2).sum(), (e * d_a).sum(), (e * d_b).sum()])
    return total / L(m)


def rel_errors(value, reference) -> list[float]:
    """|value − ref| / |ref| per component (L̂, ∂L̂/∂a, ∂L̂/∂b), in long double."""
    value = np.asarray(value, dtype=np.longdouble)
    return [float(abs(v - r) / abs(r)) for v, r in zip(value, reference)]


# ---------------------------------------------------------------- timing

def interleaved(variants: dict, repeats: int) -> dict:
    """Run each variant ``repeats`` times, round-robin; per variant: min/median/max wall and min CPU seconds."""
    wall = {k: [] for k in variants}
    cpu = {k: [] for k in variants}
    result = {}
    for _ in range(repeats):
        for name, fn in variants.items():
            c0, t0 = time.process_time(), time.perf_counter()
            result[name] = fn()
            wall[name].append(time.perf_counter() - t0)
            cpu[name].append(time.process_time() - c0)
    return {k: {"min_s": min(wall[k]), "median_s": statistics.median(wall[k]), "max_s": max(wall[k]),
                "cpu_min_s": min(cpu[k]), "runs": repeats, "result": result[k]} for k in variants}


def _timing(entry) -> dict:
    return {k: v for k, v in entry.items() if k != "result"}


_FIRST_CALL = """
import sys, time
import numpy as np
t0 = time.perf_counter()
from stumpcheck.numerics.corpus.empirical import loss_and_gradient, sort_corpus
rng = np.random.default_rng(0)
x, theta = rng.random((200, 100)), rng.random(200)
sc = sort_corpus(x, theta)
t1 = time.perf_counter()
loss_and_gradient(x, theta, 510.0, 500.0, threads=1)
loss_and_gradient(sc, None, 510.0, 500.0, method="pruned", threads=1)
t2 = time.perf_counter()
loss_and_gradient(x, theta, 510.0, 500.0, threads=1)
loss_and_gradient(sc, None, 510.0, 500.0, method="pruned", threads=1)
t3 = time.perf_counter()
print(t2 - t1, t3 - t2, t1 - t0)
"""


def first_call_seconds(cache_dir: str | None) -> tuple[float, float, float]:
    """(first dense + pruned call, the same call warm, import) in a fresh process; NUMBA_CACHE_DIR=cache_dir
    if given (an empty directory: the first call compiles), else numba's default cache."""
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    env = dict(os.environ, PYTHONPATH=root)
    env.pop("NUMBA_CACHE_DIR", None)
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = cache_dir
    out = subprocess.run([sys.executable, "-c", _FIRST_CALL], env=env, capture_output=True, text=True,
                         check=True, cwd=root)
    first, warm, imported = (float(v) for v in out.stdout.split())
    return first, warm, imported


# ---------------------------------------------------------------- the benchmark

def run(quick: bool = False) -> list[dict]:
    from stumpcheck.numerics.corpus.corpora import make_corpus
    from stumpcheck.numerics.corpus.empirical import loss_and_gradient, sort_corpus, window_sizes
    from stumpcheck.numerics.generated import asymptotics_numpy as derived

    try:
        import torch

        torch.set_num_threads(1)
        torch_version = torch.__version__
    except ImportError:
        torch, torch_version = None, None
    tokens = 10**6 if quick else 10**7
    repeats = 3 if quick else 5
    m = tokens // N_POINTS
    corpus = make_corpus(m, N_POINTS, seed=SEED)
    x, theta = corpus.x, corpus.theta
    sort_start = time.perf_counter()
    sorted_corpus = sort_corpus(x, theta)
    sort_s = time.perf_counter() - sort_start
    buffer = np.empty_like(x)
    exp_loop = kernel_exp_loop()
    exp_loop(x[:2], -1.0, buffer[:2])
    inputs = torch_inputs(torch, x, theta) if torch is not None else None
    # compile (or load from the disk cache) before timing
    loss_and_gradient(x[:2], theta[:2], 1.0, 1.0, threads=1)
    loss_and_gradient(sort_corpus(x[:2], theta[:2]), None, 1.0, 1000.0, method="pruned", threads=1)
    common = {"tokens": m * N_POINTS, "m": m, "n": N_POINTS, "seed": SEED, "estimator": "one-head",
              "precision": "float64", "torch": torch_version, "timing": "min wall of interleaved runs",
              "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY")}
    rows = []
    for b in B_VALUES:
        a = float(derived.calibration_a(b))
        variants = {
            "dense_1": lambda: loss_and_gradient(x, theta, a, b, threads=1),
            "dense_2": lambda: loss_and_gradient(x, theta, a, b, threads=2),
            "pruned_1": lambda: loss_and_gradient(sorted_corpus, None, a, b, method="pruned", threads=1),
            "exp": lambda: exp_bound(x, buffer),
            "kernel_exp": lambda: exp_loop(x, -b, buffer),
        }
        if torch is not None:
            variants["torch_1"] = lambda: torch_loss_and_gradient(torch, inputs, a, b)
        t = interleaved(variants, repeats)
        reference = long_double_reference(x, theta, a, b)
        accuracy = {}
        for name in ("dense_1", "dense_2", "pruned_1", "torch_1"):
            if name in t:
                loss, grad = t[name]["result"]
                accuracy[name] = dict(zip(("rel_err_loss", "rel_err_grad_a", "rel_err_grad_b"),
                                          rel_errors([loss, grad[0], grad[1]], reference)))
        ours_worst = max(max(accuracy[k].values()) for k in ("dense_1", "dense_2", "pruned_1"))
        details = dict(common, a=a, b=b, timings={k: _timing(v) for k, v in t.items()}, accuracy=accuracy,
                       reference="np.longdouble two-pass, whole corpus",
                       ours_max_rel_err=ours_worst, accuracy_target_met=bool(ours_worst <= 1e-12),
                       pruned_fraction_touched=window_sizes(sorted_corpus, b, a=a)["fraction"], sort_s=sort_s)
        acc_note = f"max rel err {ours_worst:.1e} vs long double (target 1e-12)"
        touched = details["pruned_fraction_touched"]
        per_token = {k: t[k]["min_s"] / (m * N_POINTS) * 1e9 for k in ("dense_1", "exp", "kernel_exp")}
        per_touched = t["pruned_1"]["min_s"] / (touched * m * N_POINTS) * 1e9
        per_task = t["pruned_1"]["min_s"] / m * 1e9
        details.update(ns_per_token=per_token, pruned_ns_per_touched_token=per_touched, pruned_ns_per_task=per_task)
        cost_note = (f"ours {per_token['dense_1']:.2f} ns/token; the kernel's exp alone over the same tokens "
                     f"{per_token['kernel_exp']:.2f}, np.exp {per_token['exp']:.2f}")
        rows.append(row(f"corpus dense b={b:g}, 1 thread vs np.exp bound", t["dense_1"]["min_s"],
                        "np.exp, same tokens, 1 thread", t["exp"]["min_s"], kind="ours/bound",
                        target=("<=", 2), note=acc_note, details=details))
        if torch is not None:
            torch_err = max(accuracy["torch_1"].values())
            rows.append(row(f"corpus dense b={b:g}, 1 thread vs torch", t["dense_1"]["min_s"],
                            "torch autograd float64, 1 thread", t["torch_1"]["min_s"], target=(">=", 10),
                            note=f"torch max rel err {torch_err:.1e}; {cost_note}", details=details))
        else:
            rows.append(row(f"corpus dense b={b:g}, 1 thread vs torch", t["dense_1"]["min_s"],
                            "torch autograd float64, 1 thread", None, target=(">=", 10), note="missing",
                            details=details))
            rows[-1]["met"] = None
        rows.append(row(f"corpus dense b={b:g}, 2 threads vs 1 thread", t["dense_2"]["min_s"],
                        "ours, 1 thread", t["dense_1"]["min_s"], target=(">=", 1.7), details=details))
        if b == 500.0:
            if torch is not None:
                rows.append(row("corpus pruned b=500, 1 thread vs torch", t["pruned_1"]["min_s"],
                                "torch autograd float64, 1 thread", t["torch_1"]["min_s"], target=(">=", 40),
                                note=f"touches {touched:.0%} of the tokens, {per_touched:.2f} ns per touched "
                                     f"token, {per_task:.0f} ns per task (the kernel's exp alone, dense: "
                                     f"{per_token['kernel_exp']:.2f} ns/token); sort {sort_s:.3g} s once",
                                details=details))
            else:
                rows.append(row("corpus pruned b=500, 1 thread vs torch", t["pruned_1"]["min_s"],
                                "torch autograd float64, 1 thread", None, target=(">=", 40), note="missing",
                                details=details))
                rows[-1]["met"] = None
    if not quick:
        with tempfile.TemporaryDirectory() as cache:
            first, warm, imported = first_call_seconds(cache)
        rows.append(row("corpus kernel first call, fresh process, empty cache (compile)", first,
                        "the same call, warm", warm, kind="ours/bound",
                        note="informative: paid once per environment (cache=True)", details={"import_s": imported}))
    first, warm, imported = first_call_seconds(None)   # the cache the calls above filled
    rows.append(row("corpus kernel first call, fresh process, disk cache", first, "the same call, warm", warm,
                    kind="ours/bound", note="informative: loading the cached machine code",
                    details={"import_s": imported}))
    return rows


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    rows = run(quick="--quick" in argv)
    print(format_rows(rows))
    print("JSON " + json.dumps(rows, default=float, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
