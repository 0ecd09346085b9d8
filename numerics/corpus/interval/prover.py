"""The largest corpus interval the obligations prove: columns from b_start up, bisection, the step bound.

S = {b_start ≤ b ≤ b_end, A(b) − c₋ ≤ a ≤ A(b) + c₊} (:mod:`~stumpcheck.numerics.corpus.interval.centre`).
Columns of the grid are proved one after another, upwards from b_start; a column is first cut into
μ-boxes of height ≤ :data:`START_HEIGHT`, and a box whose margins are not all positive
(:mod:`~stumpcheck.numerics.corpus.interval.obligations`) is halved, up to ``max_depth`` times: the first
⌈max_depth/2⌉ halvings in μ, the rest in b. A halving in μ keeps the b-range, whose group moments the boxes
share (it costs two O(m) mixtures), one in b two new passes over the tokens; the order keeps the finest
b-resolution of alternating halvings (⌊max_depth/2⌋ in b), which decides where the interval ends
(docs/corpus_interval.md, "Cost"). A column is proved when every box of it is; the interval then ends below the
first column that is not: its failing box is examined at its centre (and at its edge midpoint on an
edge of the band), where an obligation may be *certainly false* (a rigorous point enclosure on the
wrong side) or the box stays *undecided*. Nothing of that column enters the statement.

**Step bound.** On an elementary b-interval I_j = [p_j, p_{j+1}] of the leaves' b-ends, every leaf
over I_j has drift ≥ κ_j > 0, so one GD step from a point with b ∈ I_j raises b by at least
δ_j = η·κ_j; the iterates with b in [p_j, p_{j+1}) are at most ⌊(p_{j+1} − p_j)/δ_j⌋ + 1, and GD from any
start in S has b ≥ b_end after at most K = Σ_j (⌊(p_{j+1} − p_j)/δ_j⌋ + 1) steps (and stays in S
until then, by the gd obligation). Exact rationals throughout.
"""

from __future__ import annotations

import math
import time
from fractions import Fraction

from stumpcheck.numerics.corpus.interval.centre import Centre, column_after, columns
from stumpcheck.numerics.corpus.interval.obligations import (SharedEnclosures, certainly_false, evaluate_box,
                                                                to_interval)
from stumpcheck.numerics.certified.fast.corpus_sorted import sort_tasks
from stumpcheck.numerics.certified.enclosures.corpus_arb import corpus_gradient_arb
from stumpcheck.numerics.certified.fast.corpus import corpus_enclosure

__all__ = ["START_HEIGHT", "MAX_DEPTH", "prove_column", "step_bound", "examine_failure", "leaf_record"]

START_HEIGHT = Fraction(1, 8)
MAX_DEPTH = 8


def _start_boxes(b0, b1, band):
    c_minus, c_plus = band
    count = max(1, math.ceil((c_minus + c_plus) / START_HEIGHT))
    height = (c_minus + c_plus) / count
    return [(b0, b1, -c_minus + k * height, -c_minus + (k + 1) * height) for k in range(count)]


def leaf_record(box, result) -> dict:
    b0, b1, mu0, mu1 = box
    return {"b": [str(b0), str(b1)], "mu": [str(mu0), str(mu1)],
            "box_enclosure": result.box_enclosure, "centre_enclosure": result.centre_enclosure,
            "drift": str(result.drift), "inward": None if result.inward is None else str(result.inward),
            "gd": str(result.gd)}


def prove_column(x, theta, centre: Centre, column, band, eta, *, max_depth=MAX_DEPTH, threads=None, tasks=None,
                 stats=None):
    """(leaves, failure): the proved boxes of one column, or the first box that failed at ``max_depth``
    (with its margins) and None leaves. The boxes' enclosures share the group moments of their b-ranges
    (:class:`~stumpcheck.numerics.corpus.interval.obligations.SharedEnclosures`; ``tasks``: the sorted
    corpus, sorted here if None). ``stats`` (a dict) receives the counts of boxes, group passes and
    touched points."""
    if tasks is None:
        tasks = sort_tasks(x, theta)
    enclose = SharedEnclosures(tasks, threads=threads)
    b0, b1 = column
    piece = centre.piece(b0)
    sigma = centre.slopes_over
    stack = [(box, 0) for box in reversed(_start_boxes(b0, b1, band))]
    leaves, boxes = [], 0
    while stack:
        box, depth = stack.pop()
        G, P = enclose(piece, box)
        boxes += 1
        result = evaluate_box(G, P, piece, box, band, eta, sigma)
        if result.proved:
            leaves.append((box, result))
            continue
        if depth >= max_depth:
            _count(stats, boxes, enclose)
            return None, {"box": box, "result": result, "piece": piece}
        bb0, bb1, mu0, mu1 = box
        if depth < (max_depth + 1) // 2:      # μ first (shares the b-range's moments), then b
            mid = (mu0 + mu1) / 2
            halves = [(bb0, bb1, mu0, mid), (bb0, bb1, mid, mu1)]
        else:
            mid = (bb0 + bb1) / 2
            halves = [(bb0, mid, mu0, mu1), (mid, bb1, mu0, mu1)]
        stack.extend((h, depth + 1) for h in reversed(halves))
    _count(stats, boxes, enclose)
    return leaves, None


def _count(stats, boxes, enclose) -> None:
    if stats is not None:
        stats.update(boxes=stats.get("boxes", 0) + boxes, passes=stats.get("passes", 0) + enclose.passes,
                     kept=stats.get("kept", 0) + enclose.kept)


def examine_failure(x, theta, centre: Centre, failure, band, eta, *, threads=None) -> dict:
    """Is an obligation certainly false at the failed box's centre or edge midpoint? (a rigorous point check)"""
    box, piece = failure["box"], failure["piece"]
    b0, b1, mu0, mu1 = box
    c_minus, c_plus = band
    b_i, a_i, s = piece
    sigma = centre.slopes_over
    bc = (b0 + b1) / 2
    points = [(bc, (mu0 + mu1) / 2)]
    if mu1 == c_plus:
        points.append((bc, c_plus))
    if mu0 == -c_minus:
        points.append((bc, -c_minus))
    result = failure["result"]
    out = {"b": [str(b0), str(b1)], "mu": [str(mu0), str(mu1)],
           "margins": {"drift": float(result.drift), "gd": float(result.gd),
                       "inward": None if result.inward is None else float(result.inward)},
           "status": "undecided"}
    for b, mu in points:
        a = a_i + s * (b - b_i) + mu
        P = corpus_enclosure(x, theta, to_interval(a), to_interval(b), threads=threads).tolist()
        false = certainly_false(P, piece, (b, mu), band, eta, sigma)
        if false is not None:
            out.update(status="false", point={"b": str(b), "mu": str(mu)}, **false)
            # confirmed in Arb at the same exact point (another arithmetic and algebra)
            values = corpus_gradient_arb(x, theta, a, b, prune=80.0)
            arb_p = [[math.nextafter(float(v.lower()), -math.inf), math.nextafter(float(v.upper()), math.inf)]
                     for v in values]
            out["arb_confirmed"] = certainly_false(arb_p, piece, (b, mu), band, eta, sigma) is not None
            break
    return out


def step_bound(leaves, eta: Fraction) -> tuple[int, list]:
    """(K, rows): the step bound of the module docstring from the leaves' b-ranges and drift lower bounds.
    ``leaves`` are (b0, b1, drift) with exact rationals; rows are (p_j, p_{j+1}, κ_j, count_j)."""
    ends = sorted({b for b0, b1, _ in leaves for b in (b0, b1)})
    rows, total = [], 0
    for p, q in zip(ends, ends[1:]):
        kappa = min(d for b0, b1, d in leaves if b0 < q and b1 > p)
        if kappa <= 0:
            raise ValueError("a leaf with drift <= 0 cannot enter the step bound")
        count = int((q - p) // (eta * kappa)) + 1
        rows.append((p, q, kappa, count))
        total += count
    return total, rows


_CORPORA: dict = {}


def _corpus(ref):
    """(x, θ, sorted tasks) of a reference: ("arrays", x, θ, tasks) as given, or ("file", path, sha256)
    loaded and sorted once per process."""
    if ref[0] == "arrays":
        return ref[1], ref[2], ref[3]
    key = (ref[1], ref[2])
    if key not in _CORPORA:
        from stumpcheck.numerics.corpus.checkpoint import corpus_fingerprint
        from stumpcheck.numerics.corpus.corpora import load_corpus

        corpus = load_corpus(ref[1])
        if corpus_fingerprint(corpus.x, corpus.theta) != ref[2]:
            raise ValueError(f"{ref[1]} is not the corpus of this proof (sha256 differs)")
        _CORPORA.clear()
        _CORPORA[key] = (corpus.x, corpus.theta, sort_tasks(corpus.x, corpus.theta))
    return _CORPORA[key]


def column_task(ref, nodes, column, band, eta, max_depth, threads):
    """One column as a unit of work (in this process or a worker): (leaf records, examined failure or
    None, CPU seconds, counts of boxes, group passes and touched points). The centre is rebuilt from ``nodes`` (exact strings), which reach past every
    GD step from the column, so the result does not depend on where it runs."""
    started = time.process_time()
    x, theta, tasks = _corpus(ref)
    centre = Centre.from_nodes([(Fraction(b), Fraction(a)) for b, a in nodes])
    stats: dict = {}
    leaves, failure = prove_column(x, theta, centre, column, band, eta, max_depth=max_depth, threads=threads,
                                   tasks=tasks, stats=stats)
    if failure is not None:
        return (None, examine_failure(x, theta, centre, failure, band, eta, threads=threads),
                round(time.process_time() - started, 3), stats)
    return [leaf_record(box, r) for box, r in leaves], None, round(time.process_time() - started, 3), stats


class IntervalRun:
    """The state of an interval proof: proved columns so far, in order (resumable from its records).

    ``workers``/the command's scheduler (:func:`stumpcheck.numerics.scheduling.for_workers`) decide where
    the columns are proved; they are read back in order and the first unproved one ends the run, so the
    result is the same wherever they ran. Outside this process the corpus travels as ``corpus_path``
    (its sha256 checked by each worker; on a Dask cluster the path must be readable by the workers)."""

    def __init__(self, x, theta, *, b_start, b_max, band, eta, centre, threads=None, max_depth=MAX_DEPTH,
                 workers: int = 1, corpus_path=None):
        self.x, self.theta = x, theta
        self.b_start, self.b_max = Fraction(b_start), Fraction(b_max)
        self.band, self.eta, self.centre = band, Fraction(eta), centre
        self.threads, self.max_depth = threads, max_depth
        self.workers, self.corpus_path = workers, corpus_path
        self.tasks = None
        self.stats = {"boxes": 0, "passes": 0, "kept": 0}
        self.columns: list[dict] = []      # {"b": [b0, b1], "leaves": [...], "cpu_seconds": s}
        self.failure: dict | None = None
        self.b_end = self.b_start

    def _reference(self, scheduler):
        from stumpcheck.numerics.scheduling import InProcess

        if isinstance(scheduler, InProcess):
            if self.tasks is None:
                self.tasks = sort_tasks(self.x, self.theta)
            return ("arrays", self.x, self.theta, self.tasks)
        from stumpcheck.numerics.corpus.checkpoint import corpus_fingerprint

        if self.corpus_path is None:
            import tempfile
            from pathlib import Path

            from stumpcheck.numerics.corpus.corpora import Corpus, save_corpus
            folder = Path(tempfile.mkdtemp(prefix="stumpcheck-interval-"))
            self.corpus_path = save_corpus(Corpus(self.x, self.theta, None, None, "unknown"), folder / "corpus.npz")
        return ("file", str(self.corpus_path), corpus_fingerprint(self.x, self.theta))

    def _jobs(self, ref, todo):
        for column in todo:
            nodes = self.centre.nodes_up_to(2 * column[1])
            yield (ref, [(str(b), str(a)) for b, a in nodes], column, self.band, self.eta, self.max_depth,
                   self.threads)

    def run(self, *, progress=None, on_column=None, deadline: float | None = None) -> None:
        from stumpcheck.numerics.scheduling import for_workers

        todo = columns(self.b_end, self.b_max)
        with for_workers(self.workers) as scheduler:
            results = scheduler.imap(column_task, self._jobs(self._reference(scheduler), todo))
            for column, (leaves, failure, cpu, stats) in zip(todo, results):
                for key in self.stats:
                    self.stats[key] += stats.get(key, 0)
                if deadline is not None and time.monotonic() > deadline:
                    self.failure = {"status": "stopped", "reason": "time limit",
                                    "b": [str(column[0]), str(column[1])]}
                    return
                if failure is not None:
                    self.failure = failure
                    return
                self.columns.append({"b": [str(column[0]), str(column[1])], "leaves": leaves, "cpu_seconds": cpu})
                self.b_end = column[1]
                if on_column is not None:
                    on_column(self)
                if progress is not None:
                    progress(math.log(float(self.b_end / self.b_start)) / math.log(float(self.b_max / self.b_start)))
        self.failure = None

    def leaves(self):
        for col in self.columns:
            yield from col["leaves"]


def next_column_end(b: Fraction) -> Fraction:
    return column_after(b)
