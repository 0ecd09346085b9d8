"""Built-in registry entries: the claims C1–C9 and the lemmas derived in ``theory/``.

Importing this module registers them (:mod:`stumpcheck.lemmas.catalogue` does).

**Claims** (docs/model.md §7), each ``(*, quick, seed, out_dir) -> ClaimResult``:
C1 :func:`stumpcheck.claims.population.check_c1` (quick: 12 random points, full: 40);
C2–C4 decided by their certified limit statements (:mod:`stumpcheck.claims.population_all_time`: the
committed certificate re-checked under quick, proved anew under full), with
:func:`stumpcheck.claims.population.check_c2`/``c3``/``c4`` on one shared population
flow run from (a₀, b₀) = (10, 10) to t = 10¹² at rtol 10⁻⁸ (full: plus the
a-posteriori second solve at rtol/10) as controls; C5 ``stumpcheck.claims.c5:check_c5`` (certified corpus
intervals decide, b* the control), C6–C8
``stumpcheck.claims.boundary:check_c6/7/8`` (with ``scheduler=``), C9
``stumpcheck.claims.c9:check_c9``, imported by name when run.

**Lemmas** (margin ≥ 0 means the statement holds at the point). With
ε = 1/b, v = b(1 − θ), u = bθ, λ = a − b, r = e^{b−a} = e^{−λ}, Y = e^v:

* ``bulk_error``: |b·e(θ) − 1| ≤ (v + u·r)·e^{−v}/(1 − e^{−v}) for θ ∈ [0.05, 0.95].
  Derivation: splitting E[x e^s]/E[e^s] at θ gives the exact identity
  b·e − 1 = −[w₁·v/(e^v − 1) + (1 − w₁)·u/(1 − e^{−u})] with w₁ the softmax
  mass right of θ and 1 − w₁ ≤ e^{u−a}/(1 − e^{−v}); since u·e^{u−a} = u·r·e^{−v},
  this is the bound. It is the bulk law e = 1/b + O((v + br)e^{−v}) of
  :func:`stumpcheck.theory.asymptotics.bulk_error`, whose first correction is −(v(1 − r) + br)/Y.
* ``right_layer``: |e(θ) − e_R(θ)| ≤ 2·e^{−bθ}·r(v + rb)/(b(Y − 1 + r)²) for
  θ ∈ [1/2, 1], a ≥ b, b ≥ 2, with e_R = :func:`stumpcheck.theory.asymptotics.right_layer_error`
  (lambdified). Exact: e − e_R = δ(1 − b·e_R)/(D₀ + bδ), δ = r·e^{−bθ},
  D₀ = −b(Y − 1 + r), and 1/(1 − e^{−bθ}) ≤ 2 for bθ ≥ 1.
* ``leading_loss``: along the calibration relation a = calibration_a(b) (generated),
  |L/L₀ − 1| ≤ 3/b² for b ∈ [20, 10⁴], L₀ = 1/(2b²) + (1/2 − ζ(3))/b³ (generated
  ``leading_loss``); the next term is 2c₄/b² with 2c₄ = 3/2 − 3ζ(3) ≈ −2.11.
* ``progress_direction``: along it, max_i |2b³·(−∇L)_i − 1| ≤ 5/b for b ∈ [20, 10⁴]
  (generated ``progress_direction`` is (1/(2b³), 1/(2b³))).
* ``interior_error_bound``: |e(θ)| ≤ 2/b for θ ∈ [0.05, 0.95], |a − calibration_a(b)| ≤ 1;
  sampled for b ∈ [20, 10⁴], and certified over that whole domain (the margin and domain of
  :mod:`stumpcheck.lemmas.certified_builtins`, proved by :func:`stumpcheck.numerics.certified.proofs.margin_proof.prove`).
* ``label_encoding``: the {−1, +1} label encoding with label score a/2 gives the
  same θ̂ as the {0, 1} encoding with label score a, on any context: the scores
  differ by the common shift a/2, which softmax ignores (docs/model.md §1).
* ``progress_along_error`` (C5's criterion as a property): for m = n corpora and
  b ∈ [8, n/8] on the calibration relation, the rms over a fixed set of corpus
  seeds of along = (∇L̂ − ∇L)·u/‖∇L‖, u = −∇L/‖∇L‖, is ≤ ½
  (:func:`stumpcheck.claims.c5.along_rms_on_relation`). n is drawn from the powers
  of two in [256, 4096]: each n needs its own m × n corpora (O(n²) work per seed),
  which are sorted once and kept (a pure function of (n, seed); free them with
  :func:`stumpcheck.claims.c5.clear_corpus_cache`) for every example with that n.

Certified levels (:mod:`stumpcheck.lemmas.certified_builtins`), each lemma's first level, so ``verify`` runs them:
``interior_error_bound``, ``bulk_error`` and ``right_layer`` over their whole domains under ``--quick`` too
(bulk_error and right_layer: a SymPy identity turns the cancelling ratio margin into a quotient of positive
polynomials in positive atoms, and Arb proves the atoms positive on the domain; :mod:`stumpcheck.theory.margin_identities`);
``leading_loss`` and ``progress_direction`` (margins in L and ∇L along the relation, Taylor forms along b with
rigorous θ-integrals) on their whole b ∈ [20, 10⁴] under ``--full`` and on a sub-domain under ``--quick``
(then their sampled verdict stands); ``label_encoding`` by a symbolic proof for every context size n.

Float64 margins (L, ∇L by Gauss–Legendre on the model's breakpoints, e from the
generated numpy code) are evaluated in float64; the mpmath margins raise the
precision by the digits the compared quantities need (stated per lemma).
"""

from __future__ import annotations

import functools
import math

import mpmath
from hypothesis import strategies as st

from stumpcheck import strategies as sc
from stumpcheck.lemmas.certified_builtins import builtin_margin, prove_label_encoding, spec_for, stated_margin
from stumpcheck.claims.population_shared import clear_flow_cache, population_claim
from stumpcheck.lemmas import ClaimCheck, lemma, register, symbolic, sympy_lemma

__all__ = ["CLAIM_IDS", "LEMMA_NAMES", "INTERIOR_C", "LOSS_K", "PROGRESS_K", "ALONG_SEEDS", "ALONG_SIZES",
           "clear_flow_cache"]

CLAIM_IDS = tuple(f"C{i}" for i in range(1, 10))
LEMMA_NAMES = ("bulk_error", "right_layer", "leading_loss", "progress_direction", "interior_error_bound",
               "label_encoding", "progress_along_error")
#: the constants stated by the lemmas (see the module doc)
INTERIOR_C = 2
LOSS_K = 3
PROGRESS_K = 5
#: progress_along_error: the fixed seed set (corpus seeds s·1000003 + 7920·n, stumpcheck.claims.c5._seed_of)
#: and the sizes n (= m) it draws from
ALONG_SEEDS = (0, 1, 2)
ALONG_SIZES = (256, 512, 1024, 2048, 4096)

# ---------------------------------------------------------------------------------------------
# claims C1–C9

def _c1(*, quick: bool = True, seed: int = 0, out_dir=None):
    from stumpcheck.claims.population import check_c1

    result = check_c1(samples=12 if quick else 40, seed=seed)
    result.details.setdefault("precision", f"mpmath dps {result.details.get('dps')}")
    if out_dir is not None:
        result.details["plots"] = [_plot_c1(result, out_dir)]
    return result


def _plot_c1(result, out_dir) -> str:
    """c1_digits.png: agreeing digits of e(θ) per random point against b, and the tolerance."""
    from pathlib import Path

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = result.details["error_points"]
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    ax.semilogx([r["b"] for r in rows], [min(r["digits"], 99) for r in rows], "o", ms=4,
                label="e(θ): generated vs direct quadrature")
    for row in result.details.get("loss_points", []):
        ax.semilogx([row["b"]], [min(row["digits"], 99)], "s", ms=5, color="tab:orange")
    ax.axhline(result.details["dps"] - 2, color="tab:red", lw=0.8, label="tolerance (dps − 2)")
    ax.set_xlabel("b")
    ax.set_ylabel("agreeing digits")
    ax.set_title(f"C1 at {result.details['dps']} digits, seed {result.details['seed']} (squares: L)", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = Path(out_dir) / "c1_digits.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path.name


_CLAIMS = (
    ("C1", "the closed forms of θ̂∞ and L agree with direct quadrature", _c1, ("certified", "high-precision"), False),
    ("C2", "the flow calibrates the label/feature scores", population_claim("C2"), ("certified",), False),
    ("C3", "the attention scale grows as t^{1/4}", population_claim("C3"), ("certified",), False),
    ("C4", "population threshold error is O(t^{-1/4}) in the interior", population_claim("C4"), ("certified",),
     False),
    ("C5", "finite-corpus gradient error stays below the progress direction up to a scale growing with m ∧ n",
     "stumpcheck.claims.c5:check_c5", ("certified",), False),
    ("C6", "frozen-estimator error is Õ((m ∧ n)^{-1} + N^{-1}) at interior θ", "stumpcheck.claims.boundary:check_c6",
     ("sampled",), True),
    # C7, C8: the population part proved for every b >= b0, the fresh-context part sampled; C9 proved on its corpus
    ("C7", "the one-head model has a boundary limitation", "stumpcheck.claims.boundary:check_c7",
     ("certified", "sampled"), True),
    ("C8", "a reflected symmetrization removes the boundary limitation", "stumpcheck.claims.boundary:check_c8",
     ("certified", "sampled"), True),
    ("C9", "constant-step GD is a descent method below a computed step bound", "stumpcheck.claims.c9:check_c9",
     ("certified", "sampled"), False),
)

for _id, _statement, _check, _evidence, _scheduler in _CLAIMS:
    register(ClaimCheck(name=_id, statement=_statement, check=_check, reference=f"docs/model.md §7 {_id}",
                        evidence=_evidence, takes_scheduler=_scheduler))

# ---------------------------------------------------------------------------------------------
# lemmas from theory/


@functools.cache
def _right_layer_function():
    import sympy as sp

    from stumpcheck.theory import asymptotics as asy
    from stumpcheck.theory.symbols import eps, r, v

    return sp.lambdify((eps, asy.Y, r, v), asy.right_layer_error(), modules="mpmath")


sympy_lemma(name="bulk_error",
            statement="|b·e(θ) − 1| ≤ (v + u·r)e^{−v}/(1 − e^{−v}) for θ ∈ [0.05, 0.95] "
                      "(v = b(1−θ), u = bθ, r = e^{b−a})",
            domain={"b": sc.scales(min_value=1.0, max_value=300.0),
                    "excess": st.floats(min_value=-20.0, max_value=30.0),
                    "theta": sc.thresholds(min_value=0.05, max_value=0.95)},
            margin=stated_margin("bulk_error"), evidence=("certified", "high-precision", "sampled"),
            certify=spec_for("bulk_error"),
            reference="stumpcheck.theory.margin_identities.stated_bulk_margin (exact bound, see module doc)",
            tolerance="margin 1 − |b e − 1| / bound >= 0", max_examples=60)


sympy_lemma(name="right_layer",
            statement="|e(θ) − e_R(θ)| ≤ 2e^{−bθ}·r(v + rb)/(b(Y − 1 + r)²) for θ ∈ [1/2, 1], a ≥ b, b ≥ 2 "
                      "(e_R: the derived right-boundary-layer form)",
            domain={"b": sc.scales(min_value=2.0, max_value=300.0),
                    "excess": st.floats(min_value=0.0, max_value=30.0),
                    "theta": sc.thresholds(min_value=0.5, max_value=1.0)},
            margin=stated_margin("right_layer"), evidence=("certified", "high-precision", "sampled"),
            certify=spec_for("right_layer"),
            reference="stumpcheck.theory.margin_identities.stated_right_layer_margin; stumpcheck.theory.asymptotics.right_layer_error",
            tolerance="margin 1 − |e − e_R| / bound >= 0", max_examples=60)


#: the sampled domain of the lemmas along the calibration relation: b, and lam = 0 (on the relation)
_ON_RELATION = {"b": sc.scales(min_value=20.0, max_value=1e4), "lam": st.just(0.0)}

sympy_lemma(name="leading_loss",
            statement=f"along the calibration relation, |L/(1/(2b²) + (1/2 − ζ(3))/b³) − 1| ≤ {LOSS_K}/b² "
                      "for b ∈ [20, 10⁴]",
            domain=dict(_ON_RELATION), margin=builtin_margin("leading_loss"), evidence=("certified", "sampled"),
            reference="stumpcheck.theory.asymptotics.flow_asymptotics().leading_loss", certify=spec_for("leading_loss"),
            tolerance=f"margin = {LOSS_K} − b²·|L/leading_loss(b) − 1| >= 0", max_examples=40)


sympy_lemma(name="progress_direction",
            statement=f"along the calibration relation, −∇L = (1/(2b³), 1/(2b³))·(1 + O(1/b)): "
                      f"max_i |2b³(−∇L)_i − 1| ≤ {PROGRESS_K}/b for b ∈ [20, 10⁴]",
            domain=dict(_ON_RELATION), margin=builtin_margin("progress_direction"),
            evidence=("certified", "sampled"), reference="stumpcheck.theory.asymptotics.flow_asymptotics().progress_direction",
            certify=spec_for("progress_direction"),
            tolerance=f"margin = {PROGRESS_K} − b·max_i |2b³(−∇L)_i − 1| >= 0", max_examples=40)


def _interior_boxes(quick: bool = True):
    """(a, b, θ) boxes around the calibration relation: a ∈ [a*(b_lo) − 1, a*(b_hi) + 1] (ends rounded outward)."""
    from stumpcheck.numerics.generated import asymptotics_numpy as derived

    starts = (20, 100, 1000) if quick else (20, 30, 50, 100, 200, 500, 1000, 3000, 10000)
    boxes = []
    for b_lo in starts:
        b_hi = b_lo + 1
        a_lo = math.floor((float(derived.calibration_a(b_lo)) - 1) * 1000) / 1000
        a_hi = math.ceil((float(derived.calibration_a(b_hi)) + 1) * 1000) / 1000
        boxes.append(((f"{a_lo:.3f}", f"{a_hi:.3f}"), (str(b_lo), str(b_hi)), ("0.05", "0.95")))
    return boxes


def certify_interior_error_bound(*, quick: bool = True, dps: int = 30, max_boxes: int = 5000):
    """Certificates of |e(θ)| ≤ INTERIOR_C/b (``error_abs_le_c_over_b``) on :func:`_interior_boxes`."""
    from stumpcheck.numerics.certified.proofs.box_prover import Box, certify

    return [certify("error_abs_le_c_over_b", Box(a=a, b=b, theta=theta), params={"c": str(INTERIOR_C)}, dps=dps,
                    max_boxes=max_boxes) for a, b, theta in _interior_boxes(quick)]


sympy_lemma(name="interior_error_bound",
            statement=f"|e(θ)| ≤ {INTERIOR_C}/b for θ ∈ [0.05, 0.95] and |a − a*(b)| ≤ 1 "
                      "(a*(b) = b + 2 log b − ρ₁/b, the calibration relation)",
            domain={"b": sc.scales(min_value=20.0, max_value=1e4),
                    "lam": st.floats(min_value=-1.0, max_value=1.0),
                    "theta": sc.thresholds(min_value=0.05, max_value=0.95)},
            margin=builtin_margin("interior_error_bound"), evidence=("certified", "sampled"),
            reference="stumpcheck.lemmas.certified_builtins (margin 2 − b|e| over the whole domain); theory bulk law e = 1/b",
            certify=spec_for("interior_error_bound"), tolerance=f"margin = {INTERIOR_C} − b|e| >= 0", max_examples=200)


def attention_average(scores, x):
    """θ̂ = Σ softmax(s)ᵢ xᵢ at the current mpmath precision, scores shifted by their maximum."""
    top = max(scores)
    weights = [mpmath.exp(s - top) for s in scores]
    return mpmath.fsum(w * xi for w, xi in zip(weights, x)) / mpmath.fsum(weights)


@lemma(name="label_encoding",
       statement="θ̂ with labels in {−1, +1} and label score a/2 equals θ̂ with labels in {0, 1} and label score a "
                 "(any context; certified: a SymPy proof for every context size n)",
       domain={"x": st.lists(sc.thresholds(), min_size=1, max_size=64),
               "theta": sc.thresholds(),
               "a": st.floats(min_value=-200.0, max_value=200.0),
               "b": sc.scales(min_value=1e-2, max_value=1e4)},
       evidence=("certified", "sampled"), certify=symbolic(prove_label_encoding),
       reference="docs/model.md §1 (labels; softmax ignores a common shift); "
                 "stumpcheck.lemmas.certified_builtins.prove_label_encoding",
       tolerance="|θ̂_{0,1} − θ̂_{±1}| <= 10^{-(dps−5)} at the working mpmath precision", max_examples=100,
       precision="mpmath at the working dps (30 by default)")
def label_encoding(x, theta, a, b):
    """10^{5−dps} − |θ̂(a·y − b·x) − θ̂((a/2)(2y − 1) − b·x)| with y = 1{x ≥ θ}, in mpmath."""
    A, B = mpmath.mpf(a), mpmath.mpf(b)
    xs = [mpmath.mpf(xi) for xi in x]
    labels = [1 if xi >= theta else 0 for xi in x]
    zero_one = attention_average([A * y - B * xi for y, xi in zip(labels, xs)], xs)
    plus_minus = attention_average([(A / 2) * (2 * y - 1) - B * xi for y, xi in zip(labels, xs)], xs)
    return float(mpmath.mpf(10) ** (5 - mpmath.mp.dps) - abs(zero_one - plus_minus))


@st.composite
def _sizes_and_scales(draw):
    """{n, b}: n from ALONG_SIZES, b ∈ [8, n/8] (log-uniform draws of the scales strategy)."""
    n = draw(st.sampled_from(ALONG_SIZES))
    return {"n": n, "b": draw(sc.scales(min_value=8.0, max_value=n / 8.0))}


@lemma(name="progress_along_error",
       statement="for m = n ∈ {256, 512, …, 4096} and b ∈ [8, n/8], a = a_cal(b): the rms over "
                 f"{len(ALONG_SEEDS)} fixed corpora per n (seed set {ALONG_SEEDS}) of "
                 "along = (∇L̂ − ∇L)·u/‖∇L‖, u = −∇L/‖∇L‖, is ≤ 1/2 (C5's progress criterion)",
       domain=lambda: _sizes_and_scales(),
       evidence=("sampled",), reference="docs/model.md §7 C5; stumpcheck.claims.c5.along_rms_on_relation",
       tolerance="margin = 1/2 − rms over seeds of along >= 0", max_examples=4,
       precision="float64 (corpus gradient: pruned path; ∇L: Gauss–Legendre on the model's breakpoints)")
def progress_along_error(n, b):
    """½ − rms over ALONG_SEEDS of along at (a_cal(b), b) on make_corpus(n, n, ·) corpora (float64)."""
    from stumpcheck.claims.c5 import ALONG_LIMIT, along_rms_on_relation

    return ALONG_LIMIT - along_rms_on_relation(n, b, seeds=ALONG_SEEDS)
