"""The tail region R_∞ = {b ≥ B, |w| ≤ c} of the population flow, proved in ε = 1/b ∈ [0, 1/B] by Arb.

The scaled field S(ε, w) = b³ẇ and D(ε, w) = b(1 − 2b³ḃ) are the finite sums Σ ε^i ℓ^j c_ij(w, R…, Ê) of
:func:`stumpcheck.theory.tail.scaled_margins` (ℓ = log ε; derived by SymPy, nothing typed here). On a box
ε ∈ [ε₀, ε₁] ⊆ [0, 1/B], w ∈ [w₀, w₁] every ingredient has a certified range:

* ε^i ℓ^j (i ≥ 1 when j ≥ 1): ε^i·|log ε|^j increases on (0, e^{−j/i}], so its range is between its values at
  the ends (0 at ε = 0), with the sign (−1)^j;
* x = ρ₁ − w (> 0 here), q = e^{xε} ∈ [e^{x₀ε₀}, e^{x₁ε₁}], r = ε²q ∈ [0, r₁], z = xε ∈ [0, z₁];
* each remainder R of :mod:`stumpcheck.theory.tail_series` (a series with non-negative coefficients, so R is
  non-decreasing in its variable t ≥ 0): R ∈ [c_N, (φ(t₁) − T_N(t₁))/t₁^N], one Arb evaluation at t₁;
* Ê_a = b⁴E_a, Ê_b = b⁴E_b (E the exponentially small rest of the loss beyond the right layer): enclosed for
  every b ≥ 1/ε₁, |w| ≤ 1, by :func:`stumpcheck.numerics.certified.region.tail_rest.rest_bound` (docs/tail.md §4:
  its θ-integrands derived by SymPy, bounded term by term in four θ-zones; about 3·10⁻²¹¹ at ε₁ = 1/1000; 0 at
  ε₁ = 0). Nothing of it is assumed.

The margins (the finite region's, :mod:`stumpcheck.numerics.certified.region.invariant_region`):
inward −w·S > 0 on w = ±c; drift (d₊ − d₋)/2 − |D − (d₋ + d₊)/2| ≥ 0 on w ∈ [−c, 0] and [0, c].
:func:`prove_tail_obligation` encloses a margin on the whole domain and bisects (ε, then w) where the
enclosure does not decide, up to a depth; each leaf is a box with its enclosure [lower, upper].
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from fractions import Fraction
from functools import cache

import sympy as sp
from flint import arb, ctx, fmpq

from stumpcheck.numerics.certified.enclosures.balls import sympy_constant_ball
from stumpcheck.numerics.precision import InputError

__all__ = ["TailRegion", "DEFAULT_TAIL", "fraction_text", "LEMMA_E_B_MIN", "LEMMA_E_TEXT", "TAIL_OBLIGATIONS", "TailBox", "symbol_ranges", "field_enclosure",
           "margin_enclosure", "prove_tail_obligation", "tail_domain", "PREC_BITS", "REST_FACTOR"]

#: the tail needs B ≥ this: the rest's enclosure holds there (docs/tail.md §4; the old name of Lemma E's range)
LEMMA_E_B_MIN = Fraction(1000)
#: the hand-proved lemma the first-version tail certificates (format /1) assumed; the proof no longer uses it
LEMMA_E_TEXT = ("Lemma E (docs/tail.md §4, proved by hand, NOT machine-checked): with L = F(1/b, e^{b−a}) + E(a, b), "
                "F the right-layer loss (ε/2)(ε + I(ε, r)), for b >= 1000 and |b·(a − calibration_a(b))| <= 1: "
                "|∂E/∂a| <= b⁴·e^{−b/2} and |∂E/∂b| <= b⁴·e^{−b/2}")
#: the obligations, as in the finite region
TAIL_OBLIGATIONS = ("inward_upper", "inward_lower", "drift_lower_half", "drift_upper_half")
PREC_BITS = 128


def fraction_text(x: Fraction) -> str:
    """An exact rational as ``"p"`` or ``"p/q"`` (what a certificate records)."""
    x = Fraction(x)
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


@dataclass(frozen=True)
class TailRegion:
    """``R_∞ = {b ≥ B, |w| ≤ c}`` with drift constants d₋ < d₊ (exact rationals); ``b_start`` is B.

    Needs B ≥ 1000 (the rest's enclosure; ε^i|log ε|^j increasing on [0, 1/B]), 0 < c ≤ 1 (its w range) with
    x = ρ₁ − w > 0 on |w| ≤ c (ρ₁ ≈ 1.18), 0 ≤ d₋ < d₊ < B."""

    b_start: Fraction
    c: Fraction
    d_minus: Fraction
    d_plus: Fraction

    def __post_init__(self):
        from stumpcheck.numerics.certified.proofs.domains import to_fraction

        for name in ("b_start", "c", "d_minus", "d_plus"):
            object.__setattr__(self, name, to_fraction(getattr(self, name), name))
        if not self.b_start >= LEMMA_E_B_MIN:
            raise InputError(f"the tail needs B >= {fraction_text(LEMMA_E_B_MIN)} (where its rest is enclosed), got {fraction_text(self.b_start)}")
        if not self.b_start <= 10**12:
            raise InputError(f"the tail's B must be at most 1e12, got {float(self.b_start):g}")
        if not 0 < self.c <= 1:
            raise InputError(f"the tail's half-width c must be in (0, 1], got {fraction_text(self.c)}")
        if not 0 <= self.d_minus < self.d_plus < self.b_start:
            raise InputError("the tail's drift constants need 0 <= d_minus < d_plus < B")

    def statement(self) -> str:
        def text(x):
            t = fraction_text(x)
            return f"({t})" if "/" in t else t

        bt, c = fraction_text(self.b_start), text(self.c)
        dm, dp = text(self.d_minus), text(self.d_plus)
        return (f"R_inf = {{(a, b): b >= {bt}, |a - calibration_a(b)| <= {c}/b}} is forward invariant for "
                f"ż = −∇L(z) (the field points strictly inward on |λ|·b = {c}, and b increases), and "
                f"(1 - {dp}/b)/(2b³) <= db/dt <= (1 - {dm}/b)/(2b³) on R_inf; proved in ε = 1/b ∈ [0, 1/{bt}], "
                "the exponentially small rest of the loss enclosed for every b >= B")

    def to_json(self) -> dict:
        return {"b_min": fraction_text(self.b_start), "b_max": "inf", "c": fraction_text(self.c),
                "d_minus": fraction_text(self.d_minus), "d_plus": fraction_text(self.d_plus),
                "epsilon": ["0", fraction_text(1 / self.b_start)],
                "coordinates": "epsilon = 1/b, w = b·(a − calibration_a(b)), |w| <= c"}

    @classmethod
    def from_json(cls, data) -> "TailRegion":
        if not isinstance(data, dict):
            raise InputError("a tail region's JSON must be an object")
        from stumpcheck.numerics.certified.certificates.lemma_certificate import parse_exact

        try:
            return cls(*(parse_exact(data[k], f"region.{k}") for k in ("b_min", "c", "d_minus", "d_plus")))
        except KeyError as exc:
            raise InputError(f"the tail region's JSON has no {exc.args[0]!r}") from None


def _ball(x: Fraction) -> arb:
    return arb(fmpq(x.numerator, x.denominator))


@dataclass(frozen=True)
class TailBox:
    """ε ∈ [eps[0], eps[1]] ⊆ [0, 1/1000], w ∈ [w[0], w[1]] (exact rationals)."""

    eps: tuple
    w: tuple

    def split(self, coordinate: str) -> tuple:
        lo, hi = getattr(self, coordinate)
        mid = (lo + hi) / 2
        if coordinate == "eps":
            return TailBox((lo, mid), self.w), TailBox((mid, hi), self.w)
        return TailBox(self.eps, (lo, mid)), TailBox(self.eps, (mid, hi))

    def midpoint(self) -> "TailBox":
        e, w = sum(self.eps) / 2, sum(self.w) / 2
        return TailBox((e, e), (w, w))


@cache
def _derivation():
    """(compiled S, compiled D, ρ₁ expression, remainder table): from the SymPy derivation, once."""
    from stumpcheck.numerics.certified.region.bounds import _rho1
    from stumpcheck.theory import margin_quantities as mq
    from stumpcheck.theory import tail
    from stumpcheck.theory.symbols import b as b_symbol

    margins = tail.scaled_margins()
    rho = _rho1(mq.relation_expression("calibration_a"), b_symbol)
    return margins, rho


def _series_value(name: str, t: arb) -> arb:
    """φ(t) for a series of :data:`stumpcheck.theory.tail_series.SERIES` at a ball t > 0 (Arb)."""
    if name == "neglog1m":
        return -((-t).log1p())
    if name == "li2":
        return t.polylog(2)
    if name == "K":  # K = −log t·log²(1−t) − 2log(1−t)Li₂(t) + (π²/3)log(1−t) − 2Li₃(1−t) + 2ζ(3)
        l1 = (-t).log1p()
        return (-t.log() * l1**2 - 2 * l1 * t.polylog(2) + arb.pi() ** 2 / 3 * l1 - 2 * (1 - t).polylog(3)
                + 2 * arb(3).zeta())
    if name.startswith("inv1m"):
        return 1 / (1 - t) ** int(name[5:])
    if name == "exp":
        return t.exp()
    raise InputError(f"no Arb value for the series {name!r}")


def _remainder_range(series: str, order: int, t1: arb) -> arb:
    """R_N over t ∈ [0, t₁]: [c_N, (φ(t₁) − T_N(t₁))/t₁^N] (R_N non-decreasing: non-negative coefficients)."""
    from stumpcheck.theory.tail_series import taylor_form

    form = taylor_form(series, order)
    c_n = form.coefficients[order]
    low = _ball(Fraction(int(c_n.p), int(c_n.q)))
    top = arb(t1.upper())
    if top == 0:
        return low
    polynomial = sum((_ball(Fraction(int(c.p), int(c.q))) * top**n
                      for n, c in enumerate(form.coefficients[:order])), arb(0))
    high = (_series_value(series, top) - polynomial) / top**order
    return arb(low.lower()).union(arb(high.upper()))


#: the rest's enclosure is multiplied by this (1; a test raises it to show that the proof needs the enclosure)
REST_FACTOR = 1


@cache
def _rest_bound(eps_hi: Fraction) -> arb:
    """|Ê_a|, |Ê_b| ≤ this over every b ≥ 1/ε₁, |w| ≤ 1 (:func:`~stumpcheck.numerics.certified.region.tail_rest.rest_bound`)."""
    from stumpcheck.numerics.certified.region.tail_rest import rest_bound

    return rest_bound(eps_hi)


def symbol_ranges(box: TailBox) -> dict:
    """{symbol name: Arb ball}: w, q, each remainder R_…, Ê_a, Ê_b over ``box`` (module doc)."""
    from stumpcheck.theory import tail

    _, rho_expr = _derivation()
    (e0, e1), (w0, w1) = box.eps, box.w
    if not (0 <= e0 <= e1 <= 1 / LEMMA_E_B_MIN and -1 <= w0 <= w1 <= 1):
        raise InputError("a tail box needs 0 <= ε₀ <= ε₁ <= 1/1000 and -1 <= w₀ <= w₁ <= 1")
    rho = sympy_constant_ball(rho_expr)
    x_lo, x_hi = rho - _ball(w1), rho - _ball(w0)
    if not x_lo > 0:
        raise InputError("x = ρ₁ − w must be > 0 on a tail box")
    q_lo, q_hi = (x_lo * _ball(e0)).exp(), (x_hi * _ball(e1)).exp()
    r1 = _ball(e1) ** 2 * q_hi
    z1 = x_hi * _ball(e1)
    out = {"w": _ball(w0).union(_ball(w1)), "q": arb(q_lo.lower()).union(arb(q_hi.upper()))}
    for name, (series, variable) in tail.REMAINDERS.items():
        order = tail.ORDER_EXP if variable == "z" else tail.ORDER_R
        out[name] = _remainder_range(series, order, z1 if variable == "z" else r1)
    bound = _rest_bound(Fraction(e1)) * REST_FACTOR
    out["E_a_hat"] = out["E_b_hat"] = arb(0, bound.upper()) if bound != 0 else arb(0)
    return out


def _monomial(i: int, j: int, e0: Fraction, e1: Fraction) -> arb:
    """The range of ε^i·(log ε)^j over [ε₀, ε₁] (i ≥ 1 when j ≥ 1)."""
    if j == 0:
        return _ball(e0) ** i if e0 == e1 else (_ball(e0) ** i).union(_ball(e1) ** i)
    if i < 1:
        raise InputError("a monomial ε^0·ℓ^j (j >= 1) is unbounded at ε = 0")
    if e1 == 0:
        return arb(0)
    if not float(e1) < float(sp.exp(-sp.Rational(j, i))):
        raise InputError("ε₁ is beyond the interval where ε^i·|log ε|^j increases")

    def value(e):
        return arb(0) if e == 0 else _ball(e) ** i * abs(_ball(e).log()) ** j

    magnitude = value(e0).union(value(e1))
    return magnitude if j % 2 == 0 else -magnitude


def _evaluate(expr, env: dict) -> arb:
    """A SymPy polynomial in named symbols with constant coefficients (π, ζ(3), rationals), as an Arb ball."""
    if expr.is_Symbol:
        return env[expr.name]
    if expr.is_Add:
        return sum((_evaluate(a, env) for a in expr.args), arb(0))
    if expr.is_Mul:
        value = arb(1)
        for a in expr.args:
            value *= _evaluate(a, env)
        return value
    if expr.is_Pow and expr.exp.is_Integer and expr.base.free_symbols:
        return _evaluate(expr.base, env) ** int(expr.exp)
    return sympy_constant_ball(expr)


def field_enclosure(box: TailBox, prec_bits: int = PREC_BITS) -> dict:
    """{"S": ball of b³ẇ, "D": ball of b(1 − 2b³ḃ)} over ``box`` (Arb at ``prec_bits``)."""
    margins, _ = _derivation()
    with ctx.workprec(prec_bits):
        env = symbol_ranges(box)
        out = {}
        for name, terms in margins.items():
            total = arb(0)
            for (i, j), coefficient in terms.items():
                total += _monomial(i, j, *box.eps) * _evaluate(coefficient, env)
            out[name] = total
    return out


def tail_domain(region, name: str) -> TailBox:
    """The box of obligation ``name``: ε ∈ [0, 1/B], w = ±c (inward) or a half of [−c, c] (drift)."""
    top = 1 / Fraction(region.b_start)
    c = Fraction(region.c)
    return {"inward_upper": TailBox((Fraction(0), top), (c, c)),
            "inward_lower": TailBox((Fraction(0), top), (-c, -c)),
            "drift_lower_half": TailBox((Fraction(0), top), (-c, Fraction(0))),
            "drift_upper_half": TailBox((Fraction(0), top), (Fraction(0), c))}[name]


def margin_enclosure(region, name: str, box: TailBox, prec_bits: int = PREC_BITS) -> arb:
    """The margin of obligation ``name`` over ``box``: −w·S (inward) or h − |D − m| (drift)."""
    field = field_enclosure(box, prec_bits)
    with ctx.workprec(prec_bits):
        if name.startswith("inward"):
            return -_ball(box.w[0]) * field["S"]
        middle = _ball((Fraction(region.d_minus) + Fraction(region.d_plus)) / 2)
        half = _ball((Fraction(region.d_plus) - Fraction(region.d_minus)) / 2)
        return half - abs(field["D"] - middle)


def prove_tail_obligation(region, name: str, *, prec_bits: int = PREC_BITS, max_depth: int = 8) -> dict:
    """{"status", "leaves": [(TailBox, ball, depth)], "max_depth", "seconds", "smallest_lower"}: bisect the
    obligation's box (ε first, then w, alternating) until every leaf's enclosure decides, or stop at
    ``max_depth`` with status "not proved"."""
    if name not in TAIL_OBLIGATIONS:
        raise InputError(f"unknown obligation {name!r}; expected one of {', '.join(TAIL_OBLIGATIONS)}")
    started = time.process_time()
    strict = name.startswith("inward")
    stack, leaves, status = [(tail_domain(region, name), 0)], [], "proved"
    while stack:
        box, depth = stack.pop()
        ball = margin_enclosure(region, name, box, prec_bits)
        decided = ball > 0 if strict else ball >= 0
        if decided:
            leaves.append((box, ball, depth))
            continue
        if depth >= max_depth:
            leaves.append((box, ball, depth))
            status = "not proved"
            continue
        coordinate = "eps" if depth % 2 == 0 or box.w[0] == box.w[1] else "w"
        stack.extend((child, depth + 1) for child in reversed(box.split(coordinate)))
    leaves.sort(key=lambda leaf: (leaf[0].eps, leaf[0].w))
    smallest = min((float(arb(ball.lower()).mid()) for _, ball, _ in leaves), default=float("nan"))
    return {"status": status, "leaves": leaves, "max_depth": max(d for _, _, d in leaves),
            "seconds": round(time.process_time() - started, 3), "smallest_lower": smallest}


#: B = 1000, c = 1/2, d₋ = 5/2, d₊ = 11/2: the finite region's constants (so R's top edge b = B lies in R_∞)
DEFAULT_TAIL = TailRegion(Fraction(1000), Fraction(1, 2), Fraction(5, 2), Fraction(11, 2))
