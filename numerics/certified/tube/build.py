"""A certified tube around the population flow: boxes that provably contain (a(t), b(t)) for t ∈ [0, T].

Method: a-posteriori validation of a float64 solution with analytic (Bernstein-ellipse) defect bounds.
In s = log(1 + t), dz/ds = F(s, z) = −e^s ∇L(z). The float64 flow is cut into intervals S_k, each carrying a
Chebyshev collocation piece z̃_k of degree ≤ 24 (:mod:`stumpcheck.numerics.certified.tube.float_solution`; exact binary
coefficients; the pieces need not join). For each interval, independently (so in worker processes):

* the defect d = z̃' − F(s, z̃) is bounded on S by its Chebyshev interpolant through rigorous point
  defects plus 4Mρ^{−n}/(ρ − 1), M ≥ |d| on the Bernstein ellipse E_ρ from ∇L at complex (a, b) rectangles
  (:mod:`stumpcheck.numerics.certified.tube.defect`, :mod:`stumpcheck.numerics.certified.tube.analytic`). This bound does not
  pay the stiffness times a box width, as a mean-value form over the hull of z̃(S) does: d is small on
  the whole ellipse, and the error decays geometrically in n, so intervals are long (the step is set by
  the distance of the complex singularities of ∇L, about |F|·h ≲ 1);
* the Euclidean logarithmic norm −e^s λ_min(∇²L) near z̃(s) on sub-intervals, from the Hessian along z̃
  interpolated the same way, with Cauchy estimates for the distance to the true solution
  (:mod:`stumpcheck.numerics.certified.tube.lognorm`).

Then the Gronwall chain (:func:`stumpcheck.numerics.certified.tube.piece.gronwall_step`, cheap, in this process)
adds the jumps between pieces, confirms the a-priori radius ρ_k and gives one box per sub-interval.
Every bound is rigorous: the θ-integrals in the fast float64 interval layer with Arb where it does not
suffice, or in Arb only (``arithmetic``, :mod:`stumpcheck.numerics.certified.tube.arithmetic`), everything
after them in Arb balls; the float solve, the steps, ρ_k and the settings only decide how tight and how fast
the tube is. An interval whose integrals fail or whose radius is not
confirmed for ρ ≤ ``RHO_MAX`` is split in two; the validation stops (never a partial tube called complete)
at the first one still failing after ``_MAX_SPLITS`` splits, or at the time limit; the result says where and why.

Resumable: with a checkpoint file the finished intervals' integrals are appended as they come and are
reused by a later run with the same settings (the pieces are recomputed identically and matched by content).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from fractions import Fraction

from flint import arb, ctx, fmpq

from stumpcheck.numerics.certified.tube.arithmetic import Counts
from stumpcheck.numerics.certified.tube.chebyshev import ChebyshevPiece
from stumpcheck.numerics.certified.tube.float_solution import collocation_piece, contraction_estimate, plan_pieces
from stumpcheck.numerics.certified.tube.workers import (BoundsCheckpoint, bound_bits, compute_bounds,
                                                          interval_key, piece_json, run_bounds)
from stumpcheck.numerics.certified.tube.records import lower_decimal, padded_upper, parse_upper, upper_decimal
from stumpcheck.numerics.certified.tube.piece import (RHO_MAX, Settings, ball_from_json, delta_from, gronwall_step,
                                                        jump, sub_interval_s)
from stumpcheck.numerics.precision import InputError

__all__ = ["TubeInterval", "Tube", "certified_tube", "MAX_TUBE_T", "MIN_TUBE_T", "check_tube_arguments", "PADDING",
           "step_budget"]

#: The largest T accepted (s_T = log(1 + T) ≈ 27.6).
MAX_TUBE_T = 1e12
#: The smallest T accepted (a tube to 1e-12 is one interval; far below, the float solve's step underflows)
MIN_TUBE_T = 1e-12
#: relative padding of the recorded δ, μ (50 % of M, 10 % of G: G enters μ linearly, M only δ's tiny ellipse
#: term): a re-check at another precision stays below them
PADDING = 0.05
BOUND_PADDING = 0.5
G_PADDING = 0.1
#: imaginary offset of z̃ on the Bernstein ellipse aimed at by the step (see stumpcheck.numerics.certified.tube.float_solution),
#: while the flow is not yet contracting; ``CONTRACTED_IMAG_BUDGET`` once the float64 logarithmic norm at the
#: piece's start is below ``CONTRACTED_MU`` (t ≳ 3e3 from (10, 10)), where μ has room for larger Cauchy terms.
#: Measured along the flow from (10, 10), one interval each (G, μ against the budget 0.25): budget 0.5 at
#: t = 3.3e3, 6.0e4, 5.1e5: h 1.8–2.0 × longer, G ×7–8, μ −0.22, −0.56, −0.64 (−0.27, −0.65, −0.68), δ ≲ 1e-8;
#: budget 0.7 at t = 5.1e5: G ×40, μ = +0.006 (no contraction left); 0.75 beyond t = 3.5e4 stopped at t ≈ 6e4
#: (μ ≈ +1 … +4, radius not confirmed). A tuning choice: any budget gives valid bounds, a split or a stop
#: that says where.
IMAG_BUDGET = 0.25
CONTRACTED_IMAG_BUDGET = 0.5
CONTRACTED_MU = -0.25
MAX_STEP = 1.0
DEGREE = 24
_MAX_SPLITS = 3
_BOX_DIGITS = 15


@dataclass
class TubeInterval:
    """One validated interval: the piece, the recorded bounds (decimal strings, upper bounds), and per
    sub-interval the time interval, μ, the radii and the box (a_lo, a_hi, b_lo, b_hi as exact arb ends)."""

    piece: ChebyshevPiece
    record: dict
    rows: list  # [(t_lo, t_hi, a_lo, a_hi, b_lo, b_hi)] decimals, one per sub-interval
    box: tuple  # (a_lo, a_hi, b_lo, b_hi) exact arb ends: the union of the rows' boxes

    @property
    def s0(self) -> float:
        return self.piece.s0

    @property
    def s1(self) -> float:
        return self.piece.s1


@dataclass
class Tube:
    """The validated intervals from s = 0 up to ``s_reached``; ``complete`` iff s_reached ≥ log(1 + T)."""

    a0: float
    b0: float
    r0: str
    t_max: float
    intervals: list = field(default_factory=list)
    complete: bool = False
    stop_reason: str = ""
    dps: int = 15
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    integral_cpu_seconds: float = 0.0  # the CPU of all the tube's intervals' integrals (also those resumed)
    rigorous_integrals: int = 0
    rejected: int = 0
    settings: Settings = field(default_factory=Settings)
    workers: int = 1
    arithmetic: str = "fast"
    counts: Counts = field(default_factory=Counts)  # integrals of the tube's intervals by arithmetic

    @property
    def s_reached(self) -> float:
        return self.intervals[-1].s1 if self.intervals else 0.0

    @property
    def t_reached(self) -> float:
        return math.expm1(self.s_reached)


def step_budget(s: float, z) -> float:
    """The imaginary budget of the piece starting at (s, z): ``IMAG_BUDGET``, or ``CONTRACTED_IMAG_BUDGET`` where
    the float64 logarithmic norm −e^s λ_min(∇²L(z)) is below ``CONTRACTED_MU`` (steering only)."""
    try:
        contracting = contraction_estimate(s, z) <= CONTRACTED_MU
    except (ArithmeticError, ValueError):
        contracting = False
    return CONTRACTED_IMAG_BUDGET if contracting else IMAG_BUDGET


def check_tube_arguments(a0: float, b0: float, t_max: float, rel_goal: float, r0: float = 0.0) -> None:
    """InputError (one line) unless the request can be attempted."""
    for name, value in (("a0", a0), ("b0", b0), ("t-max", t_max), ("rel-goal", rel_goal), ("initial radius", r0)):
        if not math.isfinite(value):
            raise InputError(f"{name} must be a finite number, got {value}")
    if not 1 <= b0 <= 1e3 or abs(a0) > 1e3:
        raise InputError(f"the certified tube starts from 1 <= b0 <= 1000 and |a0| <= 1000, got a0={a0}, b0={b0}")
    if not MIN_TUBE_T <= t_max <= MAX_TUBE_T:
        raise InputError(f"t-max must be in [{MIN_TUBE_T:g}, {MAX_TUBE_T:g}] for the certified tube, got {t_max:g}")
    if not 1e-12 <= rel_goal < 1:
        raise InputError(f"rel-goal must be in [1e-12, 1), got {rel_goal:g}")
    if not 0 <= r0 < 1e-6:
        raise InputError(f"the initial radius must be in [0, 1e-6), got {r0:g}")


def _outward(x: arb, sign: int) -> arb:
    # 1e-11 relative beyond the ball's end: room for the hull a re-check computes at another precision
    return x + abs(x) * arb(sign * 1e-11)


def _chain_interval(piece, record_bounds, settings, r_start_text):
    """The recorded interval (TubeInterval) from its bounds and the radius at its start, or a reason."""
    p_texts = [upper_decimal(ball_from_json(x), 4) for x in record_bounds["p"]]
    m_texts = [padded_upper(ball_from_json(x), BOUND_PADDING, 4) for x in record_bounds["m"]]
    delta_text = padded_upper(delta_from(p_texts, m_texts, settings), 1e-6, 6)
    g_text = padded_upper(ball_from_json(record_bounds["g"]), G_PADDING, 4)
    hessians = [tuple(ball_from_json(x) for x in h) for h in record_bounds["hessians"]]
    delta, g, r_start = parse_upper(delta_text), parse_upper(g_text), parse_upper(r_start_text)
    h = float(piece.s1 - piece.s0)
    # the smallest ρ that is confirmed, within a factor 2: μ grows with ρ (the Cauchy term √2ρG/R²)
    rho = max(1.25 * (float(r_start.mid()) + float(delta.mid()) * h), 1e-13)
    while True:
        rho_text = upper_decimal(arb(min(rho, float(RHO_MAX))), 3)
        step = gronwall_step(piece, settings, delta, g, hessians, r_start, parse_upper(rho_text))
        chained = None if step is None else _recorded_chain(piece, settings, step, delta, r_start, rho_text)
        if chained is not None:
            break
        if rho >= float(RHO_MAX):
            return None, (f"the a-priori radius was not confirmed on s in [{piece.s0:.6g}, {piece.s1:.6g}] "
                          f"(rho up to {float(RHO_MAX):g}; delta <= {delta_text})")
        rho *= 2
    mu_texts, ends, sups, rows, boxes = chained
    record = {"piece": piece_json(piece), "p": p_texts, "m": m_texts, "delta": delta_text, "g": g_text,
              "rho": rho_text, "r_start": r_start_text, "mu": mu_texts, "r_end": ends, "r_sup": sups, "rows": [list(row) for row in rows]}
    union = (min((b[0] for b in boxes), key=float), max((b[1] for b in boxes), key=float),
             min((b[2] for b in boxes), key=float), max((b[3] for b in boxes), key=float))
    return TubeInterval(piece, record, rows, union), None


def _recorded_chain(piece, settings, step, delta, r_start, rho_text):
    """The chain with the recorded (rounded-up, padded) μ, as a re-check recomputes it: (μ texts, r_end texts,
    r_sup texts, rows, boxes), or None if a radius reaches ρ."""
    from stumpcheck.numerics.certified.tube.interval_v1 import radius_bound

    mus, _, _, hulls = step
    mu_texts = [padded_upper(mu, PADDING, 6, absolute=1e-9) for mu in mus]
    r, ends, sups, rows, boxes = r_start, [], [], [], []
    count = settings.subdivisions
    for i, mu_text in enumerate(mu_texts):
        s_lo, s_hi = sub_interval_s(piece, i, count)
        r_next = radius_bound(r, delta, parse_upper(mu_text), arb((s_hi - s_lo).upper()))
        end_text = padded_upper(r_next, 1e-9, 6)
        sup_text = upper_decimal(r.max(parse_upper(end_text)), 6)
        if not parse_upper(sup_text) < parse_upper(rho_text):
            return None
        ha, hb = hulls[i]
        rs = parse_upper(sup_text)
        box = (_outward((ha.lower() - rs).lower(), -1), _outward((ha.upper() + rs).upper(), 1),
               _outward((hb.lower() - rs).lower(), -1), _outward((hb.upper() + rs).upper(), 1))
        t_lo = "0" if piece.s0 == 0 and i == 0 else lower_decimal(s_lo.expm1(), _BOX_DIGITS)
        t_hi = upper_decimal(s_hi.expm1(), _BOX_DIGITS)
        rows.append((t_lo, t_hi, lower_decimal(box[0], _BOX_DIGITS), upper_decimal(box[1], _BOX_DIGITS),
                     lower_decimal(box[2], _BOX_DIGITS), upper_decimal(box[3], _BOX_DIGITS)))
        boxes.append(box)
        ends.append(end_text)
        sups.append(sup_text)
        r = parse_upper(end_text)
    return mu_texts, ends, sups, rows, boxes


def _split(piece: ChebyshevPiece) -> list:
    """Two collocation pieces covering the piece's interval (from its start value)."""
    start = (math.fsum(c * (-1) ** k for k, c in enumerate(piece.ca)), math.fsum(c * (-1) ** k for k, c in enumerate(piece.cb)))
    middle = 0.5 * (piece.s0 + piece.s1)
    first = collocation_piece(piece.s0, start, middle - piece.s0, DEGREE)
    end = (math.fsum(first.ca), math.fsum(first.cb))
    second = collocation_piece(middle, end, piece.s1 - middle, DEGREE)
    return [first, ChebyshevPiece(second.s0, piece.s1, second.ca, second.cb)]


def certified_tube(a0: float = 10.0, b0: float = 10.0, t_max: float = 100.0, *, rel_goal: float = 1e-6,
                   r0=0.0, dps: int = 15, time_limit: float | None = None, progress=None, workers: int = 1,
                   checkpoint=None, settings: Settings | None = None, imag_budget=step_budget,
                   max_step: float = MAX_STEP, max_intervals: int = 100_000, arithmetic: str = "fast") -> Tube:
    """The certified tube from the disk of radius r0 (a float or a Fraction) about (a0, b0) to T = t_max.

    ``rel_goal`` is checked against the tube's relative width in b at T afterwards (the method has no
    step control by the defect: its defects are ~1e-10); ``progress(fraction of s_T)`` is called as
    intervals finish; ``workers`` processes compute the intervals' integrals; ``checkpoint`` a file to
    resume from; after ``time_limit`` seconds no new interval is started (the tube is then incomplete).
    ``imag_budget``: a number or a function of a piece's start (s, z) (default :func:`step_budget`).
    ``arithmetic``: "fast" (the float64 layer first, Arb where it does not suffice) or "arb" (Arb only) for the
    intervals' integrals (:mod:`stumpcheck.numerics.certified.tube.arithmetic`); recorded with the counts.
    """
    from stumpcheck.numerics.certified.tube.arithmetic import check_arithmetic

    check_tube_arguments(a0, b0, t_max, rel_goal, float(r0))
    check_arithmetic(arithmetic)
    started, cpu_started = time.perf_counter(), time.process_time()
    settings = settings or Settings(dps=max(15, int(dps)))
    s_end = math.nextafter(math.nextafter(math.log1p(t_max), math.inf), math.inf)
    r0 = Fraction(r0)
    with ctx.workprec(128):
        r0_text = upper_decimal(arb(fmpq(r0.numerator, r0.denominator)), 6)
    tube = Tube(a0=float(a0), b0=float(b0), r0=r0_text, t_max=float(t_max), dps=settings.dps, settings=settings,
                workers=workers, arithmetic=arithmetic)
    try:
        pieces = plan_pieces(float(a0), float(b0), s_end, degree=DEGREE, rho=float(settings.rho_ellipse),
                             imag_budget=imag_budget, max_step=max_step, max_pieces=max_intervals)
    except ArithmeticError as exc:
        tube.stop_reason = f"the float64 solve failed: {exc}"
        return tube
    deadline = math.inf if time_limit is None else started + time_limit
    store = BoundsCheckpoint(checkpoint)
    resumed = set(store.done)
    if arithmetic == "fast" and workers > 1:
        from stumpcheck.numerics.certified.fast.hessian import compile_once

        compile_once()  # a cold cache: compiled here once, then loaded by each worker
    run_bounds(pieces, settings, store, workers, deadline, progress, s_end, arithmetic)
    cpu_workers = sum(store.done.get(interval_key(p, settings, arithmetic), {}).get("cpu", 0.0) for p in pieces
                      if interval_key(p, settings, arithmetic) not in resumed)
    with ctx.workprec(bound_bits(settings)):
        r_text = r0_text
        previous = None
        queue = list(pieces)
        splits = {}
        while queue:
            piece = queue.pop(0)
            bounds = store.done.get(interval_key(piece, settings, arithmetic))
            if bounds is None:
                tube.stop_reason = (f"the time limit of {time_limit:g} s was reached at t = {math.expm1(piece.s0):.6g}"
                                    if time_limit is not None else "an interval was not computed")
                break
            reason = None
            if "error" in bounds:
                reason = f"a rigorous integral failed on s in [{piece.s0:.6g}, {piece.s1:.6g}]: {bounds['error']}"
            else:
                r_in = upper_decimal(parse_upper(r_text) + jump(previous, piece, a0, b0), 6)
                interval, reason = _chain_interval(piece, bounds, settings, r_in)
            if reason is not None:  # split the piece in two, up to _MAX_SPLITS times, or stop here
                depth = splits.get((piece.s0, piece.s1), 0)
                if depth >= _MAX_SPLITS or time.perf_counter() >= deadline:
                    tube.stop_reason = reason
                    break
                tube.rejected += 1
                halves = _split(piece)
                for half in halves:
                    splits[(half.s0, half.s1)] = depth + 1
                    store.add(interval_key(half, settings, arithmetic),
                              compute_bounds(piece_json(half), settings.as_json(), arithmetic))
                    cpu_workers += store.done[interval_key(half, settings, arithmetic)].get("cpu", 0.0)
                queue = halves + queue
                continue
            tube.intervals.append(interval)
            tube.integral_cpu_seconds += bounds.get("cpu", 0.0)
            tube.counts.merge(bounds.get("counts", {}))
            tube.rigorous_integrals += (settings.defect_points + settings.hessian_points + 2
                                        + 2 * _cell_count(settings))
            r_text = interval.record["r_end"][-1]
            previous = piece
    tube.complete = bool(tube.intervals) and tube.intervals[-1].s1 >= s_end and not tube.stop_reason
    if not tube.complete and not tube.stop_reason:
        tube.stop_reason = f"stopped after {len(tube.intervals)} intervals (max_intervals)"
    tube.seconds = time.perf_counter() - started
    tube.cpu_seconds = time.process_time() - cpu_started + (cpu_workers if workers > 1 else 0.0)
    return tube


def _cell_count(settings: Settings) -> int:
    from stumpcheck.numerics.certified.tube.analytic import ellipse_cells

    return len(ellipse_cells(settings.rho_ellipse, *settings.cells))
