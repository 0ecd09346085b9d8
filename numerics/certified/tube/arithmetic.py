"""The arithmetic of the tube's θ-integrals: the fast float64 layer first, Arb where it does not suffice.

The tube needs three kinds of rigorous θ-integrals (docs/certified_flow.md): ∇L at the tiny balls z̃(x_j)
(point defects), ∇²L there (the logarithmic norm), and ∇L over complex (a, b) rectangles (the
Bernstein-ellipse cells of the defect and the bound G). With ``arithmetic="fast"`` each is enclosed first
in the outward-rounded float64 intervals of :mod:`stumpcheck.numerics.certified.fast` and converted to an
Arb ball that contains the float interval (so everything downstream, the interpolants, δ, μ and the
Gronwall chain, stays in Arb):

* ∇L at a point: :func:`stumpcheck.numerics.certified.fast.theta_integrals.loss_gradient_enclosure_counted`
  (Gauss–Legendre with a Bernstein-ellipse remainder); kept when each component's width is at most
  :data:`GRADIENT_WIDTH` = 2⁻⁴¹ of max(|∂L/∂a|, |∂L/∂b|) (the defect d = z̃' + e^s∇L is needed to a
  fraction of |F| = e^s|∇L|, not of each component; the Arb integrals are asked for 2⁻⁴⁴ at the default 84 bits, the
  fast ones give ~2⁻⁴⁴), else Arb (:func:`stumpcheck.numerics.certified.tube.points.point_gradient`);
* ∇²L at a point: :func:`stumpcheck.numerics.certified.fast.hessian.hessian_enclosure`; kept when it succeeded
  and each entry's width is at most :data:`HESSIAN_WIDTH` = 2⁻³⁶ of the largest entry's modulus (the Arb
  integrals' relative tolerance at the default precision), else Arb
  (:func:`stumpcheck.numerics.certified.tube.points.point_hessian`);
* ∇L over a complex cell: :func:`stumpcheck.numerics.certified.fast.complex_parameters.gradient_rectangle` on
  each pair of parts of the :data:`CELL_GRID` grid of the cell's rectangles of a and b (the parts cover the
  cell; the bounds take the largest modulus over them); a part it cannot bound (a term not finite), or whose
  bound the caller does not accept (a re-check confirming recorded bounds), is cut in two along each of its
  four real coordinates (re a, im a, re b, im b: 16 sub-rectangles covering it) and each tried again; if one
  still fails, the whole cell is enclosed by Arb
  (:func:`stumpcheck.numerics.certified.tube.complex_gradient.complex_gradient`). A re-check in Arb of bounds the
  fast layer's parts gave (tighter than Arb's single ball over a cell) encloses the same parts in Arb.

Every choice between them only decides how tight and how fast; each enclosure is rigorous under its own
assumptions (the fast layer's: :data:`stumpcheck.numerics.certified.fast.rounding.ASSUMPTIONS`). With
``arithmetic="arb"`` all integrals are Arb's, as before the fast layer. :class:`Counts` counts what each
kind used; :func:`arithmetic_record` is the certificate's ``arithmetic`` field and :func:`record_fault` checks
one read back.
"""

from __future__ import annotations

import math
import platform

from flint import acb, arb

__all__ = ["ARITHMETICS", "GRADIENT_WIDTH", "HESSIAN_WIDTH", "Counts", "gradient_at", "hessian_at",
           "complex_gradient_at", "arithmetic_record", "record_fault", "check_arithmetic", "FAST_METHOD"]

ARITHMETICS = ("fast", "arb")
GRADIENT_WIDTH = 2.0 ** -41
#: each cell's rectangles of a and of b are cut into this grid (real parts × imaginary parts) before the fast
#: layer encloses ∇L on each pair of parts: rectangular arithmetic overestimates less on smaller parts (G and M
#: 4–8 × tighter than Arb's on one wide ball, at a tenth of Arb's cost; measured on the tube to 10⁶)
CELL_GRID = (2, 1)
#: the cells of each Bernstein ellipse (of the θ-rule's remainder) in the point gradients and Hessians: two
#: quarters; the remainder at ρ = 4 is ~10⁻²⁸ relative, so a crude M costs nothing in width (measured at the 552
#: rows of the tube to 10⁶: the same widths as the 8 × 4 default, 3.9 × faster for the gradients)
ELLIPSE_GRID = (2, 1)
HESSIAN_WIDTH = 2.0 ** -36
KINDS = ("gradients", "hessians", "cells")
FAST_METHOD = ("float64 intervals (numba, outward rounding after every operation): point gradients and Hessians "
               "of L by Gauss-Legendre on the breakpoint pieces with a Bernstein-ellipse remainder (Hessian "
               "integrand translated from the generated one-head jet; its remainder by a Cauchy estimate from |e| "
               "on complex (a, b) polydisks), complex cells by first-order sums in complex rectangle arithmetic; "
               "Arb (acb.integral) where a fast enclosure is wider than 2^-41 (gradients), 2^-36 (Hessians), or a "
               "cell and its 16 halves are not bounded")


def check_arithmetic(arithmetic: str) -> str:
    if arithmetic not in ARITHMETICS:
        raise ValueError(f"the tube's arithmetic must be one of {', '.join(ARITHMETICS)}, got {arithmetic!r}")
    return arithmetic


class Counts:
    """How many integrals of each kind (gradients, hessians, cells) each arithmetic enclosed; ``split`` counts
    cells decided by their 16 sub-rectangles."""

    def __init__(self, data: dict | None = None):
        self.data = {kind: {"fast": 0, "arb": 0} for kind in KINDS}
        self.data["cells"]["split"] = 0
        for kind, row in (data or {}).items():
            for key, value in row.items():
                self.data[kind][key] = self.data[kind].get(key, 0) + int(value)

    def add(self, kind: str, how: str) -> None:
        self.data[kind][how] += 1

    def merge(self, other) -> None:
        for kind, row in (other.data if isinstance(other, Counts) else other).items():
            for key, value in row.items():
                self.data[kind][key] = self.data[kind].get(key, 0) + int(value)

    def as_json(self) -> dict:
        return {kind: dict(row) for kind, row in self.data.items()}


def _below(x: arb) -> float:
    f = float(x)
    return f if arb(f) <= x else math.nextafter(f, -math.inf)


def _above(x: arb) -> float:
    f = float(x)
    return f if arb(f) >= x else math.nextafter(f, math.inf)


def to_pair(x: arb) -> tuple[float, float]:
    """Doubles (lo, hi) with [lo, hi] ⊇ the ball x."""
    return _below(x.lower()), _above(x.upper())


def to_ball(lo: float, hi: float) -> arb:
    """A ball containing [lo, hi] (union of the exact ends, rounded outward)."""
    return arb(float(lo)).union(arb(float(hi)))


def _relative_ok(lo: float, hi: float, scale: float, limit: float) -> bool:
    return math.isfinite(lo) and math.isfinite(hi) and hi - lo <= limit * scale


def gradient_at(a: arb, b: arb, arithmetic: str = "fast", counts: Counts | None = None) -> tuple[arb, arb]:
    """Balls containing (∂L/∂a, ∂L/∂b) at every (a, b) of the real balls a × b (module docstring)."""
    from stumpcheck.numerics.certified.tube.points import point_gradient

    if arithmetic == "fast":
        try:
            from stumpcheck.numerics.certified.fast.theta_integrals import loss_gradient_enclosure_counted

            out, _ = loss_gradient_enclosure_counted(to_pair(a), to_pair(b), grid=ELLIPSE_GRID)
            (alo, ahi), (blo, bhi) = out[1], out[2]
            scale = min(max(abs(alo), abs(blo)), max(abs(ahi), abs(bhi)))
            if _relative_ok(alo, ahi, scale, GRADIENT_WIDTH) and _relative_ok(blo, bhi, scale, GRADIENT_WIDTH):
                if counts is not None:
                    counts.add("gradients", "fast")
                return to_ball(alo, ahi), to_ball(blo, bhi)
        except (ArithmeticError, ValueError):
            pass
    if counts is not None:
        counts.add("gradients", "arb")
    return point_gradient(a, b)


def hessian_at(a: arb, b: arb, arithmetic: str = "fast", counts: Counts | None = None) -> tuple[arb, arb, arb]:
    """Balls containing (∂²L/∂a², ∂²L/∂a∂b, ∂²L/∂b²) at every (a, b) of the real balls a × b (module
    docstring)."""
    from stumpcheck.numerics.certified.tube.points import point_hessian

    if arithmetic == "fast":
        try:
            from stumpcheck.numerics.certified.fast.hessian import hessian_enclosure

            out, ok = hessian_enclosure(to_pair(a), to_pair(b), grid=ELLIPSE_GRID)
            scale = float(max(abs(out[0][0]), abs(out[0][1]), abs(out[2][0]), abs(out[2][1])))
            if ok and all(_relative_ok(lo, hi, scale, HESSIAN_WIDTH) for lo, hi in out) and scale > 0:
                if counts is not None:
                    counts.add("hessians", "fast")
                return tuple(to_ball(lo, hi) for lo, hi in out)
        except (ArithmeticError, ValueError):
            pass
    if counts is not None:
        counts.add("hessians", "arb")
    return point_hessian(a, b)


def _rectangle(z: acb) -> tuple[float, float, float, float]:
    return (*to_pair(z.real), *to_pair(z.imag))


def _finite_rects(rects) -> bool:
    return all(math.isfinite(x) for rect in rects for x in rect)


def _halves(rect):
    """The rectangle cut in two along its real and its imaginary part (4 quarters, their ends doubles)."""
    rlo, rhi, ilo, ihi = rect
    rmid, imid = 0.5 * rlo + 0.5 * rhi, 0.5 * ilo + 0.5 * ihi
    return [(r0, r1, i0, i1) for r0, r1 in ((rlo, rmid), (rmid, rhi)) for i0, i1 in ((ilo, imid), (imid, ihi))]


def _ball(rect) -> acb:
    return acb(to_ball(rect[0], rect[1]), to_ball(rect[2], rect[3]))


def _grid(rect, parts):
    """The rectangle cut into parts[0] × parts[1] equal pieces along its real and imaginary part (their ends
    doubles shared by neighbours, so that they cover it)."""
    rlo, rhi, ilo, ihi = rect
    res = [rlo] + [rlo + (rhi - rlo) * i / parts[0] for i in range(1, parts[0])] + [rhi]
    ims = [ilo] + [ilo + (ihi - ilo) * j / parts[1] for j in range(1, parts[1])] + [ihi]
    return [(res[i], res[i + 1], ims[j], ims[j + 1]) for i in range(parts[0]) for j in range(parts[1])]


def _fast_parts(ra, rb, good):
    """([(∂L/∂a rectangle, ∂L/∂b rectangle)] over the :data:`CELL_GRID` parts of ra × rb, a part that fails cut
    in two along each of its four real coordinates, whether one was cut), or None if a cut part still fails."""
    from stumpcheck.numerics.certified.fast.complex_parameters import gradient_rectangle

    out, cut = [], False
    for qa in _grid(ra, CELL_GRID):
        for qb in _grid(rb, CELL_GRID):
            (ga, gb), ok = gradient_rectangle(qa, qb)
            if good(ga, gb, ok):
                out.append((ga, gb))
                continue
            cut = True
            for ha in _halves(qa):
                for hb in _halves(qb):
                    (ga, gb), ok = gradient_rectangle(ha, hb)
                    if not good(ga, gb, ok):
                        return None
                    out.append((ga, gb))
    return out, cut


def _arb_parts(a: acb, b: acb, accept) -> list:
    """Arb's enclosures: one ball over the whole cell; when ``accept`` rejects it (a re-check confirming bounds
    that the fast layer's finer parts gave), the same parts as the fast layer's, each not accepted cut in 16."""
    from stumpcheck.numerics.certified.tube.complex_gradient import complex_gradient

    whole = complex_gradient(a, b)
    if accept is None or accept(*whole):
        return [whole]
    out = []
    ra, rb = _rectangle(acb(a)), _rectangle(acb(b))
    for qa in _grid(ra, CELL_GRID):
        for qb in _grid(rb, CELL_GRID):
            part = complex_gradient(_ball(qa), _ball(qb))
            if accept(*part):
                out.append(part)
                continue
            out.extend(complex_gradient(_ball(ha), _ball(hb)) for ha in _halves(qa) for hb in _halves(qb))
    return out


def complex_gradient_at(a: acb, b: acb, arithmetic: str = "fast", counts: Counts | None = None,
                        accept=None) -> list:
    """[(ball of ∂L/∂a, ball of ∂L/∂b)] over parts covering the complex rectangles a × b: each contains ∇L at
    every (a, b) of its part; ArithmeticError if no arithmetic gives a finite enclosure. The fast parts: the
    :data:`CELL_GRID` grid of each rectangle, a failing part cut in 16 (module docstring); Arb otherwise
    (:func:`_arb_parts`). ``accept(ga, gb)`` (balls) is a test a part must pass too (a re-check passes the
    recorded bounds it confirms; the caller still compares the parts' bounds with the records)."""

    def good(ga, gb, ok):
        return ok and _finite_rects((ga, gb)) and (accept is None or accept(_ball(ga), _ball(gb)))

    if arithmetic == "fast":
        ra, rb = _rectangle(acb(a)), _rectangle(acb(b))
        if rb[0] > 0 and _finite_rects((ra, rb)):
            found = _fast_parts(ra, rb, good)
            if found is not None:
                if counts is not None:
                    counts.add("cells", "split" if found[1] else "fast")
                return [(_ball(ga), _ball(gb)) for ga, gb in found[0]]
    if counts is not None:
        counts.add("cells", "arb")
    return _arb_parts(a, b, accept)


def _environment() -> dict:
    import numba

    return {"machine": platform.machine(), "libc": " ".join(platform.libc_ver()) or "unknown",
            "numba": numba.__version__, "python": platform.python_version()}


def arithmetic_record(arithmetic: str, counts: Counts) -> dict:
    """The certificate's ``arithmetic`` field: which arithmetic built the tube's integrals, how many of each kind
    each enclosed, and for the fast layer its method, assumptions and the environment it ran in."""
    record = {"integrals": check_arithmetic(arithmetic), "counts": counts.as_json()}
    if arithmetic == "fast":
        from stumpcheck.numerics.certified.fast.rounding import ASSUMPTIONS

        record.update({"method": FAST_METHOD, "assumptions": dict(ASSUMPTIONS), "environment": _environment()})
    return record


#: the assumptions' rules (not the environment entries, which name where the proof ran)
_RULES = ("arithmetic", "rounding_mode", "outward_rounding", "fused_operations", "libm", "trig")


def record_fault(record, intervals: int, *, required: bool = False) -> str | None:
    """Why the ``arithmetic`` record read from a certificate is not one this version writes, or None. ``required``
    (format /3): a certificate without it is refused; otherwise (format /2, written before the record existed)
    no record is read as "not recorded". Informational for the proof (a re-check encloses every integral again),
    but an edited or deleted record is a false statement about how the tube was proved."""
    from stumpcheck.numerics.certified.fast.rounding import ASSUMPTIONS

    if record is None:
        return ("the certificate has no arithmetic record (how its θ-integrals were enclosed): format /3 requires it"
                if required else None)
    if not isinstance(record, dict) or record.get("integrals") not in ARITHMETICS:
        return "the arithmetic record needs 'integrals': 'fast' or 'arb'"
    fields = {"integrals", "counts"} | ({"method", "assumptions", "environment"} if record["integrals"] == "fast"
                                        else set())
    if set(record) != fields:
        return (f"the arithmetic record of {record['integrals']!r} integrals must hold exactly "
                f"{', '.join(sorted(fields))}")
    counts = record["counts"]
    expected = {kind: {"fast", "arb"} | ({"split"} if kind == "cells" else set()) for kind in KINDS}
    if not (isinstance(counts, dict) and set(counts) == set(expected)
            and all(isinstance(counts[k], dict) and set(counts[k]) == expected[k] for k in KINDS)
            and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0
                    for k in KINDS for v in counts[k].values())):
        return "the arithmetic record's counts must give, per kind, integers >= 0 for each arithmetic"
    if record["integrals"] == "arb" and any(counts[k][x] for k in KINDS for x in counts[k] if x != "arb"):
        return "the arithmetic record says Arb but counts fast integrals"
    if intervals and not all(sum(counts[k].values()) > 0 for k in KINDS):
        return "the arithmetic record counts no integral of some kind, yet the tube has intervals"
    if record["integrals"] == "fast":
        assumptions = record["assumptions"]
        if not isinstance(assumptions, dict) or any(assumptions.get(k) != ASSUMPTIONS[k] for k in _RULES):
            return "the arithmetic record's assumptions are not the fast layer's (edited, or another version's)"
        if record["method"] != FAST_METHOD:
            return "the arithmetic record's method is not the fast layer's"
        environment = record["environment"]
        if not (isinstance(environment, dict) and all(isinstance(v, str) for v in environment.values())):
            return "the arithmetic record's environment must map names to text"
    return None
