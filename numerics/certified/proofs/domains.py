"""Domains of certified margins: boxes in the model's own coordinates, with exact rational ends.

A :class:`Domain` is a product of closed intervals, one per named variable, each an exact
``(lo, hi)`` pair of :class:`~fractions.Fraction` (given as decimal strings, ints, Fractions or
floats, taken exactly). Its ``coordinates`` say how the variables give the model's (a, b, θ)
(:mod:`stumpcheck.theory.margin_quantities`):

* ``"abtheta"``: a, b, theta themselves;
* ``"calibration"``: b, lam (and theta for a pointwise margin), a = calibration_a(b) + lam with
  the derived calibration relation a = b + 2 log b − ρ₁/b;
* ``"scaled"``: b, w (and theta), a = calibration_a(b) + w/b: the offset from the relation scaled by b
  (w = b·lam), in which a band |lam| ≤ c/b around the relation is the box |w| ≤ c;
* ``"excess"``: b, excess (and theta), a = b + excess (the λ = a − b of docs/model.md);
* ``"layer"``: b, v and one of a, lam, excess, with θ = 1 − v/b (the right layer variable).

A degenerate interval (lo = hi) fixes a variable (e.g. lam = 0: on the calibration relation);
:meth:`Domain.volume` is the product of the other widths. :meth:`Domain.split` cuts one variable
at given points and :func:`geometric_split` cuts a long range (b ∈ [20, 10⁴]) at points in
geometric progression (rounded to few decimal digits, kept exact), so that every piece has about
the same relative width. Unbounded b (through ε = 1/b) is not offered: no remainder of the
expansions is proved here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

from stumpcheck.numerics.precision import InputError

__all__ = ["Domain", "geometric_split", "geometric_cuts", "exact_decimal", "exact_text", "to_fraction", "COORDINATES"]

#: coordinates → (variables it needs, variables it may have)
COORDINATES = {
    "abtheta": ({"a", "b"}, {"a", "b", "theta"}),
    "calibration": ({"b", "lam"}, {"b", "lam", "theta"}),
    "scaled": ({"b", "w"}, {"b", "w", "theta"}),
    "excess": ({"b", "excess"}, {"b", "excess", "theta"}),
    "layer": ({"b", "v"}, {"b", "v", "a", "lam", "excess"}),
}


def to_fraction(value, name: str) -> Fraction:
    """A decimal string, int, Fraction, Decimal or float as an exact Fraction (floats exactly)."""
    if isinstance(value, bool):
        raise InputError(f"{name} must be a real number, got {value!r}")
    if isinstance(value, Fraction):
        return value
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InputError(f"{name} must be finite, got {value!r}")
        return Fraction(value)
    if isinstance(value, (str, Decimal)):
        try:
            parsed = Decimal(str(value).strip())
        except ArithmeticError:
            raise InputError(f"{name} must be a decimal number, got {value!r}") from None
        if not parsed.is_finite():
            raise InputError(f"{name} must be finite, got {value!r}")
        return Fraction(parsed)
    raise InputError(f"{name} must be a decimal string or a number, got {value!r}")


def exact_decimal(value: Fraction) -> str:
    """The exact decimal expansion of a Fraction whose denominator is 2^i·5^j (else an InputError)."""
    den = value.denominator
    k = 0
    while den % 10 == 0:
        den //= 10
        k += 1
    twos = fives = 0
    while den % 2 == 0:
        den //= 2
        twos += 1
    while den % 5 == 0:
        den //= 5
        fives += 1
    if den != 1:
        raise InputError(f"{value} has no finite decimal expansion")
    k += max(twos, fives)
    scaled = value * 10**k
    assert scaled.denominator == 1
    digits = str(abs(scaled.numerator)).rjust(k + 1, "0")
    body = digits if k == 0 else f"{digits[:-k]}.{digits[-k:]}".rstrip("0").rstrip(".")
    return ("-" if value < 0 else "") + body


def exact_text(value: Fraction) -> str:
    """A rational as an exact string: its finite decimal expansion when the denominator is 2^i·5^j
    (``Fraction(1, 20)`` → ``"0.05"``), else ``"p/q"``. :func:`~stumpcheck.numerics.certified.certificates.lemma_certificate.parse_exact` reads it
    back exactly."""
    value = Fraction(value)
    try:
        return exact_decimal(value)
    except InputError:  # a denominator with another prime factor
        return f"{value.numerator}/{value.denominator}"


@dataclass(frozen=True)
class Domain:
    """A box in named coordinates: ``variables`` maps each name to exact (lo, hi) Fractions."""

    variables: dict
    coordinates: str = "abtheta"

    def __post_init__(self):
        if self.coordinates not in COORDINATES:
            raise InputError(f"unknown coordinates {self.coordinates!r}; expected one of {', '.join(COORDINATES)}")
        if not isinstance(self.variables, dict) or not self.variables:
            raise InputError("a domain needs a dict of variables name -> (lo, hi)")
        needed, allowed = COORDINATES[self.coordinates]
        names = set(self.variables)
        if not needed <= names or not names <= allowed:
            raise InputError(f"coordinates {self.coordinates!r} take the variables {', '.join(sorted(needed))} "
                             f"(and optionally {', '.join(sorted(allowed - needed))}), got {', '.join(sorted(names))}")
        if self.coordinates == "layer" and len(names & {"a", "lam", "excess"}) != 1:
            raise InputError("layer coordinates need exactly one of a, lam, excess beside b and v")
        box = {}
        for name in sorted(names):
            value = self.variables[name]
            if not isinstance(value, (tuple, list)) or len(value) != 2:
                raise InputError(f"{name} must be an interval (lo, hi), got {value!r}")
            lo, hi = to_fraction(value[0], f"{name} lo"), to_fraction(value[1], f"{name} hi")
            if not lo <= hi:
                raise InputError(f"{name} needs lo <= hi, got [{value[0]}, {value[1]}]")
            box[name] = (lo, hi)
        if not box["b"][0] > 0:
            raise InputError(f"b must be > 0 (the attention scale), got b lo = {box['b'][0]}")
        if "theta" in box and not (box["theta"][0] >= 0 and box["theta"][1] <= 1):
            raise InputError("theta must lie in [0, 1]")
        if "v" in box and not (box["v"][0] >= 0 and box["v"][1] <= box["b"][0]):
            raise InputError("v = b(1 − θ) must lie in [0, b lo] (θ ∈ [0, 1] on the whole box)")
        object.__setattr__(self, "variables", box)

    @property
    def names(self) -> tuple:
        return tuple(sorted(self.variables))

    @property
    def box(self) -> dict:
        return dict(self.variables)

    def volume(self) -> Fraction:
        """The product of the widths of the variables that are not fixed (lo < hi)."""
        out = Fraction(1)
        for lo, hi in self.variables.values():
            if hi > lo:
                out *= hi - lo
        return out

    def free(self) -> tuple:
        """The variables with lo < hi (the ones bisection splits)."""
        return tuple(n for n in self.names if self.variables[n][1] > self.variables[n][0])

    def split(self, var: str, cuts) -> list["Domain"]:
        """The pieces of this domain cut at ``cuts`` (inside (lo, hi)) along ``var``, in order."""
        if var not in self.variables:
            raise InputError(f"{var} is not a variable of this domain")
        lo, hi = self.variables[var]
        points = sorted({to_fraction(c, f"cut of {var}") for c in cuts})
        if any(not lo < c < hi for c in points):
            raise InputError(f"cuts of {var} must lie strictly inside ({lo}, {hi})")
        ends = [lo, *points, hi]
        return [Domain({**self.variables, var: (x, y)}, self.coordinates) for x, y in zip(ends, ends[1:])]

    def contains(self, box: dict) -> bool:
        return set(box) == set(self.variables) and all(
            self.variables[n][0] <= box[n][0] <= box[n][1] <= self.variables[n][1] for n in box)

    def to_json(self) -> dict:
        return {"coordinates": self.coordinates,
                "variables": {n: [exact_decimal(lo), exact_decimal(hi)] for n, (lo, hi) in sorted(self.variables.items())}}

    @classmethod
    def from_json(cls, data: dict) -> "Domain":
        if not isinstance(data, dict) or "variables" not in data:
            raise InputError("a domain's JSON needs 'variables' (and 'coordinates')")
        return cls({n: tuple(v) for n, v in data["variables"].items()}, data.get("coordinates", "abtheta"))


def geometric_cuts(lo: Fraction, hi: Fraction, ratio, digits: int = 4) -> list[Fraction]:
    """Points lo·ratio^k strictly inside (lo, hi), each rounded to ``digits`` significant decimals."""
    lo, hi = Fraction(lo), Fraction(hi)
    ratio = float(ratio)
    if not (lo > 0 and ratio > 1):
        raise InputError("a geometric split needs lo > 0 and ratio > 1")
    cuts, x = [], float(lo)
    while True:
        x *= ratio
        point = Fraction(Decimal(f"{x:.{digits}g}"))
        if point >= hi:
            break
        if point > (cuts[-1] if cuts else lo):
            cuts.append(point)
    return cuts


def geometric_split(domain: Domain, var: str, ratio, digits: int = 4) -> list[Domain]:
    """:meth:`Domain.split` of ``var`` at :func:`geometric_cuts` (for long ranges in b)."""
    lo, hi = domain.variables[var]
    return domain.split(var, geometric_cuts(lo, hi, ratio, digits))
