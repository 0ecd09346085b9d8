"""The start of an interval proof chosen per corpus: b_start and the step η such that the first column proves.

With the defaults (no b_start and no η given) :func:`choose_start` tries, in order,

    b_start ∈ :data:`B_START_CANDIDATES` = 8, 16, 32, 64 (those ≤ b_max/4; b_start = 8 always), and for each
    η = η_hc/2^k, k = 0, 1, …, :data:`MAX_HALVINGS` = 4, η_hc the half-curvature step of that b_start
    (:func:`~stumpcheck.numerics.corpus.interval.centre.eta_half_curvature`, centre fitted from b_start),

and takes the first pair whose first grid column [b_start, next grid point] the obligations prove
(:func:`~stumpcheck.numerics.corpus.interval.prover.prove_column`, the proof's own settings). A given
b_start is the only candidate; a given η is the only step. Why: the half-curvature step is a sample of
the curvature, not a proof; at the lower edge of the band near b_start the GD image can leave the
band with that step (measured on a fresh m = n = 1024 corpus: "gd certainly false at b = 8.004,
μ = −0.047"), and a smaller step or a start where the corpus is less curved can remove it.

Nothing of this search is part of the proof: the chosen b_start and η are the statement's, and the
proof goes on from the first column's leaves, which the chosen trial proved with the proof's own
settings (the same leaves a proof started at that b_start with that η would record). If no pair proves the first column,
the first candidate with its unhalved step is returned and the proof stops at its first column, with the
failure examined as usual. :class:`Start` records what was tried (each b_start, η and whether the first
column proved), for the certificate's ``start_search``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from stumpcheck.numerics.corpus.interval.centre import Centre, NoPositiveCurvature, column_after, eta_half_curvature
from stumpcheck.numerics.corpus.interval.prover import MAX_DEPTH, prove_column

__all__ = ["B_START_CANDIDATES", "MAX_HALVINGS", "Start", "choose_start", "halved_rule", "halvings_of_rule"]

B_START_CANDIDATES = (Fraction(8), Fraction(16), Fraction(32), Fraction(64))
MAX_HALVINGS = 4


def halved_rule(base: str, k: int) -> str:
    """The η rule text of the half-curvature step halved k times (the base rule itself for k = 0)."""
    return base if k == 0 else f"{base}; halved {k} time(s) so that the first column proves"


def halvings_of_rule(rule: str, base: str) -> int | None:
    """k of a rule written by :func:`halved_rule`, or None if ``rule`` is not of that form (k ≤ MAX_HALVINGS)."""
    if rule == base:
        return 0
    for k in range(1, MAX_HALVINGS + 1):
        if rule == halved_rule(base, k):
            return k
    return None


@dataclass
class Start:
    """The chosen b_start, centre and η (and how: ``halvings`` of the half-curvature step, None if given),
    with every trial as (b_start, η, "proved" | "not proved" | "no step")."""

    b_start: Fraction
    centre: Centre
    eta: Fraction
    halvings: int | None
    tried: list = field(default_factory=list)
    first: list | None = None     # the proved first column's (box, result) leaves, or None

    def record(self) -> dict:
        return {"b_start_candidates": [str(b) for b in B_START_CANDIDATES], "max_halvings": MAX_HALVINGS,
                "tried": [[str(b), str(eta), outcome] for b, eta, outcome in self.tried],
                "chosen": {"b_start": str(self.b_start), "eta": str(self.eta), "halvings": self.halvings}}


def choose_start(x, theta, *, b_max: Fraction, band, b_start=None, eta=None, threads=None, max_depth=MAX_DEPTH,
                 tasks=None) -> Start:
    """The first (b_start, η) of the module docstring whose first column proves; ``b_start``/``eta`` given:
    fixed. Raises NoPositiveCurvature only if no candidate has a half-curvature step."""
    candidates = [Fraction(b_start)] if b_start is not None else [
        b for b in B_START_CANDIDATES if b == B_START_CANDIDATES[0] or 4 * b <= b_max]
    tried, fallback, last_error = [], None, None
    for b0 in candidates:
        centre = Centre(x, theta, b0, threads=threads)
        if eta is not None:
            steps = [(Fraction(eta), None)]
        else:
            try:
                base = eta_half_curvature(x, theta, centre, band[0], band[1], threads=threads)
            except NoPositiveCurvature as exc:
                tried.append((b0, None, "no step"))
                last_error = exc
                continue
            steps = [(base / 2 ** k, k) for k in range(MAX_HALVINGS + 1)]
        if fallback is None:
            fallback = Start(b0, centre, steps[0][0], steps[0][1])
        column = (b0, min(column_after(b0), b_max))
        for step, k in steps:
            leaves, _ = prove_column(x, theta, centre, column, band, step, max_depth=max_depth, threads=threads,
                                     tasks=tasks)
            tried.append((b0, step, "proved" if leaves is not None else "not proved"))
            if leaves is not None:
                return Start(b0, centre, step, k, tried, leaves)

    if fallback is None:
        raise last_error
    fallback.tried = tried
    return fallback
