"""The certified route of ``stumpcheck eval``: verified digits of e(θ), L, ∇L, ∇²L from rigorous Arb enclosures.

An enclosure [lower, upper] of an exact value v verifies k significant digits when lower and upper round to
the same k-digit decimal: rounding is monotone, so v rounds to it too, and the printed decimal is the
correct rounding of v. The enclosures are :mod:`stumpcheck.numerics.certified.enclosures`'s, computed at --dps + 5
digits (more if an input has more digits); for the θ-integrals the working precision gets the bits that
resolve the softmax switch layer at 1 − θ* (:func:`stumpcheck.numerics.population.quadrature.transition_point`), a
θ-ball there being 1 to the working precision otherwise (at a = 400, b = 100, 1 − θ* ≈ 10⁻¹³², about
440 bits). Nothing else is trusted: a component whose ball does not fix --dps digits is a failure of this
route, and ``eval`` then falls back to its two-precision mpmath evaluation (or, with ``--method arb``, says so).
"""

from __future__ import annotations

from decimal import Decimal

from stumpcheck.numerics.certified.enclosures.verified_integrals import (_relative_width, correctly_rounded,
                                                                          switch_layer_bits)

__all__ = ["arb_verified_digits", "correctly_rounded", "switch_layer_bits"]

#: Digits of the enclosures beyond the requested ones (so that a ball fixes the requested rounding).
GUARD_DIGITS = 5


def arb_verified_digits(quantity: str, a: Decimal, b: Decimal, theta, digits: int, estimator: str):
    """((working digits, [(text, k) per component]), "") when every component's enclosure verifies ``digits``
    digits; (None, reason) otherwise (an enclosure too wide, or not computable)."""
    from stumpcheck.numerics.certified import enclosures as cert
    from stumpcheck.numerics.precision import MAX_DPS

    inputs = [a, b] + ([theta] if theta is not None else [])
    work = min(MAX_DPS, max(digits + GUARD_DIGITS, max(len(v.as_tuple().digits) for v in inputs) + 10))
    a_text, b_text = str(a), str(b)
    reason = ""
    # a ball too wide at the first working precision (at small b, ∂L/∂a = O(b) cancels) is computed once more at
    # twice the digits before the mpmath path is tried: measured at (10, 1e-30), 35 digits miss 1e-12 relative
    # and 70 give 1e-38 in 0.1 s
    for attempt in (work, min(MAX_DPS, 2 * work)):
        try:
            values = _enclosures(cert, quantity, a, b, a_text, b_text, theta, attempt, digits, estimator)
        except cert.EnclosureTooWide as exc:
            reason = f"enclosure too wide: {str(exc)[:120]}"
            continue
        work = attempt
        break
    else:
        return None, reason
    rounded = [correctly_rounded(value, digits) for value in values]
    short = [k for _, k in rounded if k < digits]
    if short:
        return None, f"an enclosure fixes only {min(short)} digits"
    return (work, rounded), ""


def _enclosures(cert, quantity, a, b, a_text, b_text, theta, work, digits, estimator) -> list:
    """The quantity's enclosures at ``work`` digits (EnclosureTooWide when a θ-integral misses its width)."""
    if quantity == "error":
        return [cert.certified_error(a_text, b_text, str(theta), estimator=estimator, dps=work)]
    if quantity == "loss":
        return [cert.certified_loss(a_text, b_text, estimator=estimator, dps=work)]
    compute = cert.certified_loss_gradient if quantity == "grad" else cert.certified_loss_hessian
    return list(compute(a_text, b_text, estimator=estimator, dps=work, extra_bits=switch_layer_bits(a, b),
                        rel_width=_relative_width(digits)))
