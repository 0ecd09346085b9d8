"""The built-in lemmas as certified specs: a margin and a domain per lemma, and the symbolic proof of one.

:data:`CERTIFIED_SPECS` maps a lemma of :mod:`stumpcheck.lemmas.builtin` to
``(margin, domain, strict)`` (:class:`stumpcheck.numerics.certified.proofs.margins.Margin`,
:class:`stumpcheck.numerics.certified.proofs.domains.Domain`), the statement's own domain; :func:`quick_domain`
gives the representative sub-domain ``verify --quick`` proves, and :func:`certify_builtin` runs
:func:`stumpcheck.numerics.certified.proofs.margin_proof.prove` on either (long b ranges are first split geometrically).

* ``interior_error_bound``: 2 − b·|e| ≥ 0 for b ∈ [20, 10⁴], |lam| ≤ 1 (a = calibration_a(b) + lam),
  θ ∈ [0.05, 0.95];
* ``leading_loss``: 3 − b²·|L/leading_loss(b) − 1| ≥ 0 along the relation (lam = 0), b ∈ [20, 10⁴];
* ``progress_direction``: 5 − b·max_i |2b³(−∂_iL) − 1| ≥ 0 along the relation, b ∈ [20, 10⁴];
* ``bulk_error`` (θ ∈ [0.05, 0.95], b ∈ [1, 300], a = b + excess, excess ∈ [−20, 30]) and
  ``right_layer`` (θ ∈ [1/2, 1], b ∈ [2, 300], excess ∈ [0, 30]): their ratio margins cancel
  catastrophically in balls (b·e ≈ 1; the bulk margin is as small as 1e-21), so the proof has a
  symbolic part and an interval part (:mod:`stumpcheck.theory.margin_identities`). SymPy proves the identity
  stated margin = rewritten margin, a quotient of polynomials with positive coefficients in the atoms
  Z = e^v − 1, P = 1 − e^{−u}, R = 1 − 2e^{−u}, r = e^{−λ}, u, v, which is > 0 wherever P > 0 (and R > 0);
  Arb proves those atoms > 0 on every leaf box of the domain (the certified margin 1 − e^{−u}, resp.
  1 − 2e^{−u}, strict). The certificate records the identity (both sreprs, the signs, how each part was
  proved). The rewritten margin itself ranges from e^{−330} to 1 on these domains; a ball of e^x wider
  than log 2 loses its positive lower end, which is why bisection on it cannot cover the domains;
* ``label_encoding`` is proved symbolically (:func:`prove_label_encoding`): softmax is invariant
  under a common shift, so the {−1, +1} encoding with label score a/2 gives the same θ̂, for every
  context size n (symbolic sums), and checked again on n = 1, …, 6 explicit symbolic points.
"""

from __future__ import annotations

import time
from functools import cache

__all__ = ["CERTIFIED_NAMES", "IDENTITY_NAMES", "certified_specs", "quick_domain", "certify_builtin",
           "prove_label_encoding", "builtin_margin", "stated_margin",
           "PROOF_OPTIONS", "spec_for"]

CERTIFIED_NAMES = ("interior_error_bound", "leading_loss", "progress_direction", "bulk_error", "right_layer")
#: lemmas whose certified margin is the atom margin of a symbolic identity (stumpcheck.theory.margin_identities)
IDENTITY_NAMES = ("bulk_error", "right_layer")

#: prover options per lemma: geometric split ratio of b, box budget, digits, and whether --quick proves the
#: whole domain (else :func:`quick_domain`)
PROOF_OPTIONS = {
    # whole domain under --quick too: 4 551 boxes, about 6 s
    "interior_error_bound": {"ratio": 2.0, "max_boxes": 200_000, "quick_whole": True},
    # Taylor form of order 3 along b; the decisive boxes narrow like b^-1/2 (10 % wide at b = 20, 0.3 % at 10⁴):
    # 636 leaves (957 boxes, depth 3) over [20, 10⁴], 794 s CPU on a loaded machine (quick sub-domain: 1 box, 1.4 s)
    "leading_loss": {"ratio": 1.02, "max_boxes": 20_000, "parallel": True},
    # order 2: every 2 % piece is decisive: 314 leaves, depth 0, 414 s CPU on a loaded machine (quick: 1.5 s)
    "progress_direction": {"ratio": 1.02, "max_boxes": 20_000, "parallel": True},
    # whole domain under --quick too: the atom margins take about 100 and 13 boxes, under a second
    "bulk_error": {"ratio": 1.5, "max_boxes": 50_000, "dps": 30, "quick_whole": True},
    "right_layer": {"ratio": 1.5, "max_boxes": 50_000, "dps": 30, "quick_whole": True},
}

_MARGINS = {
    "interior_error_bound": ("2 - b*Abs(e)", "calibration", False),
    "leading_loss": ("3 - b**2*Abs(L/leading_loss(b) - 1)", "calibration", True),
    "progress_direction": ("5 - b*Max(Abs(-2*b**3*L_a - 1), Abs(-2*b**3*L_b - 1))", "calibration", True),
}

#: order of the Taylor form along b of the θ-integral margins (L: κ₄ allows 3; ∇L: ∂e/∂b has κ₂, so 2)
TAYLOR_ORDERS = {"leading_loss": 3, "progress_direction": 2}

_DOMAINS = {
    "interior_error_bound": ({"b": ("20", "10000"), "lam": ("-1", "1"), "theta": ("0.05", "0.95")}, "calibration"),
    "leading_loss": ({"b": ("20", "10000"), "lam": ("0", "0")}, "calibration"),
    "progress_direction": ({"b": ("20", "10000"), "lam": ("0", "0")}, "calibration"),
    "bulk_error": ({"b": ("1", "300"), "excess": ("-20", "30"), "theta": ("0.05", "0.95")}, "excess"),
    "right_layer": ({"b": ("2", "300"), "excess": ("0", "30"), "theta": ("0.5", "1")}, "excess"),
}

_QUICK = {
    "interior_error_bound": {"b": ("100", "120")},
    "leading_loss": {"b": ("20", "20.25")},
    "progress_direction": {"b": ("20", "20.25")},
    "bulk_error": {"b": ("20", "21"), "excess": ("0", "1"), "theta": ("0.45", "0.55")},
    "right_layer": {"b": ("20", "21"), "excess": ("0", "1"), "theta": ("0.9", "1")},
}


@cache
def certified_specs() -> dict:
    """{name: (margin, domain, strict)} for the certified built-in lemmas (built on first use)."""
    from stumpcheck.numerics.certified.proofs.domains import Domain
    from stumpcheck.numerics.certified.proofs.margins import Margin

    from stumpcheck.theory.margin_identities import identity_for

    specs = {}
    for name, (expr, coordinates, integral) in _MARGINS.items():
        variables, domain_coordinates = _DOMAINS[name]
        order = {"taylor_order": TAYLOR_ORDERS[name]} if integral else {}
        specs[name] = (Margin.from_sympy(expr, coordinates=coordinates, theta_integral=integral, name=name, **order),
                       Domain(dict(variables), domain_coordinates), False)
    for name in IDENTITY_NAMES:
        variables, domain_coordinates = _DOMAINS[name]
        specs[name] = (Margin.from_sympy(identity_for(name).atom_margin(), coordinates=domain_coordinates, name=name),
                       Domain(dict(variables), domain_coordinates), True)
    return specs


def __getattr__(name):
    if name == "CERTIFIED_SPECS":
        return certified_specs()
    raise AttributeError(name)


def quick_domain(name: str):
    """The representative sub-domain ``verify --quick`` proves for lemma ``name``."""
    from stumpcheck.numerics.certified.proofs.domains import Domain

    _, domain, _ = certified_specs()[name]
    return Domain({**domain.variables, **_QUICK[name]}, domain.coordinates)


def _workers(name: str) -> int:
    """Processes for lemma ``name``'s proof: up to 2 (the cores of the machine) for the θ-integral lemmas,
    whose whole domains take minutes; one for the others, which a process start would only slow down."""
    import os

    return min(2, os.cpu_count() or 1) if PROOF_OPTIONS[name].get("parallel") else 1


@cache
def builtin_margin(name: str):
    """The zero-argument callable returning lemma ``name``'s Margin (:data:`_MARGINS`, built on first use): the
    lemma's one margin, which its sampled search evaluates and its proof encloses."""
    def margin():
        return certified_specs()[name][0]

    return margin


@cache
def stated_margin(name: str):
    """The zero-argument callable returning the stated margin of ``bulk_error`` or ``right_layer`` (excess
    coordinates): the lemma's one margin; the proof encloses its rewritten atom margin, tied to it by the
    symbolic identity of :mod:`stumpcheck.theory.margin_identities` (whose stated margin must be this one)."""
    def margin():
        from stumpcheck.numerics.certified.proofs.margins import Margin
        from stumpcheck.theory import margin_identities as identities

        stated = {"bulk_error": identities.stated_bulk_margin,
                  "right_layer": identities.stated_right_layer_margin}[name]()
        return Margin.from_sympy(stated, coordinates=_DOMAINS[name][1], name=name)

    return cache(margin)


def spec_for(name: str):
    """The ``certify=`` of lemma ``name``: :func:`stumpcheck.lemmas.certified` over this module's margin and
    domain (built when first certified), with its quick sub-domain and prover options."""
    from stumpcheck.lemmas import certified

    options = PROOF_OPTIONS[name]
    quick = None if options.get("quick_whole") else (lambda: quick_domain(name))
    identity = None
    if name in IDENTITY_NAMES:
        def identity():
            from stumpcheck.theory.margin_identities import identity_for

            return identity_for(name).record()
    margin = (lambda: certified_specs()[name][0]) if name in IDENTITY_NAMES else builtin_margin(name)
    return certified(margin, lambda: certified_specs()[name][1],
                     strict=name in IDENTITY_NAMES, quick_domain=quick, dps=options.get("dps", 30),
                     identity=identity, max_boxes=options["max_boxes"], b_ratio=options["ratio"],
                     workers=_workers(name))


def certify_builtin(name: str, *, quick: bool = False, max_boxes: int | None = None, arithmetic: str = "fast"):
    """Prove lemma ``name`` on its domain (``quick``: on :func:`quick_domain`); returns the Proof. ``arithmetic``:
    "fast" (float64 θ-integrals where they apply, Arb per box where not) or "arb" (Arb alone), as for
    :func:`stumpcheck.numerics.certified.proofs.margin_proof.prove`."""
    from stumpcheck.numerics.certified.proofs.margin_proof import prove

    margin, domain, strict = certified_specs()[name]
    if quick:
        domain = quick_domain(name)
    options = PROOF_OPTIONS[name]
    return prove(margin, domain, strict=strict, dps=options.get("dps", 30), b_ratio=options["ratio"],
                 max_boxes=max_boxes or options["max_boxes"], workers=_workers(name), arithmetic=arithmetic)


def prove_label_encoding() -> dict:
    """A symbolic proof that θ̂ is the same for the {0, 1} labels with score a and the {−1, +1} labels with a/2.

    With y ∈ {0, 1} the {−1, +1} label is 2y − 1 and the scores are s'_i = (a/2)(2y_i − 1) − b x_i =
    s_i − a/2, s_i = a y_i − b x_i: a common shift (SymPy: s'_i − s_i simplifies to −a/2 for symbolic y_i).
    **General n**: with symbolic n and indexed x_i, y_i, θ̂(s') = Σ_{i≤n} e^{s'_i} x_i / Σ_{i≤n} e^{s'_i};
    each e^{s'_i} is expanded into e^{−a/2}·e^{a y_i}·e^{−b x_i} and the factor free of i taken out of
    both sums (SymPy's ``factor_sum``), and θ̂(s') − θ̂(s) simplifies to 0. **Cross-check**: the same
    difference for explicit contexts of n = 1, …, 6 symbolic points (x_i, y_i, a, b symbolic) simplifies to 0.
    """
    import sympy as sp
    from sympy.simplify.simplify import factor_sum

    started = time.perf_counter()
    a, b = sp.symbols("a b", real=True)
    y_one = sp.Symbol("y", real=True)
    shift = sp.simplify(a / 2 * (2 * y_one - 1) - b * sp.Symbol("x", real=True)
                        - (a * y_one - b * sp.Symbol("x", real=True)))
    n, i = sp.Symbol("n", integer=True, positive=True), sp.Symbol("i", integer=True, positive=True)
    x, y = sp.IndexedBase("x", real=True), sp.IndexedBase("y", real=True)

    def estimate(score):
        return sp.Sum(sp.exp(score) * x[i], (i, 1, n)) / sp.Sum(sp.exp(score), (i, 1, n))

    plus_minus = estimate(a / 2 * (2 * y[i] - 1) - b * x[i])
    plus_minus = plus_minus.replace(lambda q: isinstance(q, sp.exp),
                                    lambda q: sp.expand_power_exp(sp.exp(sp.expand(q.args[0]))))
    plus_minus = plus_minus.replace(lambda q: isinstance(q, sp.Sum), factor_sum)
    general = sp.simplify(plus_minus - estimate(a * y[i] - b * x[i]))
    checked = []
    for size in range(1, 7):
        xs = sp.symbols(f"x1:{size + 1}", real=True)
        ys = sp.symbols(f"y1:{size + 1}", real=True)
        s = [a * yi - b * xi for xi, yi in zip(xs, ys)]
        s_pm = [a / 2 * (2 * yi - 1) - b * xi for xi, yi in zip(xs, ys)]
        zero_one = sum(sp.exp(si) * xi for si, xi in zip(s, xs)) / sum(sp.exp(si) for si in s)
        pm = sum(sp.exp(si) * xi for si, xi in zip(s_pm, xs)) / sum(sp.exp(si) for si in s_pm)
        difference = sp.simplify(sp.powsimp(sp.expand_power_exp(sp.expand(pm - zero_one))))
        if difference != 0:
            difference = sp.simplify(sp.factor(sp.expand_power_exp(pm - zero_one)))
        checked.append({"n": size, "difference": sp.sstr(difference)})
    proved = shift == -a / 2 and general == 0 and all(c["difference"] == "0" for c in checked)
    return {"status": "proved" if proved else "failed",
            "method": "SymPy simplification to zero: the shift s'_i − s_i = −a/2 (symbolic y_i); the general-n "
                      "sums with the common factor e^{−a/2} taken out (factor_sum); explicit contexts n = 1..6",
            "proves": "for every context size n and all real x_i, y_i, a, b (so for y_i ∈ {0, 1}): "
                      "θ̂ with scores (a/2)(2y_i − 1) − b x_i equals θ̂ with scores a y_i − b x_i",
            "shift": sp.sstr(shift), "general_n": {"difference": sp.sstr(general), "srepr": sp.srepr(plus_minus)},
            "contexts": checked, "seconds": round(time.perf_counter() - started, 3)}
