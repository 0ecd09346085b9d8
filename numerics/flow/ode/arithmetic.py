"""The number system a solve runs in: float64 (numpy) or mpmath at a fixed precision.

The solvers and :func:`~stumpcheck.numerics.flow.ode.adaptive` are written once against
this small context (mpmath's own design: algorithms take a context instead of
a number type). A state is a 1-d numpy array: ``float64`` for
:data:`FLOAT64`, ``object`` holding ``mpf`` for :class:`MPArithmetic`; the
arithmetic operators act elementwise on both. Method coefficients are stored
as exact rationals (``fractions.Fraction``) and converted once per solve by
:meth:`scalar`, so a method whose coefficients are rational is exact at every
precision.

:class:`MPArithmetic` raises mpmath's working precision to ``dps`` digits
plus guard bits only inside :meth:`working` (a scoped block that restores the
caller's precision, even on error).
"""

from __future__ import annotations

import contextlib
import math
from fractions import Fraction

import mpmath
import numpy as np

from stumpcheck.numerics.precision import guard_bits, validate_dps

__all__ = ["Float64Arithmetic", "MPArithmetic", "FLOAT64"]

_BITS_PER_DIGIT = math.log2(10)


class Float64Arithmetic:
    """IEEE double precision with numpy arrays."""

    name = "float64"
    unit_roundoff = 2.0 ** -53

    def working(self):
        return contextlib.nullcontext()

    def scalar(self, value) -> float:
        return float(value)

    def array(self, values) -> np.ndarray:
        return np.array([float(v) for v in np.ravel(np.asarray(values, dtype=object))], dtype=float)

    def matrix_solve(self, matrix, rhs) -> np.ndarray:
        """x with matrix·x = rhs (LU with partial pivoting)."""
        return np.linalg.solve(np.asarray(matrix, dtype=float), np.asarray(rhs, dtype=float))

    def identity(self, n: int) -> np.ndarray:
        return np.eye(n)

    def exp(self, x):
        return math.exp(x)

    def log1p(self, x):
        return math.log1p(x)

    def expm1(self, x):
        return math.expm1(x)

    def is_finite(self, values) -> bool:
        return bool(np.all(np.isfinite(values)))

    def to_float(self, values) -> np.ndarray:
        return np.asarray(values, dtype=float)


class MPArithmetic:
    """mpmath at ``dps`` decimal digits (plus :func:`stumpcheck.numerics.precision.guard_bits`).

    Inside :meth:`working` the mpmath precision is ``prec`` bits; states are
    numpy object arrays of ``mpf``; linear systems are solved by
    ``mpmath.lu_solve`` at that precision.
    """

    name = "mpmath"

    def __init__(self, dps: int):
        self.dps = validate_dps(dps)
        self.prec = int(math.ceil(self.dps * _BITS_PER_DIGIT)) + guard_bits(self.dps)
        self.unit_roundoff = 2.0 ** -self.prec

    def __repr__(self) -> str:
        return f"MPArithmetic(dps={self.dps})"

    def working(self):
        return mpmath.workprec(self.prec)

    def scalar(self, value):
        if isinstance(value, Fraction):
            return mpmath.mpf(value.numerator) / value.denominator
        return mpmath.mpf(value)

    def array(self, values) -> np.ndarray:
        flat = list(np.ravel(np.asarray(values, dtype=object)))
        out = np.empty(len(flat), dtype=object)
        for i, v in enumerate(flat):
            out[i] = self.scalar(v)
        return out

    def matrix_solve(self, matrix, rhs) -> np.ndarray:
        """x with matrix·x = rhs: Gaussian elimination with partial pivoting (2×2 written out, the
        flow's size; larger systems by ``mpmath.lu_solve``)."""
        m = np.asarray(matrix, dtype=object)
        if m.shape == (2, 2):
            (p, q), (r, t) = m
            u, v = rhs[0], rhs[1]
            if abs(r) > abs(p):  # pivot on the larger entry of the first column
                (p, q, u), (r, t, v) = (r, t, v), (p, q, u)
            if p == 0:
                raise ZeroDivisionError("matrix is numerically singular")
            factor = r / p
            pivot = t - factor * q
            if pivot == 0:
                raise ZeroDivisionError("matrix is numerically singular")
            second = (v - factor * u) / pivot
            return self.array([(u - q * second) / p, second])
        solution = mpmath.lu_solve(mpmath.matrix(m.tolist()), mpmath.matrix(list(rhs)))
        return self.array([solution[i] for i in range(len(rhs))])

    def identity(self, n: int) -> np.ndarray:
        out = np.empty((n, n), dtype=object)
        for i in range(n):
            for j in range(n):
                out[i, j] = mpmath.mpf(int(i == j))
        return out

    def exp(self, x):
        return mpmath.exp(x)

    def log1p(self, x):
        return mpmath.log1p(x)

    def expm1(self, x):
        return mpmath.expm1(x)

    def is_finite(self, values) -> bool:
        return all(mpmath.isfinite(v) for v in np.ravel(values))

    def to_float(self, values) -> np.ndarray:
        return np.array([float(v) for v in np.ravel(values)], dtype=float).reshape(np.shape(values))


#: The default arithmetic of a solve.
FLOAT64 = Float64Arithmetic()
