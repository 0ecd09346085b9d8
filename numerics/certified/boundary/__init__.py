"""Certified population parts of C7 and C8 (docs/model.md §7): the one-head boundary limitation and the symmetrizations, for every b ≥ b₀.

* :mod:`~stumpcheck.numerics.certified.boundary.one_head`: C7, sup over θ of |e| ≥ 1 − δ(b) with δ(b) = K/b
  (a witness θ = 1 − b⁻⁴ enclosed uniformly in ε = 1/b ∈ [0, 1/b₀], and the exact end θ = 1), while the
  interior sup is at most C/b;
* :mod:`~stumpcheck.numerics.certified.boundary.symmetrized`: C8, sup over θ of |e_pooled| ≤ K/b (a box proof
  in (θ, ε) on exact layer-variable forms), and e_averaged(0) = ½, e_averaged(1) = −½ exactly.

The forms they evaluate are derived and checked by SymPy in :mod:`stumpcheck.theory.boundary`;
:mod:`~stumpcheck.numerics.certified.boundary.certificate` writes either proof as a certificate (format
``stumpcheck-boundary-certificate/1``) and re-proves it from the file.
"""
