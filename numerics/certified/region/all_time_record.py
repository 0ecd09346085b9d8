"""The all-time record of a region joined with its tail, as the flow certificate and C2–C4 report it.

From the finite region R = {b_T ≤ b ≤ B, |w| ≤ c} and the tail R_∞ = {b ≥ B, |w| ≤ c'} joined at b = B, with
the flow's state at T in R and b(T) ∈ [β₋, β₊]: the constants that hold on R ∪ R_∞
(:func:`~stumpcheck.numerics.certified.region.all_time.union_constants`), the bands of b(t)⁴/t at 10⁸ … 10³⁰ and the
rate constants K for t₀ = T and 10¹² (:mod:`~stumpcheck.numerics.certified.region.all_time`), and the bounds of
b·sup|e| on the interior (:mod:`~stumpcheck.numerics.certified.region.interior_error`): C2, C3 and C4 for all t ≥ T.
"""

from __future__ import annotations

from fractions import Fraction

from stumpcheck.numerics.certified.region.all_time import all_time_table, rate_constant, union_constants
from stumpcheck.numerics.certified.region.interior_error import interior_error_table

__all__ = ["all_time_record"]


def all_time_record(finite_region, tail_document: dict, t_entry, beta_lo, beta_hi) -> dict:
    """{"union", "bands" (a list of rows), "rate" (K for t₀ = T and 10¹² when ≥ T), "interior_error"} for the
    finite ``Region`` joined with the tail certificate ``tail_document``, entering at T with b ∈ [β₋, β₊]."""
    from stumpcheck.numerics.certified.region.tail import TailRegion

    union = union_constants(finite_region, TailRegion.from_json(tail_document["region"]))
    t0s = [t for t in (Fraction(t_entry), Fraction(10**12)) if t >= Fraction(t_entry)]
    return {"union": union, "bands": all_time_table(union, t_entry, beta_lo, beta_hi),
            "rate": [rate_constant(union, t_entry, beta_lo, beta_hi, t0) for t0 in t0s],
            "interior_error": interior_error_table(union, t_entry, beta_lo, beta_hi)}
