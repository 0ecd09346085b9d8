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

The re-check (:func:`start_search_fault`) takes none of that record on trust: its candidates and limit must be
this version's, its choice the statement's b_start and η (and the halvings the η rule's), its trials in the
order above, the last one the choice, "proved" (the leaves of the first column re-prove it). Every earlier
trial is run again: the half-curvature step of its b_start (from the recorded centre at the chosen b_start,
from a centre fitted again at another) and its first column with the proof's ``max_depth``, which must not
prove ("no step": the rule must find no positive curvature). This costs what the search cost the prover.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from stumpcheck.numerics.corpus.interval.centre import Centre, NoPositiveCurvature, column_after, eta_half_curvature
from stumpcheck.numerics.corpus.interval.prover import MAX_DEPTH, prove_column

__all__ = ["B_START_CANDIDATES", "MAX_HALVINGS", "Start", "choose_start", "halved_rule", "halvings_of_rule",
           "start_search_shape_fault", "start_search_fault"]

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


_OUTCOMES = ("proved", "not proved", "no step")


def start_search_shape_fault(record, b_start: Fraction, eta_text: str, halvings) -> str | None:
    """Why the record's shape, candidates, choice and order of outcomes are not the search's, or None: the cheap
    part of :func:`start_search_fault` (no corpus work), checked before any leaf is enclosed."""
    if not isinstance(record, dict) or set(record) != {"b_start_candidates", "max_halvings", "tried", "chosen"}:
        return "start_search must hold exactly b_start_candidates, chosen, max_halvings, tried"
    if record["b_start_candidates"] != [str(b) for b in B_START_CANDIDATES] or record["max_halvings"] != MAX_HALVINGS:
        return "start_search's b_start_candidates or max_halvings are not this version's"
    chosen = record["chosen"]
    if not isinstance(chosen, dict) or set(chosen) != {"b_start", "eta", "halvings"}:
        return "start_search's chosen must hold exactly b_start, eta, halvings"
    if chosen["b_start"] != str(b_start) or chosen["eta"] != eta_text:
        return "start_search's chosen b_start and eta are not the statement's"
    if isinstance(chosen["halvings"], bool) or chosen["halvings"] != halvings:
        return "start_search's chosen halvings are not the eta_rule's"
    tried = record["tried"]
    most = len(B_START_CANDIDATES) * (MAX_HALVINGS + 1)
    if not isinstance(tried, list) or not 1 <= len(tried) <= most or not all(
            isinstance(t, list) and len(t) == 3 and isinstance(t[0], str) and (t[1] is None or isinstance(t[1], str))
            and t[2] in _OUTCOMES and (t[1] is None) == (t[2] == "no step") for t in tried):
        return (f"start_search's tried must be 1 to {most} trials [b_start, eta or null, outcome], outcome among "
                f"{', '.join(_OUTCOMES)} (null eta with no step only)")
    if tried[-1] != [str(b_start), eta_text, "proved"]:
        return "start_search's last trial is not the chosen b_start and eta with its first column proved"
    if any(t[2] == "proved" for t in tried[:-1]):
        return "start_search records a proved trial before the last (the search stops at the first)"
    return None


def _groups(tried) -> list:
    """[(b_start text, [trials])] of consecutive trials with one b_start."""
    groups: list = []
    for t in tried:
        if groups and groups[-1][0] == t[0]:
            groups[-1][1].append(t)
        else:
            groups.append((t[0], [t]))
    return groups


def start_search_fault(record, x, theta, *, centre: Centre, eta: Fraction, eta_text: str, halvings, band,
                       max_depth: int, base_step, threads=None, tasks=None) -> str | None:
    """Why the certificate's ``start_search`` is not the search that gives its statement, or None (module
    docstring). ``centre``: the recorded centre (its b_start the statement's); ``halvings``: k of the η rule
    (None for a given η); ``base_step()``: the half-curvature step at the recorded centre (None without
    positive curvature), already derived by the η rule's check; ``tasks``: the sorted corpus."""
    b_start = centre.b_start
    fault = start_search_shape_fault(record, b_start, eta_text, halvings)
    if fault:
        return fault
    groups = _groups(record["tried"])
    starts = [g[0] for g in groups]
    if len(set(starts)) != len(starts) or not (
            starts == [str(b) for b in B_START_CANDIDATES[:len(starts)]] or starts == [str(b_start)]):
        return "start_search's trials are not in the search's order of b_start (8, 16, 32, 64, or the given one)"
    for g, (b_text, trials) in enumerate(groups):
        last_group = g == len(groups) - 1
        b0 = Fraction(b_text)                             # a candidate's text or the statement's (checked above)
        local = centre if b0 == b_start else Centre(x, theta, b0, threads=threads)
        if halvings is None:                              # a given step: one trial per b_start
            steps = [eta]
        else:
            try:
                base = base_step() if b0 == b_start else eta_half_curvature(x, theta, local, band[0], band[1],
                                                                            threads=threads)
            except NoPositiveCurvature:
                base = None
            steps = [None] if base is None else [base / 2 ** k for k in range(MAX_HALVINGS + 1)]
        if [t[1] for t in trials] != [None if v is None else str(v) for v in steps[:len(trials)]] or not (
                len(trials) == len(steps) or last_group and len(trials) < len(steps)):
            return (f"start_search's trials at b_start = {b_text[:20]} are not the search's steps "
                    "(the half-curvature step halved 0, 1, ... times, or the given one)")
        if trials[0][1] is None:
            continue                                      # "no step", confirmed by the rule above
        for t in trials:
            if t[2] != "not proved":
                continue
            column = (b0, column_after(b0))
            leaves, _ = prove_column(x, theta, local, column, band, Fraction(t[1]), max_depth=max_depth,
                                     threads=threads, tasks=tasks)
            if leaves is not None:
                return (f"start_search says the first column at b_start = {b_text[:20]}, eta = {t[1][:30]} was not "
                        "proved, but the re-check proves it")
    return None
