"""Certificates that ship with the package, re-checked (never trusted) by ``stumpcheck verify --quick``.

``flow_certificate_1e6_all_time.json``: the certified tube of the population flow from (10, 10) to T = 10⁶
(format ``stumpcheck-flow-certificate/2``, the fast layer's θ-integrals; ``stumpcheck flow --certified --t-max
1e6``) with the finite region b ∈ [30, 1000] (606 leaves) joined to the tail b ≥ 1000 (format
``stumpcheck-region-tail-certificate/2``, no assumptions) embedded, written by
:func:`stumpcheck.claims.population_all_time.build_committed_certificate`: C2–C4's certified statements for every
t ≥ T. ``stumpcheck recheck`` re-checks it like any flow certificate.
"""
