"""The built-in lemmas as certified specs: a margin and a domain per lemma, and the symbolic proof of one.

:data:`CERTIFIED_SPECS` maps a lemma of :mod:`stumpcheck.builtin_lemmas` to
``(margin, domain, strict)`` (:class:`numerics.certified.margins.Margin`,
:class:`numerics.certified.domains.Domain`), the statement's own domain; :func:`quick_domain`
gives the representative sub-domain ``verify --quick`` proves, and :func:`certify_builtin` runs
:func:`numerics.certified.proof.prove` on either (long b ranges are first split geometrically).

* ``interior_error_bound``: 2 − b·|e| ≥ 0 for b ∈ [20, 10⁴], |lam| ≤ 1 (a = calibration_a(b) + lam),
  θ ∈ [0.05, 0.95];
* ``leading_loss``: 3 − b²·|L/leading_loss(b) − 1| ≥ 0 along the relation (lam = 0), b ∈ [20, 10⁴];
* ``progress_direction``: 5 − b·max_i |2b³(−∂_iL) − 1| ≥ 0 along the relation, b ∈ [20, 10⁴];
* ``bulk_error``: 1 − |b·e − 1|·(1 − e^{−v})/((v + u·r)e^{−v}) ≥ 0, θ ∈ [0.05, 0.95], b ∈ [1, 300],
  a = b + excess, excess ∈ [−20, 30] (the ratio form of the stated bound);
* ``right_layer``: 1 − |e − e_R|/bound ≥ 0, θ ∈ [1/2, 1], b ∈ [2, 300], excess ∈ [0, 30];
* ``label_encoding`` is proved symbolically (:func:`prove_label_encoding`): softmax is invariant
  under a common shift, so the {−1, +1} encoding with label score a/2 gives the same θ̂.
"""

from __future__ import annotations

import time
from functools import cache

__all__ = ["CERTIFIED_NAMES", "certified_specs", "quick_domain", "certify_builtin", "prove_label_encoding",
           "PROOF_OPTIONS", "spec_for"]

CERTIFIED_NAMES = ("interior_error_bound", "leading_loss", "progress_direction", "bulk_error", "right_layer")

#: prover options per lemma: geometric split ratio of b, box budget, digits, and whether --quick proves the
#: whole domain (else :func:`quick_domain`)
PROOF_OPTIONS = {
    # whole domain under --quick too: 4 551 boxes, about 6 s
    "interior_error_bound": {"ratio": 2.0, "max_boxes": 200_000, "quick_whole": True},
    # Taylor form of order 3 along b; the decisive boxes narrow like b^-1/2 (10 % wide at b = 20, 0.3 % at 10⁴):
    # 636 leaves (957 boxes, depth 3) over [20, 10⁴], 794 s CPU on a loaded machine (quick sub-domain: 1 box, 1.4 s)
    "leading_loss": {"ratio": 1.02, "max_boxes": 20_000},
    # order 2: every 2 % piece is decisive: 314 leaves, depth 0, 414 s CPU on a loaded machine (quick: 1.5 s)
    "progress_direction": {"ratio": 1.02, "max_boxes": 20_000},
    "bulk_error": {"ratio": 1.5, "max_boxes": 50_000, "dps": 30},
    "right_layer": {"ratio": 1.5, "max_boxes": 50_000, "dps": 30},
}

_MARGINS = {
    "interior_error_bound": ("2 - b*Abs(e)", "calibration", False),
    "leading_loss": ("3 - b**2*Abs(L/leading_loss(b) - 1)", "calibration", True),
    "progress_direction": ("5 - b*Max(Abs(-2*b**3*L_a - 1), Abs(-2*b**3*L_b - 1))", "calibration", True),
    "bulk_error": ("1 - Abs(b*e - 1)*(1 - exp(-v))/((v + u*r)*exp(-v))", "excess", False),
}

#: order of the Taylor form along b of the θ-integral margins (L: κ₄ allows 3; ∇L: ∂e/∂b has κ₂, so 2)
TAYLOR_ORDERS = {"leading_loss": 3, "progress_direction": 2}

_DOMAINS = {
    "interior_error_bound": ({"b": ("20", "10000"), "lam": ("-1", "1"), "theta": ("0.05", "0.95")}, "calibration"),
    "leading_loss": ({"b": ("20", "10000"), "lam": ("0", "0")}, "calibration"),
    "progress_direction": ({"b": ("20", "10000"), "lam": ("0", "0")}, "calibration"),
    "bulk_error": ({"b": ("1", "300"), "excess": ("-20", "30"), "theta": ("0.05", "0.95")}, "excess"),
}

_QUICK = {
    "interior_error_bound": {"b": ("100", "120")},
    "leading_loss": {"b": ("20", "20.25")},
    "progress_direction": {"b": ("20", "20.25")},
    "bulk_error": {"b": ("20", "21"), "excess": ("0", "1"), "theta": ("0.45", "0.55")},
}


@cache
def certified_specs() -> dict:
    """{name: (margin, domain, strict)} for the certified built-in lemmas (built on first use)."""
    from numerics.certified.domains import Domain
    from numerics.certified.margins import Margin

    specs = {}
    for name, (expr, coordinates, integral) in _MARGINS.items():
        variables, domain_coordinates = _DOMAINS[name]
        order = {"taylor_order": TAYLOR_ORDERS[name]} if integral else {}
        specs[name] = (Margin.from_sympy(expr, coordinates=coordinates, theta_integral=integral, name=name, **order),
                       Domain(dict(variables), domain_coordinates), False)
    return specs


def __getattr__(name):
    if name == "CERTIFIED_SPECS":
        return certified_specs()
    raise AttributeError(name)


def quick_domain(name: str):
    """The representative sub-domain ``verify --quick`` proves for lemma ``name``."""
    from numerics.certified.domains import Domain

    _, domain, _ = certified_specs()[name]
    return Domain({**domain.variables, **_QUICK[name]}, domain.coordinates)


def spec_for(name: str):
    """The ``certify=`` of lemma ``name``: :func:`stumpcheck.lemmas.certified` over this module's margin and
    domain (built when first certified), with its quick sub-domain and prover options."""
    from stumpcheck.lemmas import certified

    options = PROOF_OPTIONS[name]
    quick = None if options.get("quick_whole") else (lambda: quick_domain(name))
    return certified(lambda: certified_specs()[name][0], lambda: certified_specs()[name][1],
                     strict=False, quick_domain=quick, dps=options.get("dps", 30),
                     max_boxes=options["max_boxes"], b_ratio=options["ratio"])


def certify_builtin(name: str, *, quick: bool = False, max_boxes: int | None = None):
    """Prove lemma ``name`` on its domain (``quick``: on :func:`quick_domain`); returns the Proof."""
    from numerics.certified.proof import prove

    margin, domain, strict = certified_specs()[name]
    if quick:
        domain = quick_domain(name)
    options = PROOF_OPTIONS[name]
    return prove(margin, domain, strict=strict, dps=options.get("dps", 30), b_ratio=options["ratio"],
                 max_boxes=max_boxes or options["max_boxes"])


def prove_label_encoding() -> dict:
    """A symbolic proof that θ̂ is the same for the {0, 1} labels with score a and the {−1, +1} labels with a/2.

    With y ∈ {0, 1} the {−1, +1} label is 2y − 1 and the scores are s'_i = (a/2)(2y_i − 1) − b x_i =
    s_i − a/2, s_i = a y_i − b x_i: a common shift. SymPy proves the softmax identity
    Σ_i e^{s_i − c} x_i / Σ_j e^{s_j − c} − Σ_i e^{s_i} x_i / Σ_j e^{s_j} = 0 for a context of n symbolic
    points (n = 1, …, 6, symbolic x_i, y_i, a, b) and the shift s'_i − s_i = −a/2 for symbolic y_i.
    """
    import sympy as sp

    started = time.perf_counter()
    a, b = sp.symbols("a b", real=True)
    shift = sp.simplify(a / 2 * (2 * sp.Symbol("y", real=True) - 1) - a * sp.Symbol("y", real=True) + a / 2)
    checked = []
    for n in range(1, 7):
        x = sp.symbols(f"x1:{n + 1}", real=True)
        y = sp.symbols(f"y1:{n + 1}", real=True)
        s = [a * yi - b * xi for xi, yi in zip(x, y)]
        s_pm = [a / 2 * (2 * yi - 1) - b * xi for xi, yi in zip(x, y)]
        zero_one = sum(sp.exp(si) * xi for si, xi in zip(s, x)) / sum(sp.exp(si) for si in s)
        plus_minus = sum(sp.exp(si) * xi for si, xi in zip(s_pm, x)) / sum(sp.exp(si) for si in s_pm)
        difference = sp.simplify(sp.powsimp(sp.expand_power_exp(sp.expand(plus_minus - zero_one))))
        if difference != 0:
            difference = sp.simplify(sp.factor(sp.expand_power_exp(plus_minus - zero_one)))
        checked.append({"n": n, "difference": sp.sstr(difference)})
    proved = shift == 0 and all(c["difference"] == "0" for c in checked)
    return {"status": "proved" if proved else "failed", "method": "SymPy simplification to zero",
            "shift": sp.sstr(shift), "contexts": checked, "seconds": round(time.perf_counter() - started, 3)}
