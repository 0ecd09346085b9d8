"""The symbols of docs/model.md and their assumptions.

Every module in :mod:`stumpcheck.theory` takes its symbols from here so that expressions
built in different places combine (SymPy identifies symbols by name *and*
assumptions).

==========  ===============================================================
symbol      meaning (docs/model.md)
==========  ===============================================================
``a``       label score, real
``b``       feature score = attention scale ("resolution"), b > 0
``theta``   threshold θ ∈ [0, 1]; declared positive so that SymPy's
            integrals over [0, θ] and [θ, 1] need no case split (the
            endpoints θ ∈ {0, 1} are limits, handled by the stable form)
``x``       feature value, x ∈ [0, 1]
``beta``    generic rate argument of the truncated-exponential functions
``u``       left layer variable u = b·θ
``v``       right layer variable v = b·(1 − θ)
``eps``     ε = 1/b, the small parameter of the large-scale analysis
``lam``     λ = a − b, the label-score excess over the feature score
``r``       r = e^{−λ} = e^{b − a}, the weight of the right boundary layer
``t``       gradient-flow time
==========  ===============================================================
"""

from __future__ import annotations

import sympy as sp

a = sp.Symbol("a", real=True)
b = sp.Symbol("b", positive=True)
theta = sp.Symbol("theta", positive=True)
x = sp.Symbol("x", real=True)
beta = sp.Symbol("beta", real=True)

u = sp.Symbol("u", positive=True)
v = sp.Symbol("v", positive=True)
eps = sp.Symbol("epsilon", positive=True)
lam = sp.Symbol("lambda", real=True)
r = sp.Symbol("r", positive=True)
t = sp.Symbol("t", positive=True)

#: Integration variable of the boundary-layer integrals (y = e^v).
y = sp.Symbol("y", positive=True)
#: Summation index.
k = sp.Symbol("k", integer=True, positive=True)

__all__ = ["a", "b", "theta", "x", "beta", "u", "v", "eps", "lam", "r", "t", "y", "k"]
