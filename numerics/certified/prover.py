"""Prove a predicate over a box of (a, b, θ) by interval evaluation and bisection.

Evidence level **certified** (docs/model.md §7). :func:`certify` evaluates a
registered predicate on a :class:`Box` with Arb ball arithmetic (the generated
functions of :mod:`numerics.generated.population_arb`, which return balls that
contain the value for *every* point of the argument balls). Each box gets a
three-valued verdict:

* **true**: the predicate certainly holds at every point of the box (a leaf);
* **false**: it certainly fails at every point of the box (a counterexample
  region; the search stops and the certificate's status is ``"failed"``);
* **unknown**: the box is bisected along its (scaled) widest side.

If every leaf is true the status is ``"proved"``. A box that is unknown but
cannot be split further (every side below ``min_width`` relative to its size)
is checked once more at its exact midpoint: certainly false there → ``"failed"``
with that point as the failure box; otherwise ``"undecided"``. Running out of
``max_boxes`` also gives ``"undecided"``.

Predicates (``PREDICATES``):

* ``error_abs_le_c_over_b`` (parameter ``c``): |e(θ)| ≤ c/b, checked as
  |b·e(θ)| ≤ c (b > 0) on the product ball;
* ``error_gradient_b_negative``: ∂e/∂b < 0 pointwise;
* ``dLdb_negative``: ∂L/∂b < 0 over an (a, b) box, where L = ∫₀¹ ½ e² dθ, so
  ∂L/∂b = ∫₀¹ e·∂e/∂b dθ. The θ-box must be [0, 1]. For each (a, b) box, [0, 1]
  is cut into θ-pieces Θ_k of width w_k and the integrand ball g_k ⊇
  {e·∂e/∂b : (a, b, θ) ∈ A×B×Θ_k} is evaluated, so
  Σ w_k·lower(g_k) ≤ ∂L/∂b ≤ Σ w_k·upper(g_k) for every (a, b) in the box
  (rigorous, the w_k are exact and the sums are done in ball arithmetic).
  The θ-pieces are refined (largest w_k·rad(g_k) first) up to ``theta_pieces``.
  Each leaf records the partition it used, ``bounds["theta_partition"]``: the
  K + 1 cuts 0 = t₀ < t₁ < … < t_K = 1 as exact decimals (the cuts are dyadic
  rationals, so their decimal expansions are finite and exact), so that a
  re-checker can re-evaluate every piece.

Every certificate identifies the code it ran: ``generated_code`` holds the
sha256 of numerics/generated/population_arb.py (the Arb module generated from
the derivation) and the stumpcheck version.

Box ends are exact decimal strings (or floats, taken exactly); a decimal end
that is not binary is rounded outward (lo down, hi up) at the working
precision, so the proved box contains the requested one. Leaf boxes and bounds
in the certificate are printed as decimals rounded outward to ``dps``
significant digits (box lo and bound lower down, box hi and bound upper up),
so each printed leaf box contains the evaluated one and each printed bound
interval contains the evaluated ball.
"""

from __future__ import annotations

import hashlib
import heapq
import itertools
import json
import math
import platform
import time
from dataclasses import asdict, dataclass, field
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal, localcontext
from fractions import Fraction
from importlib import metadata

from flint import arb, ctx

from numerics.certified.enclosures import ESTIMATORS, working_bits
from numerics.generated import population_arb as gen_arb
from numerics.precision import InputError, parse_decimal, validate_dps

__all__ = ["Box", "Certificate", "certify", "PREDICATES", "STATUSES"]

STATUSES = ("proved", "failed", "undecided")
#: Default relative width below which a side of a box is not split any more.
DEFAULT_MIN_WIDTH = 1e-12
#: Default cap on θ-pieces per (a, b) box for the L-level predicates.
DEFAULT_THETA_PIECES = 256
_DIMS = ("a", "b", "theta")


# ---------------------------------------------------------------------------------------------
# boxes


def _parse_end(value, name: str) -> Decimal:
    if isinstance(value, bool):
        raise InputError(f"{name} must be a real number, got {value!r}")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InputError(f"{name} must be finite, got {value!r}")
        return Decimal(value)  # exact
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise InputError(f"{name} must be finite, got {value!r}")
        return value
    if isinstance(value, str):
        return parse_decimal(value, name)
    raise InputError(f"{name} must be a decimal string or a number, got {value!r}")


def _interval(value, name: str) -> tuple[Decimal, Decimal]:
    if isinstance(value, (str, int, float, Decimal)) and not isinstance(value, bool):
        value = (value, value)  # a single number is a degenerate interval
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise InputError(f"{name} must be an interval (lo, hi), got {value!r}")
    lo, hi = _parse_end(value[0], f"{name} lo"), _parse_end(value[1], f"{name} hi")
    if not lo <= hi:
        raise InputError(f"{name} interval needs lo <= hi, got [{value[0]}, {value[1]}]")
    return lo, hi


@dataclass(frozen=True)
class Box:
    """Closed intervals for a, b and θ, each an exact (lo, hi) pair of Decimals.

    Built from decimal strings, ints, floats (exact) or Decimals; validated:
    finite, lo ≤ hi, b > 0, 0 ≤ θ ≤ 1. θ defaults to [0, 1].
    """

    a: tuple
    b: tuple
    theta: tuple = ("0", "1")

    def __post_init__(self):
        a, b, theta = _interval(self.a, "a"), _interval(self.b, "b"), _interval(self.theta, "theta")
        if not b[0] > 0:
            raise InputError(f"b must be > 0 (the attention scale), got b lo = {b[0]}")
        if not (theta[0] >= 0 and theta[1] <= 1):
            raise InputError(f"theta must lie in [0, 1], got [{theta[0]}, {theta[1]}]")
        object.__setattr__(self, "a", a)
        object.__setattr__(self, "b", b)
        object.__setattr__(self, "theta", theta)

    def to_dict(self) -> dict:
        return {name: [str(lo), str(hi)] for name, (lo, hi) in zip(_DIMS, (self.a, self.b, self.theta))}

    @classmethod
    def from_dict(cls, data: dict) -> "Box":
        return cls(a=tuple(data["a"]), b=tuple(data["b"]), theta=tuple(data.get("theta", ("0", "1"))))


def _outward(lo: Decimal, hi: Decimal) -> tuple[arb, arb]:
    """Exact arb ends enclosing [lo, hi] at the current flint precision."""
    return arb(arb(str(lo)).lower()), arb(arb(str(hi)).upper())


# ---------------------------------------------------------------------------------------------
# decimal printing (outward)


def _arb_fraction(x: arb) -> Fraction:
    """An exact (radius 0, finite) arb as a Fraction."""
    if x.is_zero():
        return Fraction(0)
    man, exp = x.man_exp()
    man, exp = int(man), int(exp)
    return Fraction(man * 2 ** exp) if exp >= 0 else Fraction(man, 2 ** -exp)


def _decimal(x: arb, digits: int, rounding) -> str:
    """An exact arb printed with ``digits`` significant digits, rounded down (ROUND_FLOOR) or up."""
    if not x.is_finite():
        return "-inf" if rounding == ROUND_FLOOR else "inf"
    frac = _arb_fraction(x)
    with localcontext() as context:
        context.prec, context.rounding = digits, rounding
        context.Emax, context.Emin = 10 ** 9, -10 ** 9
        value = Decimal(frac.numerator) / Decimal(frac.denominator)
    return str(value)


def _exact_decimal(frac: Fraction) -> str:
    """A dyadic rational m/2^k as its exact finite decimal expansion (k digits after the point)."""
    k = 0
    while frac.denominator > 1:   # multiply by 10 until the power of 2 divides out
        frac *= 10
        k += 1
    digits = str(abs(frac.numerator)).rjust(k + 1, "0")
    body = digits if k == 0 else f"{digits[:-k]}.{digits[-k:]}"
    return ("-" if frac < 0 else "") + body


def _ball_bounds(ball: arb, digits: int) -> list[str]:
    """[lower, upper] of a real ball, rounded outward to ``digits`` digits."""
    if not ball.is_finite():
        return ["-inf", "inf"]
    return [_decimal(arb(ball.lower()), digits, ROUND_FLOOR), _decimal(arb(ball.upper()), digits, ROUND_CEILING)]


# ---------------------------------------------------------------------------------------------
# predicates


class _Counter:
    def __init__(self):
        self.evaluations = 0


def _function(kind: str, estimator: str):
    return getattr(gen_arb, f"{kind}_{estimator.replace('-', '_')}")


def _hull(lo: arb, hi: arb) -> arb:
    return lo.union(hi)


def _eval_error_abs(ends, params, estimator, counter, options):
    """|b·e| ≤ c on the box: certain if upper|B·E| ≤ c, certainly false if B·E > c or < −c."""
    c = params["c"]
    a, b, t = (_hull(*ends[d]) for d in _DIMS)
    counter.evaluations += 1
    q = (b * _function("error", estimator)(a, b, t).real)
    bounds = {"b*e": _ball_bounds(q, options["digits"])}
    if not q.is_finite():
        return None, bounds
    if q.abs_upper() <= c:
        return True, bounds
    if q > c or q < -c:
        return False, bounds
    return None, bounds


def _eval_gradient_b(ends, params, estimator, counter, options):
    a, b, t = (_hull(*ends[d]) for d in _DIMS)
    counter.evaluations += 1
    d = _function("error_gradient", estimator)(a, b, t)[1].real
    bounds = {"de/db": _ball_bounds(d, options["digits"])}
    if not d.is_finite():
        return None, bounds
    if d < 0:
        return True, bounds
    if d >= 0:
        return False, bounds
    return None, bounds


def _eval_dldb(ends, params, estimator, counter, options):
    """Bound ∂L/∂b = ∫₀¹ e·∂e/∂b dθ over the (a, b) box by Σ w_k·g_k on θ-pieces (refined adaptively)."""
    a, b = _hull(*ends["a"]), _hull(*ends["b"])
    error, gradient = _function("error", estimator), _function("error_gradient", estimator)
    order = itertools.count()

    def piece(lo, hi):
        t = _hull(lo, hi)
        counter.evaluations += 1
        g = (error(a, b, t) * gradient(a, b, t)[1]).real
        w = hi - lo  # exact (binary ends, Arb adds the rounding to the radius)
        contribution = w * g
        key = float(contribution.rad()) if contribution.is_finite() else math.inf
        return (-key, next(order), lo, hi, contribution)

    lo0, hi0 = ends["theta"]
    pieces = options["theta_pieces"]
    start = min(16, pieces)
    cuts = [lo0 + (hi0 - lo0) * k / start for k in range(start + 1)]
    cuts = [lo0] + [arb(x.mid()) for x in cuts[1:-1]] + [hi0]
    heap = [piece(cuts[k], cuts[k + 1]) for k in range(start)]
    heapq.heapify(heap)
    while True:
        total = arb(0)
        for item in heap:
            total += item[4]
        verdict = None
        if total.is_finite():
            if total < 0:
                verdict = True
            elif total >= 0:
                verdict = False
        if verdict is not None or len(heap) >= pieces:
            break
        _, _, lo, hi, _ = heapq.heappop(heap)
        middle = arb(((lo + hi) / 2).mid())
        heapq.heappush(heap, piece(lo, middle))
        heapq.heappush(heap, piece(middle, hi))
    # the pieces are adjacent with exact dyadic ends: their K + 1 distinct ends tile [lo0, hi0]
    cuts = sorted({_arb_fraction(item[2]) for item in heap} | {_arb_fraction(item[3]) for item in heap})
    return verdict, {"dL/db": _ball_bounds(total, options["digits"]), "theta_pieces": len(heap),
                     "theta_partition": [_exact_decimal(c) for c in cuts]}


@dataclass(frozen=True)
class _Predicate:
    name: str
    description: str
    evaluate: object
    params: tuple
    dims: tuple  # the dimensions that are bisected
    full_theta: bool = False


PREDICATES = {p.name: p for p in (
    _Predicate("error_abs_le_c_over_b", "|e(θ)| ≤ c/b at every point of the box", _eval_error_abs, ("c",),
               ("a", "b", "theta")),
    _Predicate("error_gradient_b_negative", "∂e/∂b < 0 at every point of the box", _eval_gradient_b, (),
               ("a", "b", "theta")),
    _Predicate("dLdb_negative", "∂L/∂b < 0 at every (a, b) of the box (L = ∫₀¹ ½ e² dθ)", _eval_dldb, (),
               ("a", "b"), full_theta=True),
)}


# ---------------------------------------------------------------------------------------------
# certificates


def _versions() -> dict:
    versions = {"python": platform.python_version()}
    for package in ("stumpcheck", "python-flint", "mpmath"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = "unknown"
    return versions


def generated_code_identity() -> dict:
    """What identifies the Arb code a certificate was computed with: the generated module's name,
    the sha256 of its source bytes, and the stumpcheck version (a re-checker compares the hash with
    the file it runs)."""
    source = gen_arb.__spec__.loader.get_data(gen_arb.__file__)
    try:
        version = metadata.version("stumpcheck")
    except metadata.PackageNotFoundError:
        version = "unknown"
    return {"module": gen_arb.__name__, "file": "numerics/generated/population_arb.py",
            "sha256": hashlib.sha256(source).hexdigest(), "stumpcheck": version}


@dataclass
class Certificate:
    """The outcome of :func:`certify`, JSON-serialisable with :meth:`to_json`.

    ``leaves``: the boxes where the predicate was proved, each
    ``{"a": [lo, hi], "b": [lo, hi], "theta": [lo, hi], "bounds": {...}}``
    (decimal strings, rounded outward). ``failure_box`` (status "failed"): the
    box (with its bounds) where the predicate was certainly false at every point;
    ``undecided_box`` (status "undecided"): the box that could not be split
    further or was pending when ``max_boxes`` ran out; ``reason`` says which.
    """

    predicate: str
    params: dict
    estimator: str
    box: dict
    status: str
    leaves: list = field(default_factory=list)
    evaluations: int = 0
    boxes: int = 0
    dps: int = 30
    prec_bits: int = 0
    max_boxes: int = 0
    min_width: float = DEFAULT_MIN_WIDTH
    versions: dict = field(default_factory=dict)
    generated_code: dict = field(default_factory=dict)
    failure_box: dict | None = None
    undecided_box: dict | None = None
    reason: str = ""
    seconds: float = 0.0
    evidence: str = "certified"

    @property
    def proved(self) -> bool:
        return self.status == "proved"

    def to_dict(self) -> dict:
        return asdict(self)

    def to_json(self, indent: int | None = 1) -> str:
        return json.dumps(self.to_dict(), indent=indent, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "Certificate":
        return cls(**json.loads(text))

    def verdict(self) -> str:
        """One line: the predicate, its parameters, the status."""
        params = ", ".join(f"{k}={v}" for k, v in sorted(self.params.items()))
        detail = f" ({self.reason})" if self.reason else ""
        return f"{self.predicate}" + (f"[{params}]" if params else "") + f": {self.status.upper()}{detail}"


def _validate_params(predicate: _Predicate, params) -> dict:
    params = dict(params or {})
    unknown = set(params) - set(predicate.params)
    if unknown:
        raise InputError(f"predicate {predicate.name} takes no parameter {', '.join(sorted(unknown))}"
                         + (f" (it takes {', '.join(predicate.params)})" if predicate.params else ""))
    missing = [p for p in predicate.params if p not in params]
    if missing:
        raise InputError(f"predicate {predicate.name} needs the parameter {', '.join(missing)}")
    return {k: str(_parse_end(v, f"parameter {k}")) for k, v in params.items()}


def _positive_int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InputError(f"{name} must be a positive int, got {value!r}")
    return value


def certify(predicate: str, box: Box, *, params=None, dps: int = 30, max_boxes: int = 10_000,
            min_width: float = DEFAULT_MIN_WIDTH, estimator: str = "one-head",
            theta_pieces: int = DEFAULT_THETA_PIECES) -> Certificate:
    """Prove ``predicate`` (a name in :data:`PREDICATES`) on ``box`` by bisection; see the module doc.

    ``max_boxes`` caps the number of boxes examined, ``min_width`` is the
    relative width (of max(1, |mid|)) below which a side is not split.
    """
    if predicate not in PREDICATES:
        raise InputError(f"unknown predicate {predicate!r}; expected one of {', '.join(PREDICATES)}")
    spec = PREDICATES[predicate]
    if not isinstance(box, Box):
        raise InputError(f"box must be a Box, got {box!r}")
    if estimator not in ESTIMATORS:
        raise InputError(f"unknown estimator {estimator!r}; expected one of {', '.join(ESTIMATORS)}")
    params = _validate_params(spec, params)
    dps = validate_dps(dps)
    max_boxes = _positive_int(max_boxes, "max_boxes")
    theta_pieces = _positive_int(theta_pieces, "theta_pieces")
    try:
        min_width = float(min_width)
    except (TypeError, ValueError):
        raise InputError(f"min_width must be a positive number, got {min_width!r}") from None
    if not (math.isfinite(min_width) and min_width > 0):
        raise InputError(f"min_width must be a positive finite number, got {min_width!r}")
    if spec.full_theta and box.theta != (Decimal(0), Decimal(1)):
        raise InputError(f"predicate {predicate} integrates θ over [0, 1]; the theta interval must be [0, 1], "
                         f"got [{box.theta[0]}, {box.theta[1]}]")

    bits = working_bits(dps, float(max(abs(box.a[0]), abs(box.a[1]))), float(box.b[1]))
    digits = dps
    counter = _Counter()
    options = {"digits": digits, "theta_pieces": theta_pieces}
    started = time.perf_counter()
    certificate = Certificate(predicate=predicate, params=params, estimator=estimator, box=box.to_dict(),
                              status="undecided", dps=dps, prec_bits=bits, max_boxes=max_boxes,
                              min_width=min_width, versions=_versions(),
                              generated_code=generated_code_identity())

    with ctx.workprec(bits):
        c_params = {k: arb(v) for k, v in params.items()}
        root = {d: _outward(*getattr(box, d)) for d in _DIMS}

        def describe(ends, bounds):
            out = {d: [_decimal(ends[d][0], digits, ROUND_FLOOR), _decimal(ends[d][1], digits, ROUND_CEILING)]
                   for d in _DIMS}
            out["bounds"] = bounds
            return out

        def scores(ends):
            """Side widths scaled by how much e moves along them (e depends on a, bθ and b(1 − θ))."""
            b_hi = float(ends["b"][1])
            widths = {d: float(ends[d][1] - ends[d][0]) for d in spec.dims}
            scale = {"a": 1.0, "b": 1.0, "theta": max(1.0, b_hi)}
            splittable = {}
            for d in spec.dims:
                size = max(1.0, abs(float(ends[d][0])), abs(float(ends[d][1])))
                if widths[d] > min_width * size:
                    splittable[d] = widths[d] * scale[d]
            return splittable

        order = itertools.count()
        pending = [(0.0, next(order), root)]  # widest (scaled) box first
        examined = 0
        while pending:
            if examined >= max_boxes:
                _, _, ends = pending[0]
                certificate.undecided_box = describe(ends, {})
                certificate.reason = f"max_boxes={max_boxes} reached with {len(pending)} boxes pending"
                break
            _, _, ends = heapq.heappop(pending)
            examined += 1
            verdict, bounds = spec.evaluate(ends, c_params, estimator, counter, options)
            if verdict is True:
                certificate.leaves.append(describe(ends, bounds))
                continue
            if verdict is False:
                certificate.status = "failed"
                certificate.failure_box = describe(ends, bounds)
                certificate.reason = "the predicate is certainly false on the failure box"
                break
            split = scores(ends)
            if not split:
                # last chance: the exact midpoint, certainly false there is a counterexample
                point = {d: (arb(_hull(*ends[d]).mid()),) * 2 if d in spec.dims else ends[d] for d in _DIMS}
                point_verdict, point_bounds = spec.evaluate(point, c_params, estimator, counter, options)
                if point_verdict is False:
                    certificate.status = "failed"
                    certificate.failure_box = describe(point, point_bounds)
                    certificate.reason = "the predicate is certainly false at the midpoint of a minimal box"
                else:
                    certificate.undecided_box = describe(ends, bounds)
                    certificate.reason = "a box could not be split further (min_width)"
                break
            dim = max(split, key=split.get)
            lo, hi = ends[dim]
            middle = arb(((lo + hi) / 2).mid())
            for part in ((lo, middle), (middle, hi)):
                child = dict(ends)
                child[dim] = part
                width = max(scores(child).values(), default=0.0)
                heapq.heappush(pending, (-width, next(order), child))
        else:
            certificate.status = "proved"
        certificate.boxes = examined
    certificate.evaluations = counter.evaluations
    certificate.seconds = round(time.perf_counter() - started, 3)
    return certificate
