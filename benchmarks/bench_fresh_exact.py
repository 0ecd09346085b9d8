"""The exact fresh-context risk (``fresh --exact``) against its budget, and what Monte Carlo reaches in the same time.

``run(quick)`` (what ``python -m benchmarks`` collects). At the frozen estimator (a, b, θ) = (25, 20, 0.4)
and N ∈ {10, 10³, 10⁶, 10⁹} (quick: 10 and 10⁶):

* ``fresh_context_risk(..., dps=15, rel_width=1e-10)`` (10 correct digits) against the issue's budget of
  1 s, and ``dps=30`` (aiming at 30 digits, required ≤ 1e-8) against 10 s: rows ``ours/bound`` with the
  budget as the bound, the enclosures' relative radii in the note (target ≤ 1e-8 at 30 digits);
* the baseline, a plain numpy Monte Carlo written here (imports nothing of ours: softmax in log space,
  contexts streamed in chunks), run for the same wall time as the 10-digit exact call: the relative
  half-widths of its 95% intervals for the bias and the MSE, whether they contain the exact values, and
  how many times the exact relative radius they are (informative rows; their ratio is the time, ≈ 1).

Each exact call is timed best of 2 (quick: 1), in this process, after one warm-up call.
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # run as a script: benchmarks/ and the repository on the path
    sys.path[:0] = [str(Path(__file__).resolve().parent.parent)]
from benchmarks.rows import format_rows, row  # noqa: E402
from benchmarks.timing import best_of  # noqa: E402

A, B, THETA = 25.0, 20.0, 0.4
SIZES = (10, 10 ** 3, 10 ** 6, 10 ** 9)
QUICK_SIZES = (10, 10 ** 6)
CHUNK = 1 << 20  # points per numpy call


def monte_carlo(a: float, b: float, theta: float, N: int, seconds: float, seed: int = 0) -> dict:
    """θ̂_N − θ over as many fresh contexts as fit in ``seconds`` (plain numpy; the last context is finished).

    θ̂ = Σ x e^{s}/Σ e^{s}, s = a·1{x ≥ θ} − b x, summed in chunks with the running maximum shifted out.
    """
    rng = np.random.default_rng(seed)
    errors = []
    start = time.perf_counter()
    points = 0
    while time.perf_counter() - start < seconds:
        top, num, den, left = -math.inf, 0.0, 0.0, N
        while left:
            if time.perf_counter() - start > seconds:  # out of time inside a context: it does not count
                rate = points / (time.perf_counter() - start)
                return {"contexts": len(errors), "seconds": time.perf_counter() - start,
                        "seconds_per_context": N / rate} | _intervals(errors)
            size = min(left, CHUNK)
            x = rng.random(size)
            s = np.where(x >= theta, a, 0.0) - b * x
            new_top = max(top, float(s.max()))
            scale = math.exp(top - new_top) if top > -math.inf else 0.0
            w = np.exp(s - new_top)
            num, den, top = num * scale + float(w @ x), den * scale + float(w.sum()), new_top
            left -= size
            points += size
        errors.append(num / den - theta)
    return {"contexts": len(errors), "seconds": time.perf_counter() - start} | _intervals(errors)


def _intervals(errors) -> dict:
    """Mean and 95% half-width (normal approximation) of the errors and of their squares (two contexts at least)."""
    errors = np.asarray(errors)
    out = {}
    if len(errors) >= 2:
        for name, values in (("bias", errors), ("mse", errors ** 2)):
            mean, half = float(values.mean()), 1.96 * float(values.std(ddof=1)) / math.sqrt(len(values))
            out[name] = (mean, half)
    return out


def _exact(N: int, dps: int, rel_width):
    from stumpcheck.numerics.certified.enclosures import fresh_context_risk

    return fresh_context_risk(A, B, str(THETA), N, dps=dps, rel_width=rel_width)


def run(quick: bool = False) -> list[dict]:
    rows = []
    repeats = 1 if quick else 2
    _exact(100, 15, 1e-6)  # warm-up: imports and flint's constants
    for N in (QUICK_SIZES if quick else SIZES):
        t10, risk10, _ = best_of(lambda: _exact(N, 15, 1e-10), repeats=repeats)
        t30, risk30, _ = best_of(lambda: _exact(N, 30, None), repeats=repeats)
        widths10 = max(risk10.relative_radius_bias, risk10.relative_radius_mse)
        widths30 = max(risk30.relative_radius_bias, risk30.relative_radius_mse)
        evaluations = [a["evaluations"] for a in risk10.attempts]
        rows.append(row(f"fresh --exact, N = {N}, 10 digits", t10, "budget (issue 34)", 1.0, kind="ours/bound",
                        target=("<=", 1.0),
                        note=f"rel. radius {widths10:.1e} (target <= 1e-10); {risk10.prec_bits} bits, "
                             f"{sum(evaluations)} integrand evaluations, {1e3 * t10 / max(1, sum(evaluations)):.2f} "
                             "ms each (with the estimate pass)",
                        details={"bias": risk10.bounds("bias"), "mse": risk10.bounds("mse"),
                                 "attempts": risk10.attempts}))
        rows.append(row(f"fresh --exact, N = {N}, 30 digits", t30, "budget (issue 34)", 10.0, kind="ours/bound",
                        target=("<=", 1.0),
                        note=f"rel. radius {widths30:.1e} (target <= 1e-8; aim 1e-30); {risk30.prec_bits} bits",
                        details={"bias": risk30.bounds("bias"), "mse": risk30.bounds("mse"),
                                 "attempts": risk30.attempts}))
        mc = monte_carlo(A, B, THETA, N, t10)
        if "bias" in mc:
            rel = {k: mc[k][1] / abs(float(getattr(risk30, k).mid)) for k in ("bias", "mse")}
            inside = {k: abs(mc[k][0] - float(getattr(risk30, k).mid)) <= mc[k][1] for k in ("bias", "mse")}
            note = (f"{mc['contexts']} contexts in {mc['seconds']:.2f} s: 95% CI half-width {rel['bias']:.1e} "
                    f"(bias), {rel['mse']:.1e} (MSE) relative; CIs contain the exact values: bias {inside['bias']}, "
                    f"MSE {inside['mse']}")
            note += f"; that is {max(rel.values()) / max(widths10, 1e-300):.1e} times the exact relative radius"
        else:
            note = (f"{mc['contexts']} context(s) finished in {mc['seconds']:.2f} s: no interval"
                    + (f" (one context takes about {mc['seconds_per_context']:.3g} s)"
                       if "seconds_per_context" in mc else ""))
        rows.append(row(f"fresh --exact, N = {N}, 10 digits, vs Monte Carlo in the same time", t10,
                        "plain numpy Monte Carlo, same wall time", mc["seconds"], kind="ours/bound", note=note,
                        details=mc | {"seconds_budget": t10}))
    return rows


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    print(format_rows(run(quick)))
