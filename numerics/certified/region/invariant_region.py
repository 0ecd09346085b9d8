"""A forward-invariant region of the population flow beyond the certified tube: |λ| ≤ c/b, b ∈ [b_T, B].

In the coordinates of the slow manifold, λ = a − calibration_a(b) (calibration_a(b) = b + 2 log b − ρ₁/b,
derived by :mod:`stumpcheck.theory.asymptotics`) and its scaled form w = b·λ (the ``"scaled"`` coordinates of
:mod:`stumpcheck.numerics.certified.proofs.domains`: a = calibration_a(b) + w/b), the region is the box

    R = {(b, w) : b_T ≤ b ≤ B, |w| ≤ c}      i.e.   {(a, b) : b_T ≤ b ≤ B, |a − calibration_a(b)| ≤ c/b}.

Along the population flow ż = −∇L(z), z = (a, b),

    ḃ = −L_b,   λ̇ = −L_a + calibration_a′(b)·L_b,   ẇ = b·λ̇ + λ·ḃ = b(−L_a + calibration_a′(b)·L_b) − (w/b)·L_b,

with calibration_a′(b) = 1 + 2/b + (b + 2 log b − calibration_a(b))/b, checked by SymPy to be the derivative of
the derived relation (the margins name the relation; nothing derived is typed by hand). Three statements,
each a certified margin proved by :func:`stumpcheck.numerics.certified.proofs.margin_proof.prove` (Taylor forms of order 2 along
b with rigorous θ-integrals, :mod:`stumpcheck.numerics.certified.proofs.margin_taylor`):

* **inward** (strict, on each λ-boundary w = +c and w = −c, b ∈ [b_T, B]): −w·b³·ẇ > 0, i.e.
  d/dt (w²) < 0 there: the field points strictly into R. (Without the factor b³ the margin is ~1/b³;
  b³ẇ ≈ −κ(w − w*) + O(1/b) with κ ≈ 0.93 and the slow manifold at w* ≈ −0.15 for b ≈ 36.)
* **drift** (on all of R, proved on the halves w ∈ [−c, 0] and [0, c], with w a parameter ball in the
  expansion in b): h − |b(1 − 2b³ḃ) − m| ≥ 0 with m = (d₋ + d₊)/2, h = (d₊ − d₋)/2, i.e.

      (1 − d₊/b)/(2b³) ≤ ḃ ≤ (1 − d₋/b)/(2b³)      on R

  (the derived drift on the relation is ḃ = 1/(2b³) − (3ζ(3)/2 + 1/4)/b⁴ + …, so b(1 − 2b³ḃ) ≈ 4.1
  there, and 3.5 … 4.6 across |w| ≤ 1/2). With δ = d₊/b_T: (1 − δ)/(2b³) ≤ ḃ ≤ (1 + δ)/(2b³) on R.
* the **b = b_T edge**: ḃ ≥ (1 − d₊/b_T)/(2b_T³) > 0 there, from the drift (the region requires b_T > d₊).

Consequence (:mod:`stumpcheck.numerics.certified.region.bounds`): a solution with z(T) ∈ R stays in R for
every t ≥ T with b(t) ≤ B, since it cannot leave through b = b_T (b increases on R) nor through
w = ±c (where w² strictly decreases). Nothing is claimed for b > B: the tail b ∈ [B, ∞) through
ε = 1/b is not proved here.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import cache

import sympy as sp

from stumpcheck.numerics.certified.proofs.domains import Domain, exact_decimal, geometric_split, to_fraction
from stumpcheck.numerics.precision import InputError

__all__ = ["Region", "DEFAULT_REGION", "OBLIGATIONS", "boundary_margin", "drift_margin", "obligations",
           "prove_obligation", "B_RATIO", "MAX_REGION_SCALE"]

#: the geometric ratio of the start pieces in b (each piece ~2 % wide, as for progress_direction)
B_RATIO = 1.02
#: the largest B offered: the θ-integrals' own limit is far beyond, the proofs' time is not
MAX_REGION_SCALE = Fraction(10_000)
#: the obligations of a region, in the order they are proved and recorded
OBLIGATIONS = ("inward_upper", "inward_lower", "drift_lower_half", "drift_upper_half")


@dataclass(frozen=True)
class Region:
    """``R = {b_start ≤ b ≤ b_max, |w| ≤ c}`` with the drift constants d_minus < d_plus (exact rationals)."""

    b_start: Fraction
    b_max: Fraction
    c: Fraction
    d_minus: Fraction
    d_plus: Fraction

    def __post_init__(self):
        for name in ("b_start", "b_max", "c", "d_minus", "d_plus"):
            object.__setattr__(self, name, to_fraction(getattr(self, name), name))
        if not self.c > 0:
            raise InputError(f"the region's half-width c must be > 0, got {exact_decimal(self.c)}")
        if not 0 <= self.d_minus < self.d_plus:
            raise InputError("the drift constants need 0 <= d_minus < d_plus, got "
                             f"{exact_decimal(self.d_minus)}, {exact_decimal(self.d_plus)}")
        if not self.b_start > self.d_plus:
            raise InputError(f"b_start must exceed d_plus (so that b increases on the region), got "
                             f"b_start={exact_decimal(self.b_start)}, d_plus={exact_decimal(self.d_plus)}")
        if not self.b_start < self.b_max <= MAX_REGION_SCALE:
            raise InputError(f"the region needs b_start < b_max <= {exact_decimal(MAX_REGION_SCALE)}, got "
                             f"[{exact_decimal(self.b_start)}, {exact_decimal(self.b_max)}]")

    @property
    def delta(self) -> Fraction:
        """δ = d₊/b_T: (1 − δ)/(2b³) ≤ ḃ ≤ (1 + δ)/(2b³) on the whole region."""
        return self.d_plus / self.b_start

    def statement(self) -> str:
        c, bt, bm = (exact_decimal(x) for x in (self.c, self.b_start, self.b_max))
        dm, dp = exact_decimal(self.d_minus), exact_decimal(self.d_plus)
        return (f"R = {{(a, b): {bt} <= b <= {bm}, |a - calibration_a(b)| <= {c}/b}} is forward invariant for "
                f"ż = −∇L(z) while b <= {bm} (the field points strictly inward on |λ|·b = {c}, and b increases), "
                f"and (1 - {dp}/b)/(2b³) <= db/dt <= (1 - {dm}/b)/(2b³) on R")

    def to_json(self) -> dict:
        return {"b_start": exact_decimal(self.b_start), "b_max": exact_decimal(self.b_max),
                "c": exact_decimal(self.c), "d_minus": exact_decimal(self.d_minus),
                "d_plus": exact_decimal(self.d_plus), "delta": _fraction_text(self.delta),
                "coordinates": "scaled: a = calibration_a(b) + w/b, w = b·(a − calibration_a(b)), |w| <= c"}

    @classmethod
    def from_json(cls, data) -> "Region":
        if not isinstance(data, dict):
            raise InputError("a region's JSON must be an object")
        try:
            return cls(*(data[k] for k in ("b_start", "b_max", "c", "d_minus", "d_plus")))
        except KeyError as exc:
            raise InputError(f"the region's JSON has no {exc.args[0]!r}") from None

    def with_b_max(self, b_max) -> "Region":
        return Region(self.b_start, b_max, self.c, self.d_minus, self.d_plus)


def _fraction_text(x: Fraction) -> str:
    try:
        return exact_decimal(x)
    except InputError:
        return f"{x.numerator}/{x.denominator}"


#: b_T = 30 (the tube's box at T = 10⁶ has b ≈ 36.11, w ≈ −0.15), c = 1/2, drift constants 5/2 and 11/2
DEFAULT_REGION = Region(Fraction(30), Fraction(1000), Fraction(1, 2), Fraction(5, 2), Fraction(11, 2))


@cache
def _field_terms():
    """(b³·ẇ, b(1 − 2b³ḃ)) as SymPy expressions in b, w and the named θ-integrals L_a, L_b
    (:func:`stumpcheck.theory.margin_quantities.region_field_terms`)."""
    from stumpcheck.theory import margin_quantities as mq

    return mq.region_field_terms()


def boundary_margin():
    """The inwardness margin −w·b³·ẇ (> 0 on w = ±c: d/dt w² < 0), a θ-integral margin of Taylor order 2."""
    from stumpcheck.numerics.certified.proofs.margins import Margin
    from stumpcheck.theory import margin_quantities as mq

    scaled_w_dot, _ = _field_terms()
    return Margin.from_sympy(-mq.w * scaled_w_dot, coordinates="scaled", theta_integral=True, taylor_order=2,
                             name="region_inward")


def drift_margin(region: Region):
    """h − |b(1 − 2b³ḃ) − m| (≥ 0: d₋ ≤ b(1 − 2b³ḃ) ≤ d₊), m and h the centre and half-width of [d₋, d₊]."""
    from stumpcheck.numerics.certified.proofs.margins import Margin

    _, scaled_drift = _field_terms()
    middle = sp.Rational((region.d_minus + region.d_plus) / 2)
    half = sp.Rational((region.d_plus - region.d_minus) / 2)
    return Margin.from_sympy(half - sp.Abs(scaled_drift - middle), coordinates="scaled", theta_integral=True,
                             taylor_order=2, name="region_drift")


def obligations(region: Region) -> dict:
    """{name: (statement, margin, domain, strict)}: the four certified statements that prove the region."""
    b_range = (region.b_start, region.b_max)
    c = region.c
    bt, bm = exact_decimal(region.b_start), exact_decimal(region.b_max)
    cc, dm, dp = exact_decimal(c), exact_decimal(region.d_minus), exact_decimal(region.d_plus)
    inward = boundary_margin()
    drift = drift_margin(region)
    out = {}
    for name, w in (("inward_upper", c), ("inward_lower", -c)):
        out[name] = (f"−w·b³·dw/dt > 0 on w = {exact_decimal(w)}, b ∈ [{bt}, {bm}] (the field points into "
                     f"|w| < {cc}; w = b·(a − calibration_a(b)))", inward,
                     Domain({"b": b_range, "w": (w, w)}, "scaled"), True)
    for name, ws in (("drift_lower_half", (-c, Fraction(0))), ("drift_upper_half", (Fraction(0), c))):
        out[name] = (f"{dm} <= b·(1 − 2b³·db/dt) <= {dp} for b ∈ [{bt}, {bm}], w ∈ [{exact_decimal(ws[0])}, "
                     f"{exact_decimal(ws[1])}]", drift, Domain({"b": b_range, "w": ws}, "scaled"), False)
    return out


def prove_obligation(region: Region, name: str, *, workers: int = 1, max_boxes: int = 20_000, dps: int = 30,
                     arithmetic: str = "fast"):
    """Prove obligation ``name`` of :func:`obligations`: the b range is cut at ratio :data:`B_RATIO` first;
    ``arithmetic`` as for :func:`stumpcheck.numerics.certified.proofs.margin_proof.prove`."""
    from stumpcheck.numerics.certified.proofs.margin_proof import prove

    if name not in OBLIGATIONS:
        raise InputError(f"unknown obligation {name!r}; expected one of {', '.join(OBLIGATIONS)}")
    _, margin, domain, strict = obligations(region)[name]
    pieces = geometric_split(domain, "b", B_RATIO) if domain.variables["b"][1] > domain.variables["b"][0] * Fraction(
        B_RATIO) else [domain]
    return prove(margin, domain, strict=strict, dps=dps, max_boxes=max_boxes, pieces=pieces, workers=workers,
                 arithmetic=arithmetic)
