"""The forward-invariant region of the population flow beyond the certified tube
(docs/certified_flow.md): ``R = {b_T ≤ b ≤ B, |w| ≤ c}``, w = b·(a − calibration_a(b)), proved by four
margin obligations over boxes of (b, w); what it gives for t ≥ T (the entry check, the horizon in t,
bands of b(t)⁴/t); its certificate (format ``stumpcheck-region-certificate/1``) and the flow
certificate with the region embedded.
"""

from stumpcheck.numerics.lazy import lazy_exports

_LAZY = {
    "all_time_band": "stumpcheck.numerics.certified.region.all_time",
    "all_time_table": "stumpcheck.numerics.certified.region.all_time",
    "rate_constant": "stumpcheck.numerics.certified.region.all_time",
    "b4_band": "stumpcheck.numerics.certified.region.bounds",
    "band_table": "stumpcheck.numerics.certified.region.bounds",
    "entry_check": "stumpcheck.numerics.certified.region.bounds",
    "horizon": "stumpcheck.numerics.certified.region.bounds",
    "is_region_certificate": "stumpcheck.numerics.certified.region.certificate",
    "recheck_region": "stumpcheck.numerics.certified.region.certificate",
    "region_certificate": "stumpcheck.numerics.certified.region.certificate",
    "embed_region": "stumpcheck.numerics.certified.region.flow_certificate",
    "recheck_flow_region": "stumpcheck.numerics.certified.region.flow_certificate",
    "DEFAULT_REGION": "stumpcheck.numerics.certified.region.invariant_region",
    "OBLIGATIONS": "stumpcheck.numerics.certified.region.invariant_region",
    "Region": "stumpcheck.numerics.certified.region.invariant_region",
}

__all__ = list(_LAZY)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
