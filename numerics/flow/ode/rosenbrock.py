"""Linearly implicit (Rosenbrock) embedded pairs for stiff problems.

One step of dy/ds = f(s, y) with J = ∂f/∂y(s₀, y₀) and f_s = ∂f/∂s(s₀, y₀)
(Hairer & Wanner, *Solving ODEs II*, §IV.7, the form used by their RODAS):

    (I/(hγ) − J) k_i = f(s₀ + α_i h, y₀ + Σ_{j<i} a_ij k_j) + Σ_{j<i} (c_ij/h) k_j + d_i h f_s,
    y₁ = y₀ + Σ m_i k_i,          error estimate Σ e_i k_i.

Each stage costs one linear solve with the same matrix and (at most) one
field evaluation; no Newton iteration. With the exact Jacobian the methods
below are L-stable and stiffly accurate (y₁ is the last stage's point plus
its increment), so the step size is set by accuracy alone, not by the fast
relaxation of a stiff direction.

Coefficients are exact rationals: :data:`Rodas3` (Sandu et al. 1997, order
3 with an order-2 embedded estimate; all coefficients are small rationals, so
it is exact at every precision) and :data:`Rodas4` (Hairer & Wanner, order 4
with an order-3 estimate; the published coefficients have 16 significant
digits, so its order conditions hold to ~1e−16 and a solve with it is
accurate to ~1e−15 relative at best, whatever the working precision).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction as F

from stumpcheck.numerics.flow.ode.arithmetic import FLOAT64

__all__ = ["Rosenbrock", "Rodas3", "Rodas4"]


@dataclass(frozen=True)
class Rosenbrock:
    """A Rosenbrock embedded pair in Hairer–Wanner form (see the module docstring).

    ``order`` is the order of y₁; the error estimate is of order ``order − 1``
    (controller exponent 1/order). ``coefficient_digits`` is how many
    significant digits the coefficients are exact to (``None``: exact).
    """

    name: str
    order: int
    gamma: F
    alpha: tuple        # stage times α_i
    a: tuple            # lower-triangular rows a_ij (j < i)
    c: tuple            # lower-triangular rows c_ij (j < i)
    d: tuple            # d_i, the f_s coefficients
    m: tuple            # propagated weights
    e: tuple            # error weights
    coefficient_digits: int | None = None
    needs_jacobian: bool = field(default=True, init=False)

    def _reuses_previous_field(self, i: int) -> bool:
        """Stage i has the same point as stage i − 1 (KPP's "new F" flag, negated)."""
        if i == 0:
            return False
        previous = tuple(self.a[i - 1]) + (F(0),) * (len(self.a[i]) - len(self.a[i - 1]))
        return self.alpha[i] == self.alpha[i - 1] and tuple(self.a[i]) == previous

    def step(self, field, s, y, h, f0, linearization, arithmetic=FLOAT64):
        """One step: (y₁, error estimate, None). ``linearization`` = (J, f_s) at (s, y)."""
        jac, f_s = linearization
        sc = arithmetic.scalar
        hh = sc(h)
        n = len(y)
        matrix = arithmetic.identity(n) * (1 / (hh * sc(self.gamma))) - jac
        ks: list = []
        f_stage = f0
        for i in range(len(self.alpha)):
            if i > 0 and not self._reuses_previous_field(i):
                point = y + _combine(self.a[i], ks, sc)
                f_stage = field(s + sc(self.alpha[i]) * hh, point)
            rhs = f_stage + _combine(self.c[i], ks, sc) / hh
            if self.d[i]:
                rhs = rhs + (sc(self.d[i]) * hh) * f_s
            ks.append(arithmetic.matrix_solve(matrix, rhs))
        y_new = y + _combine(self.m, ks, sc)
        error = _combine(self.e, ks, sc)
        return y_new, error, None


def _combine(coefficients, vectors, sc):
    total = 0
    for coefficient, vector in zip(coefficients, vectors):
        if coefficient:
            total = total + sc(coefficient) * vector
    if isinstance(total, int):
        return 0 * vectors[0] if vectors else 0
    return total


# Rodas3 (Sandu, Verwer, Blom, Spee, Carmichael, Potra 1997): L-stable, stiffly accurate.
Rodas3 = Rosenbrock(
    name="Rodas3 (Rosenbrock 3(2), L-stable)", order=3, gamma=F(1, 2),
    alpha=(F(0), F(0), F(1), F(1)),
    a=((), (F(0),), (F(2), F(0)), (F(2), F(0), F(1))),
    c=((), (F(4),), (F(1), F(-1)), (F(1), F(-1), F(-8, 3))),
    d=(F(1, 2), F(3, 2), F(0), F(0)),
    m=(F(2), F(0), F(1), F(1)),
    e=(F(0), F(0), F(0), F(1)))


def _q(text: str) -> F:
    return F(text)


_R4_A5 = (_q("1.221224509226641"), _q("6.019134481288629"), _q("12.53708332932087"), _q("-0.6878860361058950"))

# Rodas4 (Hairer & Wanner 1996, RODAS with METH = 1): L-stable, stiffly accurate.
# Stage 6 is evaluated at (stage-5 point) + k₅ and y₁ = (stage-6 point) + k₆.
Rodas4 = Rosenbrock(
    name="Rodas4 (Rosenbrock 4(3), L-stable)", order=4, gamma=F(1, 4),
    alpha=(F(0), _q("0.386"), _q("0.21"), _q("0.63"), F(1), F(1)),
    a=((), (_q("1.544"),),
       (_q("0.9466785280815826"), _q("0.2557011698983284")),
       (_q("3.314825187068521"), _q("2.896124015972201"), _q("0.9986419139977817")),
       _R4_A5,
       _R4_A5 + (F(1),)),
    c=((), (_q("-5.6688"),),
       (_q("-2.430093356833875"), _q("-0.2063599157091915")),
       (_q("-0.1073529058151375"), _q("-9.594562251023355"), _q("-20.47028614809616")),
       (_q("7.496443313967647"), _q("-10.24680431464352"), _q("-33.99990352819905"), _q("11.70890893206160")),
       (_q("8.083246795921522"), _q("-7.981132988064893"), _q("-31.52159432874371"), _q("16.31930543123136"),
        _q("-6.058818238834054"))),
    d=(_q("0.25"), _q("-0.1043"), _q("0.1035"), _q("-0.03620000000000023"), F(0), F(0)),
    m=_R4_A5 + (F(1), F(1)),
    e=(F(0), F(0), F(0), F(0), F(0), F(1)),
    coefficient_digits=16)
