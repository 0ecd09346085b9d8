"""The fresh-context parts of C7 and C8 from the exact risk (docs/claims.md C7, C8; docs/fresh_risk.md).

C7 and C8 read, at each N of their grid, a frozen head on the calibration relation, b = 4N and
a = calibration_a(b) (the doubles the Monte Carlo table uses), and the max over a θ grid
(:data:`~stumpcheck.numerics.corpus.fresh.DEFAULT_THETAS`, both ends included) of the mean error
E|θ̂_N − θ|, with the max over the interior θ ∈ {0.3, 0.5, 0.7} beside it. Here each mean error is replaced by
its certified bracket [|bias|, √MSE] (:func:`~stumpcheck.numerics.certified.enclosures.fresh_risk.fresh_context_risk`,
``dps`` = 15, relative radius 10⁻⁶): a max of numbers each in [lᵢ, hᵢ] lies in [max lᵢ, max hᵢ].

* :func:`certified_sup_table` — those brackets for the one head (or the reflected one, or the pooled estimator).
* :func:`slope_range` — the least-squares exponent (slope of log y on log N) is Σ wᵢ log yᵢ with
  wᵢ = (xᵢ − x̄)/Σ(xⱼ − x̄)², xᵢ = log Nᵢ; over yᵢ ∈ [lᵢ, hᵢ] its range is exactly
  [Σ_{w>0} wᵢ log lᵢ + Σ_{w<0} wᵢ log hᵢ, Σ_{w>0} wᵢ log hᵢ + Σ_{w<0} wᵢ log lᵢ], enclosed in Arb. So a
  tolerance "fitted exponent ≤ −½" is decided for the exact mean errors, not an estimate of them.
* :func:`averaged_end_bounds` — the averaged estimator (θ̂ + θ̂′)/2 has no certified MSE (a two-dimensional
  s-integral, refused by fresh_context_risk), but its bias is the mean of the one-head and reflected biases,
  both certified, so |bias_avg(θ)| ≤ E|θ̂_avg − θ| at θ ∈ {0, 1}; and θ̂ is a weighted mean of points of
  [0, 1], so E|θ̂_avg − θ| ≤ 1. With these the averaged estimator's grid max has a certified lower bound
  ≈ ½ at every N and the trivial upper bound 1, which is enough to decide that its exponent is above −½
  (:func:`c8_averaged_certified`); nothing certified bounds it from above more tightly.

* :func:`c8_pooled_certified` — the pooled estimator's grid max, bracketed through its weight's envelope: the
  larger of the two heads' weights on each side of θ has the one head's closed forms, and the pooled weight is
  that envelope times a factor in [1, 1 + ρ], ρ = e^{b − a} (≈ b⁻² on the calibration relation), which moves
  θ̂_N by at most ρ in every context (:mod:`~stumpcheck.numerics.certified.enclosures.fresh_pooled_envelope`).
  Its exponent's range over the brackets decides C8's fresh-context tolerance. (The pooled risk by quadrature,
  fresh_context_risk's "pooled", costs 15–55 s of CPU per (θ, N) at b = 4N; the envelope about 0.15 s.)

Evidence: *certified* for the brackets and the decisions drawn from them, on the finite grid of (θ, N) the
claims test (a max over a θ grid is a lower bound of the sup over [0, 1], the direction C7's "does not
vanish" needs). The Monte Carlo table is kept as a control, with whether its maxima lie in the brackets.
"""

from __future__ import annotations

import time

from flint import arb, ctx

from stumpcheck.claims.boundary_tables import FRESH_SCALE_PER_N
from stumpcheck.claims.c6_protocol import INTERIOR_THETAS
from stumpcheck.numerics.corpus.fresh import DEFAULT_THETAS

__all__ = ["FRESH_DPS", "FRESH_REL_WIDTH", "averaged_end_bounds", "background_tasks", "c7_evidence_parts",
           "c7_fresh_certified", "c8_averaged_certified",
           "c8_evidence_parts", "c8_pooled_certified", "certified_sup_table", "slope_range"]

#: working digits of the risk enclosures, and the relative radius they must reach: the bracket's own gap
#: |bias| .. √MSE is far wider than 10⁻⁶, and aiming at 10⁻¹⁵ costs about twice as much
FRESH_DPS = 15
FRESH_REL_WIDTH = 1e-6
_PREC = 128


def _ball(low: str, high: str) -> arb:
    """The interval [low, high] of two decimal strings as an Arb ball (containing both ends)."""
    return arb(low).union(arb(high))


def _frozen(N: int, scale_per_N: float) -> tuple[float, float]:
    from stumpcheck.numerics.generated import asymptotics_numpy as derived

    b = scale_per_N * N
    return float(derived.calibration_a(b)), float(b)


def _max_bracket(rows: list) -> list[str]:
    """[max of the lower ends, max of the upper ends] of brackets given as decimal strings."""
    from decimal import Decimal

    return [max((r["bracket"][0] for r in rows), key=Decimal), max((r["bracket"][1] for r in rows), key=Decimal)]


def certified_sup_table(Ns, estimator: str = "one-head", *, thetas=DEFAULT_THETAS, interior=INTERIOR_THETAS,
                        scale_per_N: float = FRESH_SCALE_PER_N) -> dict:
    """Per N: the certified bracket of every θ's mean error at the frozen head (a, b) = (calibration_a(4N), 4N),
    the bracket of their max over ``thetas`` (``sup_bracket``) and over ``interior`` (``interior_bracket``),
    and the CPU seconds."""
    started = time.process_time()
    rows = {"N": [], "b": [], "a": [], "sup_bracket": [], "interior_bracket": [], "per_theta": []}
    for N in Ns:
        a, b = _frozen(int(N), scale_per_N)
        per = [{"theta": float(theta), **_bracket(a, b, float(theta), int(N), estimator)}
               for theta in dict.fromkeys(tuple(thetas) + tuple(interior))]
        rows["N"].append(int(N))
        rows["b"].append(b)
        rows["a"].append(a)
        rows["sup_bracket"].append(_max_bracket([r for r in per if r["theta"] in thetas]))
        rows["interior_bracket"].append(_max_bracket([r for r in per if r["theta"] in interior]))
        rows["per_theta"].append(per)
    rows["estimator"] = estimator
    rows["dps"], rows["rel_width"] = FRESH_DPS, FRESH_REL_WIDTH
    rows["seconds_cpu"] = round(time.process_time() - started, 2)
    return rows


def _bracket(a: float, b: float, theta: float, N: int, estimator: str) -> dict:
    """{"bracket": [lower, upper] of E|θ̂_N − θ|, "bias": [lower, upper]} (outward decimal strings): the exact
    risk's [|bias|, √MSE] for one head, the envelope's brackets widened by ρ = e^{b − a} for the pooled estimator
    (:func:`~stumpcheck.numerics.certified.enclosures.fresh_pooled_envelope.pooled_risk_bracket`)."""
    if estimator == "pooled":
        from stumpcheck.numerics.certified.enclosures.fresh_pooled_envelope import pooled_risk_bracket

        pooled = pooled_risk_bracket(a, b, theta, N, dps=FRESH_DPS, rel_width=FRESH_REL_WIDTH)
        return {"bracket": pooled["mean_abs_error"], "bias": pooled["bias"], "rho": pooled["rho"]}
    from stumpcheck.numerics.certified.enclosures.fresh_risk import fresh_context_risk

    risk = fresh_context_risk(a, b, theta, N, estimator=estimator, dps=FRESH_DPS, rel_width=FRESH_REL_WIDTH)
    return {"bracket": risk.bounds("mean_abs_error"), "bias": risk.bounds("bias")}


def _key(table: str, Ns) -> tuple:
    return ("C7" if table == "one-head" else "C8", table, tuple(int(N) for N in Ns))


def background_tasks(claims, Ns) -> list[tuple]:
    """The bracket tables of ``claims`` (a subset of {"C7", "C8"}) at the context sizes ``Ns``, as tasks for
    :func:`stumpcheck.claims.background.start` (the tables do not depend on anything a run computes first)."""
    tables = (["one-head"] if "C7" in claims else []) + (["pooled", "averaged"] if "C8" in claims else [])
    return [(_key(table, Ns), _table, (table, tuple(int(N) for N in Ns))) for table in tables]


def _table(table: str, Ns) -> dict:
    """The one head's or the pooled estimator's bracket table, or the averaged estimator's end bounds."""
    return averaged_end_bounds(Ns) if table == "averaged" else certified_sup_table(Ns, table)


def _collect(table: str, Ns) -> dict:
    """:func:`_table`, collected from the background workers when ``verify`` started it there."""
    from stumpcheck.claims import background

    return background.take(_key(table, Ns), _table, table, Ns)


def slope_range(Ns, lows, highs) -> list[float]:
    """[lower, upper] bounds (floats rounded outward from Arb) of the least-squares slope of log y on log N over
    every y with lowᵢ ≤ yᵢ ≤ highᵢ (decimal strings or numbers, 0 < highᵢ; a zero low gives −inf or +inf where
    it counts). Each term wᵢ log yᵢ ranges over wᵢ·[log lowᵢ, log highᵢ] (Arb's product of the weight's ball
    and that interval; exact up to the weight's radius), and the slope's range is the sum of the terms' ranges."""
    import math

    with ctx.workprec(_PREC):
        x = [arb(int(N)).log() for N in Ns]
        mean = sum(x, arb(0)) / len(x)
        sxx = sum(((v - mean) ** 2 for v in x), arb(0))
        low_sum, high_sum = arb(0), arb(0)
        low_inf = high_inf = False
        for v, lo, hi in zip(x, lows, highs):
            w = (v - mean) / sxx
            lo, hi = arb(str(lo)), arb(str(hi))
            if not hi > 0:
                raise ArithmeticError("slope_range needs positive upper ends")
            if not lo > 0:  # log y is unbounded below: the sum is unbounded where w may be of either sign
                low_inf = low_inf or not w < 0
                high_inf = high_inf or not w > 0
                lo = hi  # the finite end of the term's range comes from hi alone
            term = w * lo.log().union(hi.log())
            low_sum += arb(term.lower())
            high_sum += arb(term.upper())
        lower = -math.inf if low_inf else float(low_sum.lower())
        upper = math.inf if high_inf else float(high_sum.upper())
    return [_down(lower), _up(upper)]


def _down(value: float) -> float:
    import math
    return math.nextafter(value, -math.inf) if math.isfinite(value) else value


def _up(value: float) -> float:
    import math
    return math.nextafter(value, math.inf) if math.isfinite(value) else value


def _outward(value, direction: str, *, digits: int | None = None, places: int | None = None) -> str:
    """``value`` (a float, read exactly, or a decimal string) rounded outward (``direction`` "down" or "up") to
    ``digits`` significant digits or to ``places`` decimal places, for the figure's text: a printed bound never
    claims more than the certified one."""
    from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal, localcontext

    rounding = ROUND_FLOOR if direction == "down" else ROUND_CEILING
    exact = Decimal(value) if isinstance(value, float) else Decimal(str(value))
    if places is not None:
        return f"{exact.quantize(Decimal(1).scaleb(-places), rounding=rounding):f}"
    with localcontext() as ctx:
        ctx.prec, ctx.rounding = digits, rounding
        return f"{+exact:f}"


def _in(value: float, bracket) -> bool:
    from decimal import Decimal
    return Decimal(bracket[0]) <= Decimal(repr(float(value))) <= Decimal(bracket[1])


def c7_fresh_certified(Ns, sampled: dict, *, keep: float, floor: float, exponent: float) -> dict:
    """C7's fresh-context tolerance decided from the one head's certified brackets: the max over the θ grid at
    the largest N is ≥ ``floor`` and ≥ ``keep`` × the max at the smallest N (lower end against upper end),
    and the least-squares exponent in N of the interior max is ≤ ``exponent`` for every value in the brackets.
    ``decided`` is False when the brackets neither prove that nor refute it for every value in them (the caller
    then lets the Monte Carlo table decide, at the sampled level). ``sampled`` is the Monte Carlo table (:func:`~stumpcheck.claims.boundary_tables.fresh_sup_table`), the control."""
    table = _collect("one-head", Ns)
    sup, inner = table["sup_bracket"], table["interior_bracket"]
    last_low, first_high = float(sup[-1][0]), float(sup[0][1])
    last_high, first_low = float(sup[-1][1]), float(sup[0][0])
    keeps = last_low >= floor and last_low >= keep * first_high
    slope = slope_range(table["N"], [b[0] for b in inner], [b[1] for b in inner])
    decreases = slope[1] <= exponent
    # refuted only when every value in the brackets breaks the tolerance; otherwise the brackets do not decide
    refuted = (last_high < floor or last_high < keep * first_low) or slope[0] > exponent
    control = [{"N": N, "sup_bracket": s, "mc_sup": m, "mc_sup_in_bracket": _in(m, s), "interior_bracket": i,
                "mc_interior": mi, "mc_interior_in_bracket": _in(mi, i)}
               for N, s, m, i, mi in zip(table["N"], sup, sampled["sup_error"], inner, sampled["interior_error"])]
    text = (f"fresh contexts certified (exact risk, b = {FRESH_SCALE_PER_N:g}N): max over the θ grid of E|err| in "
            f"[{_outward(sup[0][0], 'down', digits=5)}, {_outward(sup[0][1], 'up', digits=5)}] (N={table['N'][0]}) -> "
            f"[{_outward(sup[-1][0], 'down', digits=5)}, {_outward(sup[-1][1], 'up', digits=5)}] "
            f"(N={table['N'][-1]}); interior max exponent in N in [{_outward(slope[0], 'down', places=3)}, "
            f"{_outward(slope[1], 'up', places=3)}] for every value in the brackets")
    return {"ok": bool(keeps and decreases), "decided": bool((keeps and decreases) or refuted),
            "keeps": bool(keeps), "decreases": bool(decreases),
            "interior_exponent_range": slope, "table": table, "control": control, "text": text,
            "rule": (f"last max lower end >= {floor} and >= {keep} x first max upper end; the least-squares exponent "
                     f"of the interior max, over every value in its brackets, <= {exponent}")}


def averaged_end_bounds(Ns, *, scale_per_N: float = FRESH_SCALE_PER_N) -> dict:
    """Per N, at the frozen head (calibration_a(4N), 4N): the certified bias of the averaged estimator at θ = 0
    and θ = 1 (the mean of the one-head and reflected biases) and the lower bound max |bias_avg| of its grid
    max; the upper bound is 1 (θ̂ and θ lie in [0, 1])."""
    from stumpcheck.numerics.certified.enclosures.fresh_risk import fresh_context_risk

    started = time.process_time()
    rows = []
    for N in Ns:
        a, b = _frozen(int(N), scale_per_N)
        ends, lower = {}, arb(0)
        with ctx.workprec(_PREC):
            for theta in (0.0, 1.0):
                heads = [fresh_context_risk(a, b, theta, int(N), estimator=est, dps=FRESH_DPS,
                                            rel_width=FRESH_REL_WIDTH).bounds("bias")
                         for est in ("one-head", "reflected")]
                bias = (_ball(*heads[0]) + _ball(*heads[1])) / 2
                ends[f"{theta:g}"] = {"one-head": heads[0], "reflected": heads[1],
                                      "averaged": [_down(float(bias.lower())), _up(float(bias.upper()))]}
                magnitude = abs(bias)
                lower = lower.max(arb(magnitude.lower()))
        rows.append({"N": int(N), "b": b, "a": a, "bias_at_ends": ends, "sup_lower": _down(float(lower.lower())),
                     "sup_upper": 1.0})
    return {"rows": rows, "seconds_cpu": round(time.process_time() - started, 2)}


def c8_averaged_certified(Ns, *, exponent: float) -> dict:
    """Whether the averaged estimator's fresh-context grid max certainly fails C8's tolerance: the least-squares
    exponent in N of any values between the certified lower bounds (:func:`averaged_end_bounds`) and 1 is
    > ``exponent``. ``fails`` is True (certified), or None when the bounds do not decide it."""
    bounds = _collect("averaged", Ns)
    rows = bounds["rows"]
    slope = slope_range([r["N"] for r in rows], [repr(r["sup_lower"]) for r in rows], ["1"] * len(rows))
    fails = True if slope[0] > exponent else None
    text = (f"averaged, fresh contexts certified at the ends: E|err| >= |bias| >= "
            f"{_outward(min(r['sup_lower'] for r in rows), 'down', places=4)} at θ ∈ {{0, 1}} for every N (the mean "
            f"of the two heads' certified biases) and <= 1, so its exponent in N is >= "
            f"{_outward(slope[0], 'down', places=3)} > {exponent:g}"
            if fails else "averaged: the certified end bounds do not decide its exponent")
    return {"fails": fails, "exponent_range": slope, "bounds": bounds, "text": text}


def c8_pooled_certified(Ns, sampled: dict, *, exponent: float) -> dict:
    """C8's fresh-context tolerance for the pooled estimator decided from certified brackets: the least-squares
    exponent in N of its max over the θ grid is ≤ ``exponent`` (hence < 0) for every value in the brackets
    (``ok``), or > it for every value (refuted); ``decided`` is False otherwise (the Monte Carlo table then
    decides, at the sampled level). The brackets are the pooled weight's envelope's exact risk widened by
    ρ = e^{b − a} (:mod:`~stumpcheck.numerics.certified.enclosures.fresh_pooled_envelope`). ``sampled`` is the
    pooled Monte Carlo table (the control)."""
    table = _collect("pooled", Ns)
    sup = table["sup_bracket"]
    slope = slope_range(table["N"], [b[0] for b in sup], [b[1] for b in sup])
    ok, refuted = slope[1] <= exponent, slope[0] > exponent
    rho = max(float(r["rho"]) for per in table["per_theta"] for r in per)
    control = [{"N": N, "sup_bracket": s, "mc_sup": m, "mc_sup_in_bracket": _in(m, s)}
               for N, s, m in zip(table["N"], sup, sampled["sup_error"])]
    text = (f"pooled, fresh contexts certified (its weight's envelope's exact risk ± ρ = e^(b−a) <= "
            f"{_outward(rho, 'up', digits=2)}, "
            f"b = {FRESH_SCALE_PER_N:g}N): max over the θ grid of E|err| in [{_outward(sup[0][0], 'down', digits=5)}, "
            f"{_outward(sup[0][1], 'up', digits=5)}] (N={table['N'][0]}) -> [{_outward(sup[-1][0], 'down', digits=5)}, "
            f"{_outward(sup[-1][1], 'up', digits=5)}] (N={table['N'][-1]}); its exponent in N in "
            f"[{_outward(slope[0], 'down', places=3)}, {_outward(slope[1], 'up', places=3)}] for every value in the "
            "brackets")
    return {"ok": bool(ok), "decided": bool(ok or refuted), "exponent_range": slope, "rho_max": rho,
            "table": table, "control": control, "text": text,
            "rule": f"the least-squares exponent of the max over the θ grid, over every value in its brackets, <= {exponent}"}


#: the population part's level when its proof decided it (boundary_certified.EVIDENCE_PARTS)
_POPULATION = "population (every b >= b0)"


def c7_evidence_parts(population_proved: bool, fresh_certified: bool) -> dict:
    """C7's ``evidence_parts``: each part's level (the row reaches the lowest)."""
    return {_POPULATION if population_proved else "population": "certified" if population_proved else "sampled",
            "fresh contexts (max over the θ grid at b = 4N, the mode's N)":
                "certified (exact fresh-context risk brackets; Monte Carlo kept as a control)" if fresh_certified
                else "sampled (Monte Carlo, 95% CIs)"}


def c8_evidence_parts(population_proved: bool, estimators, averaged: dict | None, pooled: dict | None = None) -> dict:
    """C8's ``evidence_parts``: the pooled fresh-context part is certified when its envelope brackets decide it
    (:func:`c8_pooled_certified`), the averaged one when its end bounds decide it; otherwise Monte Carlo."""
    parts = {_POPULATION if population_proved else "population": "certified" if population_proved else "sampled"}
    for est in estimators:
        if est == "averaged" and averaged is not None and averaged["fails"]:
            parts["fresh contexts, averaged (does not meet the tolerance)"] = (
                "certified (lower bound |bias| at θ ∈ {0, 1} from the two heads' certified biases; upper bound 1)")
        elif est == "pooled" and pooled is not None and pooled["decided"]:
            parts["fresh contexts, pooled"] = (
                "certified (exact risk of the pooled weight's envelope, widened by ρ = e^(b−a); Monte Carlo kept as "
                "a control)")
        elif est == "pooled":
            parts["fresh contexts, pooled"] = "sampled (Monte Carlo, 95% CIs: the envelope brackets do not decide)"
        else:
            parts[f"fresh contexts, {est}"] = "sampled (Monte Carlo, 95% CIs)"
    return parts
