"""Claims C1–C4 of docs/model.md §7 as checks that report their evidence.

Each check returns a :class:`ClaimResult`: the figure it measured, the
tolerance it was held to, PASS or FAIL, the level of evidence (``sampled``,
``high-precision`` or ``certified``), the seconds it took and the details
needed to reproduce it (seed, precision, ranges). A FAIL is a result, shown
with its numbers, not an exception.
"""

from __future__ import annotations

import math
import time

import mpmath
import numpy as np

from stumpcheck.numerics.generated import asymptotics_numpy as derived
from stumpcheck.numerics.generated import population_mpmath as gen_mp
from stumpcheck.numerics.population.quantities import loss
from stumpcheck.numerics.flow.population_flow import FlowRun, run_population_flow
from stumpcheck.numerics.precision import InputError, agreeing_digits, validate_dps
from stumpcheck.claims.result import ClaimResult

__all__ = ["ClaimResult", "check_c1", "check_c2", "check_c3", "check_c4", "check_population_claims",
           "certified_direct_error", "direct_error_quadrature", "direct_loss_quadrature"]


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def direct_error_quadrature(a, b, theta):
    """θ̂∞ − θ from the defining integrals E[x e^s]/E[e^s], at the current precision.

    Independent of the derived forms: mpmath tanh-sinh on [0, θ] and [θ, 1]
    with ladders of points at distances 2^k/b from θ and from 0 (where e^{−bx}
    varies), scores shifted by their maximum max(0, a − bθ).
    """
    a, b, theta = mpmath.mpf(a), mpmath.mpf(b), mpmath.mpf(theta)
    shift = max(mpmath.mpf(0), a - b * theta)

    def ladder(lo, hi, anchor):
        points, step = {lo, hi}, 1 / b
        while step < hi - lo:
            if lo < anchor + step < hi:
                points.add(anchor + step)
            step *= 2
        return sorted(points)

    def moments(lo, hi, label):
        if hi <= lo:
            return mpmath.mpf(0), mpmath.mpf(0)
        pts = ladder(lo, hi, lo)
        weight = lambda x: mpmath.exp(a * label - b * x - shift)  # noqa: E731
        return mpmath.quad(weight, pts), mpmath.quad(lambda x: x * weight(x), pts)

    z0, n0 = moments(mpmath.mpf(0), theta, 0)
    z1, n1 = moments(theta, mpmath.mpf(1), 1)
    return (n0 + n1) / (z0 + z1) - theta


def certified_direct_error(a: float, b: float, theta: float, *, dps: int):
    """A rigorous Arb enclosure (an ``arb``) of θ̂∞ − θ from the defining integrals E[x e^s]/E[e^s].

    Independent of the derived forms: ``acb.integral`` of e^{s(x) − shift} and x·e^{s(x) − shift}
    (entire in x) on [0, θ] and [θ, 1], split at the ladder points θ₀ + 2^k/b (doubles, exact
    binary) of :func:`direct_error_quadrature`, shift = max(0, a − bθ); a, b, θ are doubles and
    enter exactly. Working precision dps·log₂10 + 32 + log₂(2 + |a| + b) bits, integration
    tolerance 2^-(that − 16) relative; the ball is rigorous whatever its width.
    """
    from flint import acb, arb, ctx

    bits = math.ceil(dps * math.log2(10)) + 32 + math.ceil(math.log2(2 + abs(a) + b))
    with ctx.workprec(bits):
        a_ball, b_ball, theta_ball = arb(a), arb(b), arb(theta)
        shift = max(0.0, a - b * theta)
        # the shift only scales numerator and denominator alike: any exact value will do
        shift_ball = arb(shift)
        tolerance = arb(2) ** -(bits - 16)

        def ladder(lo: float, hi: float) -> list[float]:
            points, step = {lo, hi}, 1 / b
            while step < hi - lo:
                if lo < lo + step < hi:
                    points.add(lo + step)
                step *= 2
            return sorted(points)

        def moments(lo: float, hi: float, label: int):
            if hi <= lo:
                return arb(0), arb(0)
            exponent = a_ball * label - shift_ball
            zeroth, first = acb(0), acb(0)
            ends = [theta_ball if p == theta else arb(p) for p in ladder(lo, hi)]
            for left, right in zip(ends, ends[1:]):
                zeroth += acb.integral(lambda x, _: (exponent - b_ball * x).exp(), left, right,
                                       rel_tol=tolerance)
                first += acb.integral(lambda x, _: x * (exponent - b_ball * x).exp(), left, right,
                                      rel_tol=tolerance)
            return zeroth.real, first.real

        z0, n0 = moments(0.0, theta, 0)
        z1, n1 = moments(theta, 1.0, 1)
        return (n0 + n1) / (z0 + z1) - theta_ball


def _mpf_balls_overlap(mid1, rad1, mid2, rad2) -> bool:
    """|mid₁ − mid₂| ≤ rad₁ + rad₂ for exact binary mpf values, evaluated exactly."""
    sizes = [abs(m._mpf_[2]) + m._mpf_[3] for m in (mid1, mid2, rad1, rad2) if m]
    with mpmath.workprec(2 * max(sizes, default=0) + 64):  # wide enough for the exact difference and sum
        return bool(abs(mid1 - mid2) <= rad1 + rad2)


def _balls_overlap(enclosure, ball) -> bool:
    """Overlap of an Enclosure and an arb ball by midpoints and radii (the stored lower/upper
    bounds may be rounded outward far more coarsely than the balls)."""
    from stumpcheck.numerics.certified.enclosures.balls import arb_to_mpf

    return _mpf_balls_overlap(enclosure.mid, enclosure.rad, arb_to_mpf(ball.mid()), arb_to_mpf(ball.rad()))


def _enclosures_overlap(first, second) -> bool:
    return _mpf_balls_overlap(first.mid, first.rad, second.mid, second.rad)


def _relative_radius(ball) -> float:
    return math.inf if not ball.is_finite() or ball.contains(0) else float(ball.rad()) / abs(float(ball.mid()))


def direct_loss_quadrature(a, b, *, pieces: int = 4096):
    """L by tanh-sinh on ``pieces`` equal θ-subintervals (no model breakpoints).

    Deliberately over-refined and blind to the layers; a reference for C1 at
    moderate b only (its cost grows with ``pieces``).
    """
    a, b = mpmath.mpf(a), mpmath.mpf(b)
    grid = [mpmath.mpf(i) / pieces for i in range(pieces + 1)]
    return mpmath.quad(lambda th: gen_mp.error_one_head(a, b, th) ** 2 / 2, grid)


def _positive_count(value, name: str) -> int:
    """A count of points or pieces: a positive int (0 or −1 samples would make C1 pass on no evidence)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InputError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def check_c1(*, samples: int = 12, seed: int = 0, dps: int = 30, loss_points=((10, 10), (25, 20)),
             loss_pieces: int | None = None, min_digits: float | None = None) -> ClaimResult:
    """C1: the derived θ̂∞ and L agree with the definitions, with certified enclosures of both.

    Draws ``samples`` points with b log-uniform in [10⁻², 10⁴] (the last one
    b = 10⁴ exactly), θ uniform in [0, 1], a − bθ uniform in [−50, 10³]. At each:
    the Arb enclosure of the generated e(θ) (:func:`stumpcheck.numerics.certified.enclosures.pointwise.certified_error`)
    and the rigorous enclosure of the defining integrals (:func:`certified_direct_error`, at
    dps + 20 digits); the generated mpmath e(θ) at ``dps`` digits is compared with the latter's
    midpoint (agreeing digits). For L at ``loss_points``: the breakpoint quadrature at ``dps``
    against the certified θ-integral of the definition's closed form at dps + 10 digits
    (:func:`stumpcheck.numerics.certified.enclosures.theta_integrals.certified_loss`), which is also compared with
    the certified θ-integral of the generated e; with ``loss_pieces`` an int, the old blind
    mpmath quadrature on that many equal pieces is the reference instead (no L balls).

    Figure: the fewest agreeing digits; tolerance: ≥ dps − 2. Evidence: *certified* when every
    pair of rigorous balls overlaps and each is narrower than 10^-(tolerance) relative, so
    that the overlap itself proves the agreement; otherwise high-precision. Two rigorous balls
    that are disjoint are a FAIL whatever the digits. ``samples`` ≥ 1 and ``seed`` ≥ 0 are
    integers, ``dps`` is validated (InputError otherwise).
    """
    from stumpcheck.numerics.certified.enclosures.balls import EnclosureTooWide
    from stumpcheck.numerics.certified.enclosures.pointwise import certified_error
    from stumpcheck.numerics.certified.enclosures.theta_integrals import certified_loss

    samples = _positive_count(samples, "samples")
    if loss_pieces is not None:
        loss_pieces = _positive_count(loss_pieces, "loss_pieces")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2 ** 63:
        raise InputError(f"seed must be an integer in [0, 2^63), got {seed!r}")
    dps = validate_dps(dps)
    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    need = dps - 2 if min_digits is None else min_digits
    narrow = 10.0 ** -max(need, 1)
    worst, worst_point, rows = math.inf, None, []
    certified, disjoint = True, []
    for i in range(samples):
        b = 10 ** rng.uniform(-2, 4) if i < samples - 1 else 1e4
        theta = rng.uniform(0, 1)
        a = b * theta + rng.uniform(-50, 1000)
        reference = certified_direct_error(a, b, theta, dps=dps + 20)
        with mpmath.workdps(dps + 20):
            with mpmath.workdps(dps):
                value = gen_mp.error_one_head(mpmath.mpf(a), mpmath.mpf(b), mpmath.mpf(theta))
            digits = agreeing_digits(value, mpmath.mpf(reference.mid().str(dps + 25, radius=False)))
        try:
            closed = certified_error(a, b, theta, dps=dps)
        except EnclosureTooWide:
            closed = None
        overlap = closed is not None and closed.is_finite and _balls_overlap(closed, reference)
        if closed is not None and closed.is_finite and reference.is_finite() and not overlap:
            disjoint.append({"a": a, "b": b, "theta": theta})
        certified = certified and overlap and float(closed.relative_radius) <= narrow and \
            _relative_radius(reference) <= narrow
        rows.append({"a": a, "b": b, "theta": theta, "digits": digits,
                     "closed_form_ball": None if closed is None else str(closed),
                     "definition_ball": reference.str(dps + 2, radius=True), "balls_overlap": overlap})
        if digits < worst:
            worst, worst_point = digits, (a, b, theta)
    loss_rows = []
    for a, b in loss_points:
        row = {"a": a, "b": b}
        with mpmath.workdps(dps):
            value = loss(a, b)
        if loss_pieces is None:
            definition = certified_loss(a, b, dps=dps + 10, rel_width=narrow)
            generated = certified_loss(a, b, dps=dps + 10, rel_width=narrow, integrand="generated")
            overlap = _enclosures_overlap(definition, generated)
            if not overlap:
                disjoint.append({"a": a, "b": b, "L": True})
            certified = certified and overlap
            with mpmath.workdps(dps + 10):
                digits = agreeing_digits(value, definition.mid)
            row.update(definition_ball=str(definition), generated_ball=str(generated), balls_overlap=overlap)
        else:
            certified = False
            with mpmath.workdps(dps + 10):
                reference = direct_loss_quadrature(a, b, pieces=loss_pieces)
                digits = agreeing_digits(value, reference)
        row["digits"] = digits
        loss_rows.append(row)
        worst = min(worst, digits)
    ok = worst >= need and not disjoint
    return ClaimResult(
        id="C1", statement="the closed forms of θ̂∞ and L agree with direct quadrature",
        figure=f"min agreeing digits {worst:.1f} over {samples} random (a, b, θ) (b up to 1e4) and L at {list(loss_points)}"
               + ("" if not disjoint else f"; {len(disjoint)} pair(s) of rigorous balls disjoint"),
        tolerance=f">= {need} digits at {dps}-digit precision", status=_verdict(ok),
        evidence="certified" if certified and not disjoint else "high-precision",
        seconds=time.perf_counter() - start,
        details={"seed": seed, "dps": dps, "precision": (f"mpmath dps {dps}; Arb balls: definition at {dps + 20} "
                                                         f"digits, closed form at {dps}"),
                 "loss_reference_pieces": loss_pieces, "error_points": rows,
                 "loss_points": loss_rows, "worst_point": worst_point, "disjoint_balls": disjoint,
                 "error_reference": f"acb.integral of the defining integrals at {dps + 20} digits",
                 "loss_reference": (f"certified θ-integral of the closed form at {dps + 10} digits"
                                    if loss_pieces is None else f"mpmath on {loss_pieces} equal θ-pieces")})


def _flow(t_max: float, rtol: float, run: FlowRun | None) -> FlowRun:
    return run if run is not None else run_population_flow(10.0, 10.0, t_max, rtol=rtol)


def check_c2(run: FlowRun) -> ClaimResult:
    """C2: the flow tracks the derived calibration relation a = b + 2 log b − ρ₁/b.

    Figure: ``|residual|`` at the end, how much smaller it is than without the
    ρ₁/b term, and the fitted order of ``|residual|`` in 1/b over the last three
    decades of t. Tolerance: order ≥ 1.5 (the first dropped term is
    O(log b/b²)) and the ρ₁/b term reduces the residual ≥ 5×.
    """
    start = time.perf_counter()
    keep = run.t >= run.t[-1] / 1e3
    b, residual = run.b[keep], np.abs(run.calibration_residual[keep])
    order = -float(np.polyfit(np.log(b), np.log(residual), 1)[0])
    without = abs(run.a[-1] - (run.b[-1] + 2 * math.log(run.b[-1])))
    gain = without / abs(run.calibration_residual[-1])
    ok = order >= 1.5 and gain >= 5
    return ClaimResult(
        id="C2", statement="the flow calibrates the label/feature scores: a = b + 2 log b − ρ₁/b + …",
        figure=(f"residual {run.calibration_residual[-1]:.3e} at b = {run.b[-1]:.1f}; {gain:.1f}x smaller than "
                f"without ρ₁/b; order in 1/b {order:.2f}"),
        tolerance="order >= 1.5 and gain >= 5", status=_verdict(ok), evidence="sampled",
        seconds=time.perf_counter() - start + run.stats.get("seconds", 0.0),
        details={"relation": "a = b + 2 log b - rho1/b", "rho1": derived.RHO1, "t_range": [float(run.t[keep][0]),
                 float(run.t[-1])], "a_posteriori_rel_error_b": run.a_posteriori_rel_error_b,
                 "precision": "float64", "rtol": run.settings["rtol"]})


def check_c3(run: FlowRun) -> ClaimResult:
    """C3: b(t) grows as t^{1/4}, with the derived constant C.

    Figure: fitted exponent (raw and with the derived c₁ correction) and the
    fitted C vs the derived C = 2. Tolerance: ``|p_corrected − 1/4| ≤ 10⁻³``,
    ``|p_raw − 1/4| ≤ 5·10⁻³`` and ``|C_fit/C − 1| ≤ 10⁻²``.
    """
    start = time.perf_counter()
    fits = run.fits
    raw, corrected, constant = fits["scale_exponent"], fits["scale_exponent_corrected"], fits["scale_constant"]
    c_rel = constant["value"] / derived.FLOW_CONSTANT_C - 1
    ok = abs(corrected["value"] - 0.25) <= 1e-3 and abs(raw["value"] - 0.25) <= 5e-3 and abs(c_rel) <= 1e-2
    return ClaimResult(
        id="C3", statement="the attention scale grows as t^{1/4}: b ≈ (C t)^{1/4}",
        figure=(f"exponent {raw['value']:.5f} (raw), {corrected['value']:.5f} (with c1); "
                f"C = {constant['value']:.5f} vs derived {derived.FLOW_CONSTANT_C:g} on t in "
                f"[{raw['t_range'][0]:.1e}, {raw['t_range'][1]:.1e}]"),
        tolerance="|p_corr - 1/4| <= 1e-3, |p_raw - 1/4| <= 5e-3, |C/2 - 1| <= 1e-2", status=_verdict(ok),
        evidence="sampled", seconds=time.perf_counter() - start, details={"fits": fits})


def check_c4(run: FlowRun) -> ClaimResult:
    """C4: the population threshold error is O(t^{−1/4}) in the interior.

    Figure: fitted exponent of ``sup_{θ∈[δ,1−δ]} |e(θ)|`` in t, and ``sup|e|·b`` at
    the end (the bulk law e = 1/b). Tolerance: ``|p + 1/4| ≤ 5·10⁻³``.
    """
    start = time.perf_counter()
    fit = run.fits["error_exponent"]
    ok = abs(fit["value"] + 0.25) <= 5e-3
    return ClaimResult(
        id="C4", statement="population threshold error is O(t^{-1/4}) for interior θ",
        figure=(f"exponent {fit['value']:.5f} on t in [{fit['t_range'][0]:.1e}, {fit['t_range'][1]:.1e}]; "
                f"sup|e|·b = {run.sup_error_interior[-1] * run.b[-1]:.6f} at the end"),
        tolerance="|p + 1/4| <= 5e-3", status=_verdict(ok), evidence="sampled",
        seconds=time.perf_counter() - start,
        details={"delta": run.settings["delta"], "fit": fit})


def check_population_claims(*, t_max: float = 1e12, rtol: float = 1e-8, seed: int = 0, dps: int = 30,
                            samples: int = 12, progress=None) -> list[ClaimResult]:
    """C1–C4 with one shared flow run from the default start (a₀, b₀) = (10, 10)."""
    results = [check_c1(samples=samples, seed=seed, dps=dps)]
    start = time.perf_counter()
    run = run_population_flow(10.0, 10.0, t_max, rtol=rtol, progress=progress)
    run.stats["seconds"] = time.perf_counter() - start
    results += [check_c2(run), check_c3(run), check_c4(run)]
    return results
