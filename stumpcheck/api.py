"""The public API: a curated, stable set of names by topic, also importable from :mod:`stumpcheck`.

* the model's quantities at any precision: :func:`error` e(θ), :func:`error_gradient` ∇e, :func:`loss` L,
  :func:`loss_gradient` ∇L, :func:`loss_hessian` ∇²L;
* certified enclosures: :func:`certified_error`, :func:`certified_loss`, :func:`certified_loss_gradient`,
  :func:`certified_loss_hessian`, balls of class :class:`Enclosure` (too wide: :class:`EnclosureTooWide`);
* the flow dz/dt = −∇L(z): :func:`integrate_flow`, the entry point (:class:`FlowSolution`, :class:`FlowStatus`,
  :class:`StiffnessWarning`), :func:`run_population_flow` (its solve with the diagnostics and fits,
  :class:`FlowRun`), :func:`certified_flow` (the certified tube's enclosures, :class:`CertifiedFlow`);
* corpora, training, fresh contexts: :class:`Corpus`, :func:`make_corpus`, :func:`load_corpus`,
  :func:`save_corpus`, :func:`train_gd` (:class:`TrainResult`), :func:`certify_training` (:class:`CertifiedTraining`:
  the exact GD iterates of a run enclosed step by step), :func:`fresh_context_errors` (:class:`FreshResult`),
  and without sampling :func:`fresh_context_risk` (:class:`FreshRisk`: certified bias, MSE and a mean-error bracket);
* lemmas: :func:`lemma`, :func:`sympy_lemma`, :class:`Lemma`, :func:`load_lemma` (define), :func:`check_lemma`
  (check), :func:`certified`, :func:`symbolic`, :class:`Margin`, :class:`Domain` (certify), :func:`recheck`
  (:class:`RecheckResult`);
* claims: :func:`check_c1` … :func:`check_c9`, each a :class:`ClaimResult`;
* exports: :func:`results` (the SymPy results), :func:`export` (their files); a user's own expressions:
  :func:`to_numpy`, :func:`to_mpmath`, :func:`to_arb`, :func:`to_jax`, :func:`to_latex`, :func:`split_latex`;
* plots and files: :func:`plot_flow`, :func:`plot_error_profile`, :func:`plot_training`, :func:`plot_claim`
  (matplotlib figures), :func:`write_flow_outputs`, :func:`write_training_outputs` (files); errors:
  :class:`InputError`.

The results (:class:`FlowSolution`, :class:`FlowRun`, :class:`TrainResult`, :class:`FreshResult`,
:class:`ClaimResult`) show themselves briefly: a ``repr`` of a few lines (status and key figures, the shapes
of arrays, never their values) and, in a notebook, a small HTML table; ``to_dict()`` is JSON-ready, and those
with rows have ``to_csv(path)`` and ``to_dataframe()`` (pandas, optional); an :class:`Enclosure`'s ``repr``
gives its mid and rad at full precision (docs/api.md lists which result has which).

**One precision convention**: ``dps``, the number of significant *decimal digits*, a keyword-only int in
[15, 10000] (``None`` where float64 is an option: the flows, and the model's quantities, which then take
numpy arrays). It is mpmath's user-facing convention
(``mp.dps``, ``workdps``), the command line's ``--dps`` and the ``dps`` a certificate records, so one
number means the same everywhere; Arb's working bits (⌈dps·log₂10⌉ plus guard bits) are derived from it
internally. Every ``dps`` is validated before any work (0, −3, 10⁷, 15.5, ``True`` or ``"30"``: an
:class:`InputError` naming ``dps`` and the range) and scoped: a function here neither reads nor changes
the global ``mpmath.mp`` precision (it works inside ``mpmath.workdps``, restored on exit, also on error),
and mpmath results come back as :class:`mpmath.mpf` rounded to ``dps`` digits. Arguments with defaults
are keyword-only and checked up front (as Hypothesis's API style guide asks).

The functions defined here apply the convention and call the engine their docstring names; every other
name is the engine's own object, re-exported lazily (importing this module loads no numeric library).
Anything not in this ``__all__`` (or a subpackage's ``__all__``) is private by convention.

    >>> import mpmath
    >>> from stumpcheck.api import certified_error, error, fresh_context_errors, make_corpus, train_gd
    >>> value = error(25, 20, "0.95", dps=30)                      # an mpf rounded to 30 digits
    >>> ball = certified_error(25, 20, "0.95", dps=30)              # a ball that contains e(θ)
    >>> bool(abs(value - ball.mid) <= 1e-29 * abs(ball.mid)), mpmath.mp.dps
    (True, 15)
    >>> corpus = make_corpus(8, 16, seed=0)                         # 8 tasks of 16 points, float64
    >>> trained = train_gd(corpus.x, corpus.theta, steps=50)       # 50 gradient steps on the corpus loss
    >>> trained.steps, bool(trained.loss < trained.trajectory["loss"][0])
    (50, True)
    >>> fresh = fresh_context_errors(trained.a, trained.b, 0.5, 64, reps=100)   # 100 fresh contexts, N = 64
    >>> bool(fresh.ci_low <= fresh.mean_abs_error <= fresh.ci_high)
    True
"""

from __future__ import annotations

import numbers

from stumpcheck.numerics.lazy import lazy_exports
from stumpcheck.numerics.precision import MAX_DPS, MIN_DPS, InputError

__all__ = [
    "error", "error_gradient", "loss", "loss_gradient", "loss_hessian",  # the model's quantities
    "certified_error", "certified_loss", "certified_loss_gradient", "certified_loss_hessian",  # certified
    "Enclosure", "EnclosureTooWide",
    "integrate_flow", "FlowSolution", "FlowStatus", "StiffnessWarning", "run_population_flow", "FlowRun",  # flow
    "certified_flow", "CertifiedFlow",
    "Corpus", "make_corpus", "load_corpus", "save_corpus", "train_gd", "TrainResult",  # corpora, training
    "certify_training", "CertifiedTraining", "fresh_context_errors", "FreshResult", "fresh_context_risk", "FreshRisk",
    "lemma", "sympy_lemma", "Lemma", "load_lemma", "check_lemma", "certified", "symbolic", "Margin",  # lemmas
    "Domain", "recheck", "RecheckResult",
    "check_c1", "check_c2", "check_c3", "check_c4", "check_c5", "check_c6", "check_c7", "check_c8", "check_c9",
    "ClaimResult",  # claims
    "results", "export", "to_numpy", "to_mpmath", "to_arb", "to_latex",  # exports and a user's expressions
    "to_jax", "split_latex",
    "plot_flow", "plot_error_profile", "plot_training", "plot_claim",  # plots and files
    "write_flow_outputs", "write_training_outputs",
    "InputError",
]

_ENCLOSURES = "stumpcheck.numerics.certified.enclosures"
_LAZY = {
    "Enclosure": _ENCLOSURES, "EnclosureTooWide": _ENCLOSURES, "FreshRisk": _ENCLOSURES,
    "CertifiedFlow": "stumpcheck.numerics.certified.tube.flow_enclosures",
    **dict.fromkeys(["FlowSolution", "FlowStatus", "StiffnessWarning", "FlowRun", "write_flow_outputs"],
                    "stumpcheck.numerics.flow"),
    **dict.fromkeys(["Corpus", "make_corpus", "load_corpus", "save_corpus", "train_gd", "TrainResult",
                     "fresh_context_errors", "FreshResult", "write_training_outputs"], "stumpcheck.numerics.corpus"),
    **dict.fromkeys(["lemma", "sympy_lemma", "symbolic", "Lemma", "load_lemma"], "stumpcheck.lemmas"),
    **dict.fromkeys(["certify_training", "CertifiedTraining"], "stumpcheck.numerics.corpus.certified_run"),
    "Margin": "stumpcheck.numerics.certified.proofs.margins", "Domain": "stumpcheck.numerics.certified.proofs.domains",
    "RecheckResult": "stumpcheck.numerics.certified.certificates.lemma_recheck",
    **dict.fromkeys([f"check_c{k}" for k in range(2, 10)] + ["ClaimResult"], "stumpcheck.claims"),
    "results": "stumpcheck.theory.catalogue",
    **dict.fromkeys(["to_numpy", "to_mpmath", "to_arb", "to_latex", "to_jax", "split_latex"],
                    "stumpcheck.theory.evaluate"),
    "plot_flow": "stumpcheck.numerics.flow.report", "plot_training": "stumpcheck.numerics.corpus.training_report",
    "plot_error_profile": "stumpcheck.numerics.population.error_profile", "plot_claim": "stumpcheck.claims.figures",
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)


def _shown(value) -> str:
    return repr(value)[:40].replace("\n", " ")


def _dps(dps, *, float64: bool = False):
    """``dps`` as an int in [MIN_DPS, MAX_DPS] (or None with ``float64``), else InputError naming it."""
    if dps is None and float64:
        return None
    if isinstance(dps, bool) or not isinstance(dps, numbers.Integral) or not MIN_DPS <= dps <= MAX_DPS:
        allowed = " or None (float64)" if float64 else ""
        raise InputError(f"dps must be an int number of decimal digits in [{MIN_DPS}, {MAX_DPS}]{allowed}, "
                         f"got {_shown(dps)}")
    return int(dps)


def _scoped(digits, function, /, *args, **kwargs):
    """``function(*args, **kwargs)`` under ``mpmath.workdps(digits)`` (53 bits for None: float64 work)."""
    import mpmath

    with (mpmath.workprec(53) if digits is None else mpmath.workdps(digits)):
        return function(*args, **kwargs)


def _engine(module: str, name: str):
    from importlib import import_module

    return getattr(import_module(module), name)


_QUANTITIES = "stumpcheck.numerics.population.quantities"
_BROADCAST = "stumpcheck.numerics.population.broadcast"
_VERIFIED = "stumpcheck.numerics.certified.enclosures.verified_integrals"

# --- the model's quantities at any precision ----------------------------------------------------------


def error(a, b, theta, *, estimator: str = "one-head", dps: int = 30):
    """e(θ) = θ̂∞(a, b; θ) − θ, the population estimator's error at the threshold θ (docs/model.md §2).

    Domain: a finite, b > 0, θ ∈ [0, 1]; ``estimator``: ``"one-head"``, ``"reflected"``, ``"averaged"`` or
    ``"pooled"``. a, b, θ: numbers, :class:`mpmath.mpf` or decimal strings (θ as a string or
    :class:`~decimal.Decimal` is read exactly, so 1 − θ is exact near 1). Precision: the generated mpmath
    code at ``dps`` digits (plus the bits that resolve 1 − θ), an :class:`mpmath.mpf` rounded to ``dps``
    digits; not a bound (:func:`certified_error` is). ``dps=None``: float64, and a, b, θ may be numpy arrays
    (broadcast; a ``numpy.float64`` or an array back). Engine:
    :func:`stumpcheck.numerics.population.quantities.error` (float64:
    :func:`stumpcheck.numerics.population.broadcast.error_float64`).

        >>> import mpmath, numpy
        >>> from stumpcheck.api import error
        >>> mpmath.nstr(error(25, 20, "0.95", dps=30), 25)
        '0.01730411415985853363604594'
        >>> error(numpy.array([10.0, 20.0]), 10.0, 0.3, dps=None).round(6)
        array([0.099088, 0.099361])
    """
    dps = _dps(dps, float64=True)
    if dps is None:
        return _engine(_BROADCAST, "error_float64")(a, b, theta, estimator=estimator)
    return _scoped(dps, _engine(_QUANTITIES, "error"), a, b, theta, estimator=estimator)


def error_gradient(a, b, theta, *, estimator: str = "one-head", dps: int = 30):
    """∇e(θ) = (∂e/∂a, ∂e/∂b) at (a, b; θ), a tuple of two :class:`mpmath.mpf`; domain and precision as
    :func:`error` (``dps=None``: two float64 values or arrays). Engine:
    :func:`stumpcheck.numerics.population.quantities.error_gradient` (float64:
    :func:`stumpcheck.numerics.population.broadcast.error_gradient_float64`).

        >>> import mpmath
        >>> from stumpcheck.api import error_gradient
        >>> [mpmath.nstr(g, 10) for g in error_gradient(25, 20, "0.5", dps=20)]
        ['1.529510667e-7', '-0.002488725462']
    """
    dps = _dps(dps, float64=True)
    if dps is None:
        return _engine(_BROADCAST, "error_gradient_float64")(a, b, theta, estimator=estimator)
    return _scoped(dps, _engine(_QUANTITIES, "error_gradient"), a, b, theta, estimator=estimator)


def loss(a, b, *, estimator: str = "one-head", prior=(0, 1), dps: int = 30):
    """L(a, b) = (u − l)⁻¹ ∫ₗᵘ ½ e(θ)² dθ, the population loss under the prior θ ~ Uniform[l, u].

    Domain: a finite, 0 < b ≤ 10⁸, ``prior`` = (l, u), 0 ≤ l < u ≤ 1. Precision: the certified enclosure
    (:func:`certified_loss`, Arb) at dps + 5 digits, returned as the :class:`mpmath.mpf` of the ``dps``-digit
    decimal both its ends round to (the correct rounding; raised to twice the digits where the ball does not
    fix it); only where no ball fixes the digits (a prior whose ends are not exact binary numbers) the
    tanh-sinh quadrature at ``dps`` digits plus guard bits, not verified. Cached on exact inputs: a repeated
    call is free. ``dps=None``: float64 Gauss–Legendre, a and b may be numpy arrays (broadcast, b ≥ 10⁻³).
    Engine: :func:`stumpcheck.numerics.certified.enclosures.verified_integrals.loss` (float64:
    :func:`stumpcheck.numerics.population.broadcast.loss_float64`).

        >>> import mpmath
        >>> from stumpcheck.api import loss
        >>> mpmath.nstr(loss(10, 10, dps=15), 10)
        '0.0200022701'
    """
    return _integral("loss", a, b, estimator, prior, dps)


def loss_gradient(a, b, *, estimator: str = "one-head", prior=(0, 1), dps: int = 30):
    """∇L(a, b) = (u − l)⁻¹ ∫ₗᵘ e ∇e dθ, a tuple (∂L/∂a, ∂L/∂b) of :class:`mpmath.mpf`; domain and
    precision as :func:`loss` (each component verified by its own enclosure). Engine:
    :func:`stumpcheck.numerics.certified.enclosures.verified_integrals.loss_gradient`.

        >>> import mpmath
        >>> from stumpcheck.api import loss_gradient
        >>> [mpmath.nstr(g, 8) for g in loss_gradient(10, 10, prior=(0.25, 0.75), dps=15)]
        ['0.00056333932', '-0.0010371387']
    """
    return _integral("loss_gradient", a, b, estimator, prior, dps)


def loss_hessian(a, b, *, estimator: str = "one-head", prior=(0, 1), dps: int = 30):
    """∇²L(a, b) = (u − l)⁻¹ ∫ₗᵘ (∇e ∇eᵀ + e ∇²e) dθ, a tuple (∂²L/∂a², ∂²L/∂a∂b, ∂²L/∂b²) of
    :class:`mpmath.mpf`; domain and precision as :func:`loss`. Engine:
    :func:`stumpcheck.numerics.certified.enclosures.verified_integrals.loss_hessian`.

        >>> import mpmath
        >>> from stumpcheck.api import loss_hessian
        >>> [mpmath.nstr(h, 6) for h in loss_hessian(10, 10, prior=(0.25, 0.75), dps=15)]
        ['-0.000243416', '7.64775e-5', '0.000159922']
    """
    return _integral("loss_hessian", a, b, estimator, prior, dps)


def _integral(name: str, a, b, estimator: str, prior, dps):
    """L, ∇L or ∇²L: verified digits at ``dps`` digits, float64 arrays for ``dps=None``."""
    dps = _dps(dps, float64=True)
    if dps is None:
        return _engine(_BROADCAST, f"{name}_float64")(a, b, estimator=estimator, prior=prior)
    return _scoped(dps, _engine(_VERIFIED, name), a, b, estimator=estimator, prior=prior, dps=dps)


# --- certified enclosures ------------------------------------------------------------------------------

_ENCLOSURE_ENGINE = "stumpcheck.numerics.certified.enclosures"


def certified_error(a, b, theta, *, estimator: str = "one-head", dps: int = 30, rel_width=None):
    """A certified :class:`Enclosure` of e(θ) = θ̂∞(a, b; θ) − θ: a ball that provably contains it.

    ``theta``: a number, an exact decimal string, a ``flint.arb`` ball or an interval ``(lo, hi)`` ⊆ [0, 1]
    (the ball then holds for every θ in it); ``a`` and ``b`` may be balls too. Arb ball arithmetic at
    ⌈dps·log₂10⌉ + guard bits, raised while ``rel_width`` is missed. With ``rel_width`` the ball must have
    ``rad/|mid| ≤ rel_width``, else :class:`EnclosureTooWide` (a non-finite ball always raises it). Engine:
    :func:`stumpcheck.numerics.certified.enclosures.pointwise.certified_error`.

        >>> from stumpcheck.api import certified_error
        >>> print(certified_error(25, 20, "0.95", dps=30, rel_width=1e-25))  # doctest: +ELLIPSIS
        [0.017304114159858533636045942954... +/- ...e-32]
    """
    return _scoped(_dps(dps), _engine(_ENCLOSURE_ENGINE, "certified_error"), a, b, theta, estimator=estimator,
                   dps=dps, rel_width=rel_width)


def certified_loss(a, b, *, estimator: str = "one-head", dps: int = 30, rel_width=None):
    """A certified :class:`Enclosure` of L(a, b) = ∫₀¹ ½ e(θ)² dθ (prior Uniform[0, 1]): rigorous integration
    (Arb's ``acb.integral``) on the model's breakpoint pieces at ``dps`` digits, ``rel_width`` as in
    :func:`certified_error`. Engine: :func:`stumpcheck.numerics.certified.enclosures.theta_integrals.certified_loss`.

        >>> from stumpcheck.api import certified_loss
        >>> print(certified_loss(10, 10, dps=20, rel_width=1e-18))  # doctest: +ELLIPSIS
        [0.020002270099550...]
    """
    return _scoped(_dps(dps), _engine(_ENCLOSURE_ENGINE, "certified_loss"), a, b, estimator=estimator, dps=dps,
                   rel_width=rel_width)


def certified_loss_gradient(a, b, *, estimator: str = "one-head", dps: int = 30, rel_width=None):
    """Certified :class:`Enclosure` balls of ∇L(a, b) = ∫₀¹ e ∇e dθ, as (∂L/∂a, ∂L/∂b); as :func:`certified_loss`.
    Engine: :func:`stumpcheck.numerics.certified.enclosures.theta_integrals.certified_loss_gradient`.

        >>> from stumpcheck.api import certified_loss_gradient
        >>> d_a, d_b = certified_loss_gradient(10, 10, dps=20, rel_width=1e-15)
        >>> bool(d_a.upper < 0), bool(d_b.lower > 0)  # both signs are certain: a grows, b shrinks here
        (True, True)
    """
    return _scoped(_dps(dps), _engine(_ENCLOSURE_ENGINE, "certified_loss_gradient"), a, b, estimator=estimator,
                   dps=dps, rel_width=rel_width)


def certified_loss_hessian(a, b, *, estimator: str = "one-head", dps: int = 30, rel_width=None):
    """Certified :class:`Enclosure` balls of ∇²L(a, b) = ∫₀¹ (∇e ∇eᵀ + e ∇²e) dθ, as (L_aa, L_ab, L_bb); as
    :func:`certified_loss`. Engine:
    :func:`stumpcheck.numerics.certified.enclosures.theta_integrals.certified_loss_hessian`.

        >>> from stumpcheck.api import certified_loss_hessian
        >>> h_aa, h_ab, h_bb = certified_loss_hessian(10, 10, dps=20)
        >>> bool(h_aa.lower > 0)
        True
    """
    return _scoped(_dps(dps), _engine(_ENCLOSURE_ENGINE, "certified_loss_hessian"), a, b, estimator=estimator,
                   dps=dps, rel_width=rel_width)


# --- the flow ------------------------------------------------------------------------------------------



def fresh_context_risk(a, b, theta, N, *, estimator: str = "one-head", dps: int = 30, rel_width=None):
    """The exact fresh-context risk of a frozen (a, b): certified bias E[θ̂_N − θ], MSE E[(θ̂_N − θ)²] and the
    bracket ``|bias| ≤ E|θ̂_N − θ| ≤ √MSE``, for N i.i.d. points x ~ U[0, 1], without sampling (docs/fresh_risk.md).

    ``a``, ``b``: numbers, exact decimal strings, ``flint.arb`` balls or intervals ``(lo, hi)`` (the balls then
    hold for every point of the box); ``theta`` ∈ [0, 1]; ``N`` in [1, 10⁹]; ``estimator`` one-head, reflected
    or pooled (averaged: :class:`InputError`); ``rel_width`` the widest relative radius accepted (default: aim
    at 10^{−dps}, accept 10⁻⁸; else :class:`EnclosureTooWide`). Engine:
    :func:`stumpcheck.numerics.certified.enclosures.fresh_risk.fresh_context_risk`.

        >>> from stumpcheck.api import fresh_context_risk
        >>> risk = fresh_context_risk(25, 20, "0.4", 10, dps=15, rel_width=1e-10)
        >>> risk.bias.contains(0.10661634602645), risk.evidence
        (True, 'certified')
    """
    return _scoped(_dps(dps), _engine(_ENCLOSURE_ENGINE, "fresh_context_risk"), a, b, theta, N, estimator=estimator,
                   dps=dps, rel_width=rel_width)

def integrate_flow(a0, b0, t_max, *, rtol: float = 1e-9, atol=None, estimator: str = "one-head", solver=None,
                   error_goal=None, dps=None, save_every: int = 1, max_steps: int = 200_000, progress=None):
    """Integrate the population gradient flow dz/dt = −∇L(z), z = (a, b), from (a0, b0) to ``t_max``: the flow's
    entry point (docs/model.md §4.1).

    Solved in s = log(1 + t) by a stiff solver with the exact Jacobian (float64: scipy's LSODA, Radau below its
    smallest rtol; at ``dps`` digits: extrapolated linearly implicit Euler), then again at rtol/10: the largest
    relative difference in b is ``a_posteriori_rel_error_b`` (an estimate, not a bound; above ``error_goal``,
    default rtol, the status says so). The final a, b are in ``settings["final_a"]``, ``settings["final_b"]``
    as decimals to the digits the two solves earn, with their estimated errors ``final_a_error``,
    ``final_b_error``. Domain: −10⁶ ≤ a0 ≤ 10⁶, 0 < b0 ≤ 10⁵, 10⁻¹⁰⁰ ≤ t_max ≤ 10²¹. Precision: ``dps=None``
    solves in float64 (rtol ≥ 10⁻¹³), an int at ``dps`` digits (slower), where rtol may go down to
    10^(2 − dps): the digits earned follow rtol, not ``dps`` (from (10, 10) at dps=30: b(10⁶) to 8 digits at the
    default rtol 10⁻⁹, in about a minute of CPU; b(100) to 24 digits at rtol 10⁻²⁵ in 75 s: docs/model.md §4.1). A
    :class:`FlowSolution` of float64 arrays t, a, b, L, ∇L. :func:`certified_flow` encloses the same flow. Engine:
    :func:`stumpcheck.numerics.flow.integrate.integrate_flow`.

        >>> from stumpcheck.api import integrate_flow
        >>> solution = integrate_flow(10.0, 10.0, 100.0)
        >>> solution.status.ok, bool(solution.b[-1] < 10 < solution.a[-1])
        (True, True)
    """
    dps = _dps(dps, float64=True)
    return _scoped(dps, _engine("stumpcheck.numerics.flow.integrate", "integrate_flow"), a0, b0, t_max, rtol=rtol,
                   atol=atol, estimator=estimator, solver=solver, error_goal=error_goal, dps=dps,
                   save_every=save_every, max_steps=max_steps, progress=progress)


def run_population_flow(a0, b0, t_max, *, rtol: float = 1e-9, estimator: str = "one-head", solver=None,
                        dps=None, per_decade: int = 8, fit_from=None, check: bool = True, progress=None):
    """The solve of :func:`integrate_flow` (the same engine, defaults and check) at log-spaced times, with the
    diagnostics and fits of C2–C4: a :class:`FlowRun`.

    At ``per_decade`` log-spaced times a decade: a, b, L, ∇L, sup over interior θ of ``|e(θ)|``, the calibration
    residual a − (b + 2 log b − ρ₁/b); their rates fitted from ``fit_from`` (default 10⁶ when t_max ≥ 10⁸,
    else three decades below t_max); with ``check`` the rtol/10 solve's ``a_posteriori_rel_error_b`` and the
    final a, b to the digits the two solves earn (``stats["final_a"]``, ``stats["final_b"]``). The input of
    :func:`write_flow_outputs` and of C2–C4. Domain and ``dps`` as :func:`integrate_flow`. Engine:
    :func:`stumpcheck.numerics.flow.run.run_population_flow`.

        >>> from stumpcheck.api import run_population_flow
        >>> run = run_population_flow(10.0, 10.0, 100.0)
        >>> run.status.ok, len(run.t) == len(run.sup_error_interior)
        (True, True)
    """
    dps = _dps(dps, float64=True)
    return _scoped(dps, _engine("stumpcheck.numerics.flow.run", "run_population_flow"), a0, b0, t_max, rtol=rtol,
                   estimator=estimator, solver=solver, dps=dps, per_decade=per_decade, fit_from=fit_from,
                   check=check, progress=progress)


def certified_flow(a0, b0, t_max, *, dps: int = 15, time_limit=None, workers: int = 1, progress=None):
    """Enclose the flow dz/dt = −∇L(z) from (a0, b0) to ``t_max`` by the certified tube: a :class:`CertifiedFlow`.

    Its ``a`` and ``b`` are :class:`Enclosure` balls that provably contain a(T) and b(T) (evidence *certified*:
    docs/certified_flow.md), ``at(t)`` those of z(t) for any t the tube covers, ``certificate()`` the flow
    certificate that ``stumpcheck recheck`` re-verifies. Domain: 10⁻¹² ≤ t_max ≤ 10¹². ``dps``: digits of the
    tube's Arb fallbacks, in [15, 40] (its float64 interval layer is rounded outward whatever ``dps``). Cost:
    from (10, 10) to T = 10⁶ about 15 s of CPU (b(T) to a relative width of about 3·10⁻¹⁰), more the first time
    (numba compiles the fast Hessian once). ``time_limit``: seconds, after which the tube stops incomplete
    (``complete`` False, ``a`` and ``b`` None, ``valid_to_t`` where it stopped). Engine:
    :func:`stumpcheck.numerics.certified.tube.flow_enclosures.certified_flow`.

        >>> from stumpcheck.api import certified_flow
        >>> flow = certified_flow(10.0, 10.0, 1.0)
        >>> flow.complete, bool(flow.b.lower < 10 < flow.a.lower)
        (True, True)
    """
    dps = _dps(dps)
    if dps > 40:
        raise InputError(f"dps must be at most 40 for the certified tube (its Arb fallbacks), got {dps}")
    return _engine("stumpcheck.numerics.certified.tube.flow_enclosures", "certified_flow")(
        a0, b0, t_max, dps=int(dps), time_limit=time_limit, workers=workers, progress=progress)


# --- lemmas: define, check, certify, recheck ----------------------------------------------------------


def certified(margin, domain, *, strict: bool = False, quick_domain=None, dps: int = 30, identity=None,
              **prove_options):
    """The ``certify=`` of a lemma proved on its whole domain: margin ≥ 0 (``strict``: > 0) at every point.

    ``margin``: a :class:`Margin` (``Margin.from_sympy("b - 1", coordinates="abtheta")``), or ``None`` in a
    :func:`sympy_lemma` (its own); ``domain``: a :class:`Domain` with exact decimal ends; either may be a
    zero-argument callable. The proof bisects the domain until Arb encloses the margin ≥ 0 on every box at
    ``dps`` digits, and writes a certificate that :func:`recheck` re-checks. ``prove_options``:
    ``max_boxes``, ``max_depth``, ``min_width``, ``b_ratio``, ``workers``. Engine:
    :func:`stumpcheck.lemmas.definitions.certified`.

        >>> from stumpcheck.api import Domain, certified
        >>> spec = certified(None, Domain({"a": ("0", "1"), "b": ("2", "3")}, coordinates="abtheta"), dps=20)
        >>> spec.dps, spec.strict
        (20, False)
    """
    dps = _dps(dps)
    try:
        return _engine("stumpcheck.lemmas.definitions", "certified")(
            margin, domain, strict=strict, quick_domain=quick_domain, dps=dps, identity=identity, **prove_options)
    except ValueError as exc:  # the engine's checks of strict and prove_options: InputError, as everywhere here
        raise InputError(str(exc)) from None


def check_lemma(entry, *, level: str = "sampled", max_examples=None, seed: int = 0, dps: int = 30, out_dir=None,
                quick: bool = True):
    """Check that a :class:`Lemma`'s margin is ≥ 0 on its domain at evidence ``level``, a :class:`ClaimResult`.

    ``"sampled"``: a seeded Hypothesis search (``max_examples``, ``seed``) for a point with margin < 0, the
    margins at ``dps`` digits; PASS gives the smallest margin, FAIL the shrunk counterexample.
    ``"high-precision"``: also the margin at the worst point at dps + 10 + dps // 10 digits.
    ``"certified"``: the proof of its :func:`certified` spec on the whole domain (at the spec's ``dps``),
    ``<name>.certificate.json`` written to ``out_dir``. A FAIL is a result, not an exception. Engine:
    :func:`stumpcheck.lemmas.check.check_lemma`.

        >>> from hypothesis import strategies as st
        >>> from stumpcheck.api import check_lemma, lemma
        >>> @lemma(name="square", statement="x² ≥ 0", domain={"x": st.floats(-10, 10)}, register_it=False)
        ... def square(x):
        ...     return x * x
        >>> result = check_lemma(square, max_examples=20)
        >>> result.status, result.evidence
        ('PASS', 'sampled')
    """
    dps = _dps(dps)
    return _scoped(dps, _engine("stumpcheck.lemmas.check", "check_lemma"), entry, level=level,
                   max_examples=max_examples, seed=seed, dps=dps, out_dir=out_dir, quick=quick)


def recheck(path, *, dps=None, points: str = "corners", allow_python: bool = False):
    """Re-check a certificate file independently of the proof that wrote it, a :class:`RecheckResult`.

    A lemma certificate (:func:`check_lemma` at level certified): the leaves tile the stated domain (exact
    rationals), each leaf's margin is enclosed again with lower end ≥ 0 (> 0 if strict), the recorded
    enclosures contain the margin at each leaf's midpoint (and corners: ``points``). A ``stumpcheck
    certify`` certificate: its leaves cover the box and each predicate holds again. At ``dps`` digits,
    other than the certificate's (default: its + 10). ``allow_python`` runs a margin recorded as Python
    source (code: read it first). ``passed`` is the verdict, ``statement`` what the re-check derived; a bad
    file is an :class:`InputError`; flow certificates: the command ``stumpcheck recheck``. Engine:
    :func:`stumpcheck.numerics.certified.certificates.lemma_recheck.recheck`.

        >>> import tempfile
        >>> from hypothesis import strategies as st
        >>> from stumpcheck.api import Domain, Margin, certified, check_lemma, recheck, sympy_lemma
        >>> entry = sympy_lemma(name="b_above_one", statement="b − 1 ≥ 0 for b ∈ [2, 3]",
        ...     margin=Margin.from_sympy("b - 1", coordinates="abtheta"), domain={"b": st.floats(2, 3)},
        ...     certify=certified(None, Domain({"a": ("0", "1"), "b": ("2", "3")}, coordinates="abtheta")),
        ...     evidence=("certified",), register_it=False)
        >>> out = tempfile.mkdtemp()
        >>> check_lemma(entry, level="certified", out_dir=out).status
        'PASS'
        >>> result = recheck(f"{out}/b_above_one.certificate.json")
        >>> result.passed, result.statement
        (True, 'b - 1 >= 0 for every a ∈ [0, 1], b ∈ [2, 3] (abtheta coordinates; one-head estimator)')
    """
    from stumpcheck.numerics.certified.certificates.box_recheck import (is_box_certificate, recheck_bits,
                                                                         recheck_box_certificate)
    from stumpcheck.numerics.certified.certificates.lemma_certificate import read_certificate
    from stumpcheck.numerics.certified.certificates.lemma_recheck import POINTS, recheck as engine
    from stumpcheck.numerics.certified.certificates.limits import check_dps
    from stumpcheck.numerics.certified.tube.certificate import is_flow_certificate

    dps = None if dps is None else _dps(dps)
    if not isinstance(points, str) or points not in POINTS:
        raise InputError(f"points must be one of {', '.join(POINTS)}, got {_shown(points)}")
    if not isinstance(allow_python, bool):
        raise InputError(f"allow_python must be True or False, got {_shown(allow_python)}")
    document = read_certificate(path)
    if is_flow_certificate(document):
        raise InputError(f"{path}: a flow certificate; re-check it with the command `stumpcheck recheck`")
    try:
        recorded = check_dps(document.get("dps"))
        dps = recorded + 10 if dps is None else dps
        if dps == recorded:
            raise InputError(f"dps {dps} is the certificate's own precision; the re-check must run at another")
        box = is_box_certificate(document)
        bits = recheck_bits(document, dps)
        if box:
            return _scoped(dps, recheck_box_certificate, document, prec_bits=bits)
        return _scoped(dps, engine, document, prec_bits=bits, points=points, allow_python=allow_python)
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None


# --- claims and exports --------------------------------------------------------------------------------


def check_c1(*, samples: int = 12, seed: int = 0, dps: int = 30, loss_points=((10, 10), (25, 20)),
             loss_pieces=None, min_digits=None):
    """Claim C1: the derived θ̂∞ and L agree with their definitions, a :class:`ClaimResult`.

    At ``samples`` random (a, b, θ) (b log-uniform in [10⁻², 10⁴]) the generated e(θ) at ``dps`` digits is
    compared with a rigorous enclosure of the defining integrals, and L at ``loss_points`` with the
    certified θ-integral of the definition's closed form. Figure: the fewest agreeing digits; tolerance
    ≥ dps − 2 (or ``min_digits``); evidence certified when every pair of rigorous balls overlaps and is
    narrow enough. Engine: :func:`stumpcheck.claims.population.check_c1`.

        >>> from stumpcheck.api import check_c1
        >>> result = check_c1(samples=2, loss_points=(), dps=20)
        >>> result.id, result.status
        ('C1', 'PASS')
    """
    dps = _dps(dps)
    return _scoped(dps, _engine("stumpcheck.claims.population", "check_c1"), samples=samples, seed=seed, dps=dps,
                   loss_points=loss_points, loss_pieces=loss_pieces, min_digits=min_digits)


def export(out_dir, *, fmt: str = "all", names=None):
    """Write the SymPy results (:func:`results`) under ``out_dir``; the paths written.

    ``fmt``: ``"tex"`` (``tex/<name>.tex``, LaTeX), ``"json"`` (``json/<name>.json``, SymPy srepr), ``"py"``
    (``py/``: the generated mpmath, numpy and Arb modules the engines run) or ``"all"`` (with an index,
    README.md). The package's own generated code is left alone (the command ``stumpcheck export`` rewrites
    it). ``names``: a list of result names to write only those (``fmt`` ``"tex"`` or ``"json"``; an unknown
    name is an :class:`InputError` listing the known ones). Engine: :func:`stumpcheck.theory.export.export`.

        >>> import tempfile
        >>> from stumpcheck.api import export
        >>> paths = export(tempfile.mkdtemp(), fmt="tex")
        >>> sorted(p.name for p in paths)[:2]
        ['bulk_error.tex', 'calibration.tex']
    """
    from stumpcheck.theory.export import FORMATS

    if not isinstance(fmt, str) or fmt not in FORMATS:
        raise InputError(f"fmt must be one of {', '.join(FORMATS)}, got {_shown(fmt)}")
    return _engine("stumpcheck.theory.export", "export")(out_dir, fmt, names=names)
