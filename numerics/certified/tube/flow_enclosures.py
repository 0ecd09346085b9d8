"""The certified tube as enclosures of a(t) and b(t): :func:`certified_flow`, the flow's certified entry point.

The population flow dz/dt = −∇L(z), z = (a, b), from (a₀, b₀) to T, enclosed by the certified tube of
:func:`stumpcheck.numerics.certified.tube.build.certified_tube` (docs/certified_flow.md: Chebyshev pieces of a
float64 solve, their defects bounded on Bernstein ellipses, a Gronwall chain; the θ-integrals in the fast
float64 interval layer, Arb where it does not suffice). At a time t the tube gives the box z̃(s) ± r of the
sub-intervals that s = log(1 + t) meets (:func:`stumpcheck.numerics.certified.tube.reading_nodes.pieces_state_at`,
exact rationals), returned as two :class:`~stumpcheck.numerics.certified.enclosures.Enclosure` balls: a(t) and
b(t) lie in them, proved (evidence *certified*; the tube's premises are those of its certificate).

Cost (measured, docs/certified_flow.md): from (10, 10) to T = 10⁶, 69 intervals, about 15 s of CPU with
warm numba caches (a cold cache first compiles the fast Hessian, 15–30 s), b(10⁶) to a relative width of
3·10⁻¹⁰; T = 10 takes about a second. :meth:`CertifiedFlow.certificate` is the flow certificate
(``stumpcheck recheck`` re-verifies it).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from stumpcheck.numerics.display import Display
from stumpcheck.numerics.precision import InputError

__all__ = ["CertifiedFlow", "certified_flow"]


def _enclosure(lower: Fraction, upper: Fraction):
    """The Enclosure (an outward Arb ball) of the interval [lower, upper] of exact rationals."""
    from flint import arb, ctx, fmpq

    from stumpcheck.numerics.certified.enclosures import Enclosure

    with ctx.workprec(128):
        ball = arb(fmpq(lower.numerator, lower.denominator)).union(arb(fmpq(upper.numerator, upper.denominator)))
    return Enclosure.from_arb(ball, prec_bits=128, digits=17)


@dataclass(repr=False)
class CertifiedFlow(Display):
    """The certified tube of a flow and its enclosures of z(T): ``a``, ``b`` (None when the tube did not reach T).

    ``complete``: the tube reaches T; ``valid_to_t``: the end of the last validated interval; ``stop_reason``:
    why validation stopped (empty when complete); ``tube``: the
    :class:`~stumpcheck.numerics.certified.tube.build.Tube`. :meth:`at` encloses z(t) at any t the tube
    covers.
    """

    a0: float
    b0: float
    t_max: float
    a: object
    b: object
    complete: bool
    valid_to_t: float
    stop_reason: str
    tube: object

    def at(self, t) -> tuple:
        """(a(t), b(t)) as Enclosures for an exact t (int, float, Fraction or decimal string) with
        0 ≤ t ≤ ``valid_to_t``; InputError otherwise."""
        from stumpcheck.numerics.certified.tube.reading_nodes import piece_record, pieces_state_at

        try:
            t = Fraction(t)
        except (TypeError, ValueError):
            raise InputError(f"t must be an exact number, got {t!r}") from None
        if not 0 <= t <= Fraction(self.valid_to_t):
            raise InputError(f"t must be in [0, {self.valid_to_t:g}] (where the tube is valid), got {float(t):g}")
        box = pieces_state_at([piece_record(iv.record) for iv in self.tube.intervals], t)
        if box is None:
            raise InputError(f"the tube does not cover t = {float(t):g}")
        return _enclosure(box[0], box[1]), _enclosure(box[2], box[3])

    def certificate(self) -> dict:
        """The flow certificate of the tube (format ``stumpcheck-flow-certificate/2``; ``stumpcheck recheck``)."""
        from stumpcheck.numerics.certified.tube.certificate import flow_certificate

        return flow_certificate(self.tube)

    def _display_rows(self) -> list:
        return [("complete", f"{self.complete} (valid to t = {self.valid_to_t:.6g})"
                 + (f"; {self.stop_reason}" if self.stop_reason else "")),
                ("start", f"({self.a0:g}, {self.b0:g}), T = {self.t_max:g}"),
                ("a(T)", "not reached" if self.a is None else str(self.a)),
                ("b(T)", "not reached" if self.b is None else str(self.b)),
                ("tube", f"{len(self.tube.intervals)} intervals, {self.tube.cpu_seconds:.1f} s CPU"),
                ("evidence", "certified" if self.complete else "certified up to valid_to_t (incomplete)")]

    def to_dict(self) -> dict:
        """The enclosures of z(T) as decimal ends (outward), completeness and cost, JSON-ready."""
        def ends(x):
            return None if x is None else [str(x.lower), str(x.upper)]

        return {"a0": self.a0, "b0": self.b0, "t_max": self.t_max, "complete": self.complete,
                "valid_to_t": self.valid_to_t, "stop_reason": self.stop_reason, "a": ends(self.a), "b": ends(self.b),
                "intervals": len(self.tube.intervals), "cpu_seconds": self.tube.cpu_seconds,
                "evidence": "certified" if self.complete else "certified up to valid_to_t (incomplete)"}


def certified_flow(a0: float = 10.0, b0: float = 10.0, t_max: float = 100.0, *, dps: int = 15,
                   time_limit: float | None = None, workers: int = 1, progress=None) -> CertifiedFlow:
    """Enclose the flow from (a0, b0) to t_max by the certified tube (module docstring): a :class:`CertifiedFlow`.

    Domain: the tube's (:func:`~stumpcheck.numerics.certified.tube.build.check_tube_arguments`: 10⁻¹² ≤ t_max ≤
    10¹², a start the float64 solve resolves). ``dps``: digits of the Arb fallbacks (15 to 40); ``time_limit``:
    seconds after which no new interval starts (the tube is then incomplete, and says so); ``workers``: processes
    for the intervals' integrals; ``progress(fraction of log(1 + T))``. Bad input: InputError before any work.
    """
    from stumpcheck.numerics.certified.tube.build import certified_tube
    from stumpcheck.numerics.certified.tube.statement import MAX_TUBE_DPS, MIN_TUBE_DPS

    if isinstance(dps, bool) or not isinstance(dps, int) or not MIN_TUBE_DPS <= dps <= MAX_TUBE_DPS:
        raise InputError(f"dps of the certified tube must be an int in [{MIN_TUBE_DPS}, {MAX_TUBE_DPS}], got {dps!r}")
    if not (isinstance(workers, int) and not isinstance(workers, bool) and 1 <= workers <= 64):
        raise InputError(f"workers must be a positive int, got {workers!r}")
    if time_limit is not None and not (isinstance(time_limit, (int, float)) and 0 < time_limit < float("inf")):
        raise InputError(f"time_limit must be a positive number of seconds, got {time_limit!r}")
    for name, value in (("a0", a0), ("b0", b0), ("t_max", t_max)):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise InputError(f"{name} must be a number, got {value!r}")
    tube = certified_tube(float(a0), float(b0), float(t_max), dps=dps, time_limit=time_limit, workers=workers,
                          progress=progress)
    result = CertifiedFlow(a0=float(a0), b0=float(b0), t_max=float(t_max), a=None, b=None, complete=tube.complete,
                           valid_to_t=tube.t_reached, stop_reason=tube.stop_reason, tube=tube)
    if tube.complete:
        result.valid_to_t = max(tube.t_reached, float(t_max))
        result.a, result.b = result.at(Fraction(float(t_max)))
    return result
