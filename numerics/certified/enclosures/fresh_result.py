"""The result of the exact fresh-context risk: bias, MSE and the mean-absolute-error bracket as certified balls.

:class:`FreshRisk` shows itself like the project's other results
(:class:`~stumpcheck.numerics.display.Display`: a short ``repr``, an HTML table, ``to_dict``), with
each figure as an :class:`~stumpcheck.numerics.certified.enclosures.balls.Enclosure` and, in
:meth:`FreshRisk.to_dict`, as [lower, upper] decimals rounded outward
(:func:`~stumpcheck.numerics.certified.enclosures.balls.outward_bounds`) to the digits its width
makes meaningful.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import mpmath
from flint import arb, ctx

from stumpcheck.numerics.certified.enclosures.balls import Enclosure, arb_to_mpf, outward_bounds
from stumpcheck.numerics.certified.enclosures.fresh_inputs import RiskInputs, digits_for
from stumpcheck.numerics.display import Display
from stumpcheck.numerics.json_output import finite_json

__all__ = ["FreshRisk"]


@dataclass(frozen=True, repr=False)
class FreshRisk(Display):
    """Certified bias E[θ̂_N − θ], MSE E[(θ̂_N − θ)²] and the bracket ``|bias| ≤ E|θ̂_N − θ| ≤ √MSE``.

    ``bias``, ``mse`` and ``mean_abs_error`` are :class:`Enclosure` balls (``mean_abs_error`` is the
    bracket as a ball; exact for N = 1); ``relative_radius_bias`` is ``rad(bias)/max(|bias|, √MSE)``,
    ``relative_radius_mse`` is rad(MSE)/MSE; ``attempts`` lists each evaluation's precision, σ-range,
    integrand evaluations and tail bounds.
    """

    a: str
    b: str
    theta: str
    N: int
    estimator: str
    dps: int
    bias: Enclosure
    mse: Enclosure
    mean_abs_error: Enclosure
    relative_radius_bias: float
    relative_radius_mse: float
    prec_bits: int
    seconds: float
    method: str
    attempts: list = field(default_factory=list)
    evidence: str = "certified"

    @classmethod
    def build(cls, inputs: RiskInputs, bias: arb, mse: arb, *, prec_bits: int, seconds: float, method: str,
              attempts: list, mean_abs: arb | None = None) -> "FreshRisk":
        """The result from the bias and MSE balls (the bracket ``[|bias|, √MSE]`` unless ``mean_abs`` is given)."""
        if mean_abs is None:
            with ctx.workprec(prec_bits + 16):  # the ends are exact (lower/upper), the root rounded up at full precision
                low = arb(0) if bias.contains(0) else (arb(bias.lower()) if bias > 0 else -arb(bias.upper()))
                high = arb(arb(mse.upper()).sqrt().upper()) if mse.upper() > 0 else arb(0)
            bracket = _bracket(low, high, prec_bits, inputs.dps)
        else:
            bracket = Enclosure.from_arb(mean_abs, prec_bits=prec_bits, digits=inputs.dps)
        root = float(arb(mse.mid()).sqrt().mid()) if mse.mid() > 0 else 0.0
        scale = max(abs(float(bias.mid())), root)
        rel_bias = float(bias.rad()) / scale if scale > 0 else (0.0 if bias.rad().is_zero() else float("inf"))
        rel_mse = float(mse.rad()) / float(mse.mid()) if mse.mid() > 0 else float("inf")
        digits = inputs.dps
        return cls(a=inputs.text("a"), b=inputs.text("b"), theta=inputs.text("theta"), N=inputs.N,
                   estimator=inputs.estimator, dps=inputs.dps,
                   bias=Enclosure.from_arb(bias, prec_bits=prec_bits, digits=digits),
                   mse=Enclosure.from_arb(mse, prec_bits=prec_bits, digits=digits),
                   mean_abs_error=bracket,
                   relative_radius_bias=rel_bias, relative_radius_mse=rel_mse, prec_bits=prec_bits,
                   seconds=seconds, method=method, attempts=attempts)

    def bounds(self, name: str) -> list[str]:
        """[lower, upper] of ``bias``, ``mse`` or ``mean_abs_error`` as outward-rounded decimals."""
        enclosure = getattr(self, name)
        rel = {"bias": self.relative_radius_bias, "mse": self.relative_radius_mse}.get(name)
        digits = digits_for(rel, self.dps) if rel is not None else digits_for(0.0 if enclosure.rad == 0 else 1e-3,
                                                                             self.dps)
        if name == "mean_abs_error" and enclosure.rad != 0:
            digits = max(digits_for(self.relative_radius_bias, self.dps), digits_for(self.relative_radius_mse, self.dps))
        return outward_bounds(enclosure, digits)

    def _display_rows(self) -> list:
        return [("bias", "[" + ", ".join(self.bounds("bias")) + "]"),
                ("MSE", "[" + ", ".join(self.bounds("mse")) + "]"),
                ("mean |θ̂_N − θ|", "[" + ", ".join(self.bounds("mean_abs_error")) + "]"),
                ("at", f"a = {self.a}, b = {self.b}, θ = {self.theta}, N = {self.N}, {self.estimator}"),
                ("evidence", f"{self.evidence}; {self.prec_bits} bits, {self.seconds:.3g} s; {self.method}")]

    def to_dict(self) -> dict:
        """Inputs, the three figures as [lower, upper] (outward decimals) and as balls, and how they were computed."""
        return finite_json({
            "a": self.a, "b": self.b, "theta": self.theta, "N": self.N, "estimator": self.estimator, "dps": self.dps,
            "bias": self.bounds("bias"), "mse": self.bounds("mse"), "mean_abs_error": self.bounds("mean_abs_error"),
            "bias_ball": str(self.bias), "mse_ball": str(self.mse),
            "relative_radius_bias": self.relative_radius_bias, "relative_radius_mse": self.relative_radius_mse,
            "prec_bits": self.prec_bits, "seconds": self.seconds, "method": self.method, "attempts": self.attempts,
            "evidence": self.evidence})


def _bracket(low: arb, high: arb, prec_bits: int, digits: int) -> Enclosure:
    """The enclosure [low, high] with both ends exact (not rounded into a ball's 30-bit radius)."""
    lower, upper = arb_to_mpf(low), arb_to_mpf(high)
    mid = mpmath.ldexp(mpmath.fadd(lower, upper, exact=True), -1)
    rad = mpmath.ldexp(mpmath.fsub(upper, lower, exact=True), -1)
    return Enclosure(mid=mid, rad=rad, lower=lower, upper=upper, prec_bits=prec_bits, digits=digits)
