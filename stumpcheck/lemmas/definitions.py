"""The lemma registry: named statements with a domain, a margin and a check.

A **lemma** is a statement "margin(**point) ≥ 0 for every point of the domain":

* ``domain``: a dict ``{argument name: hypothesis strategy}`` (drawn with
  ``st.fixed_dictionaries``) or a zero-argument callable returning a strategy of
  such dicts;
* ``margin(**point) -> float``: positive (or zero) where the statement holds,
  and its size is the slack; negative (or NaN, or an exception) is a
  counterexample;
* ``evidence``: the levels the lemma supports, among ``"sampled"`` (Hypothesis
  searches the domain), ``"high-precision"`` (the same search, then the margin
  at the worst point is recomputed at a higher mpmath precision and the digits
  that agree are reported) and ``"certified"`` (Arb ball arithmetic and
  bisection over the whole domain); the two higher levels need the lemma's
  SymPy margin (``sympy_margin=``): a lemma with a Python function only is
  sampled-only (or certified by ``symbolic(...)``, a SymPy proof of its statement);
* ``certify``: with ``"certified"``, a :class:`CertifiedSpec` made by
  :func:`certified` (a certified margin, its domain, strict or not: proved by
  :func:`stumpcheck.numerics.certified.proofs.margin_proof.prove`, which writes a certificate that
  ``stumpcheck recheck`` re-checks), a :class:`SymbolicSpec` made by :func:`symbolic`
  (a SymPy proof whose record the row carries), or a callable ``certify(*, quick)``
  returning :class:`stumpcheck.numerics.certified.proofs.box_prover.Certificate` boxes (the older form);
* ``reference``: the claim id of docs/model.md §7 or the derivation it comes from;
* ``precision``: what the margin computes in (e.g. ``"float64"``); default
  ``"mpmath dps <dps>"``, the working precision :func:`stumpcheck.lemmas.check.check_lemma` sets;
* ``rounding``: the rounding allowance the margin includes, for margins of the
  form ``rounding + (1 − ratio)`` (a ratio to a bound, on the scale 1); a
  smallest margin within the allowance of it is reported as *tight to
  rounding*, and the high-precision check then compares the margins on the
  ratio's scale, to the digits float64 margins resolve.

A margin must be a finite real number: NaN, ±inf and an exception are
counterexamples (with the reason in the figure).

:func:`stumpcheck.lemmas.check.check_lemma` checks a lemma (a seeded Hypothesis search at the sampled level).

The claims C1–C9 are registered as :class:`ClaimCheck` entries whose check is
a claim function ``(*, quick, seed, out_dir[, scheduler]) -> ClaimResult``,
named by ``"module:function"`` and imported only when it is run: a check that
cannot be imported is reported as FAIL with figure ``"not available: …"``.

Users write lemmas in their own file with the :func:`lemma` decorator and run
them with ``stumpcheck verify --lemma FILE.py:NAME`` (:func:`load_lemma`).
"""

from __future__ import annotations

import importlib
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from stumpcheck.numerics.precision import InputError
from stumpcheck.claims.result import ClaimResult  # noqa: F401  (the type claim checks return; re-exported)

__all__ = ["EVIDENCE_LEVELS", "Lemma", "ClaimCheck", "CertifiedSpec", "SymbolicSpec", "certified", "symbolic", "lemma",
           "sympy_lemma", "register", "registered"]

EVIDENCE_LEVELS = ("sampled", "high-precision", "certified")
#: default number of Hypothesis examples per sampled check
DEFAULT_MAX_EXAMPLES = 200
#: default working precision (decimal digits) under which margins are evaluated
DEFAULT_DPS = 30

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*$")
_REGISTRY: dict[str, "Lemma | ClaimCheck"] = {}
_LOADING_USER_FILE: list[str] = []


def _check_name(name) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"lemma name {name!r} must be a word (letters, digits, _ . -), usable in --only")
    return name


def _check_evidence(evidence) -> tuple:
    evidence = tuple(evidence)
    if not evidence or any(level not in EVIDENCE_LEVELS for level in evidence):
        raise ValueError(f"evidence {evidence!r} must be a non-empty tuple of {', '.join(EVIDENCE_LEVELS)}")
    return evidence


@dataclass(frozen=True)
class CertifiedSpec:
    """What a lemma's level ``"certified"`` proves: ``margin`` ≥ 0 (``strict``: > 0) at every point of ``domain``.

    ``margin`` is a :class:`stumpcheck.numerics.certified.proofs.margins.Margin` and ``domain`` a
    :class:`stumpcheck.numerics.certified.proofs.domains.Domain`, or zero-argument callables returning them (so that a lemma
    file imports fast and compiles its margin only when it is certified). ``quick_domain`` (optional) is a
    sub-domain proved instead under ``--quick``: the row then says so, and its evidence for the whole
    statement stays sampled. ``dps`` is the prover's working precision in digits; ``prove_options`` go to
    :func:`stumpcheck.numerics.certified.proofs.margin_proof.prove` (``max_boxes``, ``max_depth``, ``min_width``, and ``b_ratio``: a b
    range longer than this factor is first cut geometrically; prove's default 2). ``identity`` (optional, a
    dict or a zero-argument callable returning one) is the record of a symbolic step the proof rests on
    besides the interval arithmetic (e.g. the identity that turns the stated margin into the certified one,
    :meth:`stumpcheck.theory.margin_identities.MarginIdentity.record`); it is written into the certificate.
    """

    margin: object
    domain: object
    strict: bool = False
    quick_domain: object = None
    dps: int = DEFAULT_DPS
    prove_options: dict = field(default_factory=dict)
    identity: object = None

    def __post_init__(self):
        if not isinstance(self.strict, bool):
            raise ValueError(f"certified(): strict must be True or False, got {self.strict!r}")
        if isinstance(self.dps, bool) or not isinstance(self.dps, int) or not 15 <= self.dps <= 10_000:
            raise ValueError(f"certified(): dps must be an int in [15, 10000], got {self.dps!r}")
        unknown = set(self.prove_options) - {"max_boxes", "max_depth", "min_width", "b_ratio", "workers"}
        if unknown:
            raise ValueError(f"certified(): unknown option {', '.join(sorted(unknown))} "
                             "(it takes max_boxes, max_depth, min_width, b_ratio, workers)")
        ratio = self.prove_options.get("b_ratio")
        if ratio is not None and (isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or not ratio > 1):
            raise ValueError(f"certified(): b_ratio must be a number > 1, got {ratio!r}")

    def resolve(self, *, quick: bool, name: str = "?"):
        """(margin, domain, whole): the Margin, the Domain to prove (the quick one under ``quick`` if given)
        and whether that is the lemma's whole certified domain. InputError (one line) if a callable fails or
        gives something else."""
        from stumpcheck.numerics.certified.proofs.domains import Domain
        from stumpcheck.numerics.certified.proofs.margins import Margin

        def value(x, kind, what):
            if not isinstance(x, kind) and callable(x):
                try:
                    x = x()
                except InputError:
                    raise
                except Exception as exc:  # the user's callable: bad input, one line
                    raise InputError(f"lemma {name}: building its certified {what} failed: "
                                     f"{type(exc).__name__}: {_short_text(str(exc))}") from None
            if not isinstance(x, kind):
                raise InputError(f"lemma {name}: its certified {what} must be a {kind.__name__}, "
                                 f"got {type(x).__name__}")
            return x

        margin = value(self.margin, Margin, "margin")
        if quick and self.quick_domain is not None:
            return margin, value(self.quick_domain, Domain, "quick domain"), False
        return margin, value(self.domain, Domain, "domain"), True


    def identity_record(self, name: str = "?") -> dict | None:
        """The ``identity`` record (called if it is a callable); InputError (one line) if it fails."""
        record = self.identity
        if callable(record):
            try:
                record = record()
            except InputError:
                raise
            except Exception as exc:  # noqa: BLE001 - a failed derivation: one line
                raise InputError(f"lemma {name}: its symbolic identity failed: {type(exc).__name__}: "
                                 f"{_short_text(str(exc))}") from None
        if record is not None and not isinstance(record, dict):
            raise InputError(f"lemma {name}: its identity record must be a dict, got {type(record).__name__}")
        return record


@dataclass(frozen=True)
class SymbolicSpec(CertifiedSpec):
    """A lemma's level ``"certified"`` reached by a symbolic proof instead of interval arithmetic.

    ``proof`` is a zero-argument callable returning a record ``{"status": "proved" | "failed", "method",
    "proves", ...}`` (``proves``: exactly what was proved, e.g. for which contexts); the row is certified
    only if the status is ``"proved"``, and the record goes into the row's details.
    """

    proof: object = None

    def __post_init__(self):
        super().__post_init__()
        if not callable(self.proof):
            raise ValueError("symbolic(): proof must be a zero-argument callable returning a record")


def symbolic(proof) -> SymbolicSpec:
    """The ``certify=`` of a lemma proved symbolically (SymPy): ``proof()`` returns the proof record.

    >>> from stumpcheck.lemmas import symbolic
    >>> symbolic(lambda: {"status": "proved"}).proof()["status"]
    'proved'
    """
    return SymbolicSpec(margin=None, domain=None, proof=proof)


def certified(margin, domain, *, strict: bool = False, quick_domain=None, dps: int = DEFAULT_DPS,
              identity=None, **prove_options) -> CertifiedSpec:
    """The ``certify=`` of a lemma proved over a whole domain: margin ≥ 0 (strict: > 0) on ``domain``.

    >>> from stumpcheck.lemmas import certified
    >>> spec = certified(lambda: None, lambda: None, strict=True)
    >>> spec.strict
    True
    """
    return CertifiedSpec(margin=margin, domain=domain, strict=strict, quick_domain=quick_domain, dps=dps,
                         prove_options=dict(prove_options), identity=identity)


def python_only_refusal(name: str, level: str) -> str:
    """Why a lemma with a Python function only (no SymPy margin) cannot be checked at ``level``: it is
    sampled-only (the high-precision check would re-run the same code, and no proof evaluates a Python function;
    ``symbolic(...)``, a SymPy proof of the statement itself, is the one certified form it may have)."""
    return (f"lemma {name}: a lemma with a Python function only is sampled-only, not {level}: give it a SymPy margin "
            "(sympy_margin=Margin.from_sympy(...), or define it with sympy_lemma(...))"
            + (" or a SymPy proof of its statement (certify=symbolic(...))" if level == "certified" else ""))


@dataclass(frozen=True)
class Lemma:
    """A statement ``margin(**point) ≥ 0 for all point in domain``; see the module doc."""

    name: str
    statement: str
    domain: object
    margin: Callable[..., float]
    evidence: tuple = ("sampled",)
    reference: str = ""
    certify: "Callable | CertifiedSpec | None" = None
    tolerance: str = "margin >= 0 at every point"
    max_examples: int = DEFAULT_MAX_EXAMPLES
    precision: str = ""
    rounding: float = 0.0
    sympy_margin: object = None
    #: ``"FILE.py:NAME"`` where :func:`~stumpcheck.lemmas.load_lemma` loaded it from (named by the replay recipe)
    source: str = field(default="", compare=False, repr=False)

    def __post_init__(self):
        _check_name(self.name)
        from stumpcheck.lemmas.margin import one_margin

        one_margin(self)
        if isinstance(self.rounding, bool) or not isinstance(self.rounding, (int, float)) or not (
                math.isfinite(self.rounding) and 0 <= self.rounding < 1):
            raise ValueError(f"lemma {self.name}: rounding must be a number in [0, 1), got {self.rounding!r}")
        if not isinstance(self.statement, str) or not self.statement.strip():
            raise ValueError(f"lemma {self.name}: statement must be a non-empty string")
        if not callable(self.margin):
            raise ValueError(f"lemma {self.name}: margin must be callable (or give sympy_margin=)")
        if not (callable(self.domain) or isinstance(self.domain, Mapping)):
            raise ValueError(f"lemma {self.name}: domain must be a dict of strategies or a callable")
        if isinstance(self.domain, Mapping):
            from hypothesis.strategies import SearchStrategy

            for key, value in self.domain.items():
                if not isinstance(key, str) or not isinstance(value, SearchStrategy):
                    raise ValueError(f"lemma {self.name}: domain[{key!r}] must be a hypothesis strategy")
            object.__setattr__(self, "domain", dict(self.domain))
        object.__setattr__(self, "evidence", _check_evidence(self.evidence))
        beyond = [level for level in self.evidence if self.sympy_margin is None and level != "sampled"
                  and not (level == "certified" and isinstance(self.certify, SymbolicSpec))]
        if beyond:
            raise ValueError(python_only_refusal(self.name, beyond[0]))
        if "certified" in self.evidence and not (callable(self.certify) or isinstance(self.certify, CertifiedSpec)):
            raise ValueError(f"lemma {self.name}: evidence 'certified' needs certify=certified(margin, domain) "
                             "(or a certify callable)")
        if isinstance(self.max_examples, bool) or not isinstance(self.max_examples, int) or self.max_examples < 1:
            raise ValueError(f"lemma {self.name}: max_examples must be a positive int")

    @property
    def python_margin(self):
        """The file's Python margin function, or None for a lemma given by its SymPy margin alone."""
        from stumpcheck.lemmas.margin import SympyMarginCall

        return None if isinstance(self.margin, SympyMarginCall) else self.margin

    def point_margin(self, variables):
        """The :class:`~stumpcheck.lemmas.margin.PointMargin` of the lemma's SymPy margin over ``variables``
        (None for a Python-only lemma); InputError (one line) if the margin cannot be built or compiled."""
        from stumpcheck.lemmas.margin import point_margin_of

        return point_margin_of(self, tuple(sorted(variables)))

    def as_test(self, *, level: str | None = None, max_examples: int | None = None, seed: int = 0,
                dps: int = DEFAULT_DPS, quick: bool = True):
        """A pytest test function checking this lemma: ``test_x = x.as_test(max_examples=50)`` in a test module.

        When run, it calls :func:`~stumpcheck.lemmas.check.check_lemma` at ``level`` (default: the lemma's first
        evidence level) and fails, with the counterexample and the recipe that replays it, unless the check
        passes at that level; see :func:`stumpcheck.lemmas.testing.lemma_test`. The checker is reached at call
        time through :mod:`stumpcheck.lemmas`' lazy names, so that these definitions import none of it.
        """
        import sys

        from stumpcheck import lemmas

        return lemmas.lemma_test(self, level=level, max_examples=max_examples, seed=seed, dps=dps, quick=quick,
                                 namespace=sys._getframe(1).f_globals)

    def strategy(self):
        """The Hypothesis strategy of points (dicts of keyword arguments for ``margin``)."""
        from hypothesis import strategies as st

        if isinstance(self.domain, Mapping):
            return st.fixed_dictionaries(self.domain)
        strategy = self.domain()
        if not isinstance(strategy, st.SearchStrategy):
            raise ValueError(f"lemma {self.name}: domain() must return a hypothesis strategy, got {strategy!r}")
        return strategy


@dataclass(frozen=True)
class ClaimCheck:
    """A claim of docs/model.md §7 in the registry: ``check`` is ``"module:function"``
    (imported when run) or a callable ``(*, quick, seed, out_dir) -> ClaimResult``;
    with ``takes_scheduler`` it also receives ``scheduler=`` (a Dask address or None)."""

    name: str
    statement: str
    check: object
    reference: str = ""
    evidence: tuple = ()
    takes_scheduler: bool = False

    def __post_init__(self):
        _check_name(self.name)
        if not (callable(self.check) or (isinstance(self.check, str) and ":" in self.check)):
            raise ValueError(f"claim {self.name}: check must be 'module:function' or a callable")

    def resolve(self) -> Callable:
        """The check function (imports its module); raises ImportError if unavailable."""
        if callable(self.check):
            return self.check
        module_name, _, attribute = self.check.partition(":")
        module = importlib.import_module(module_name)
        try:
            return getattr(module, attribute)
        except AttributeError:
            raise ImportError(f"cannot import name {attribute!r} from {module_name!r}") from None


def register(entry: "Lemma | ClaimCheck") -> "Lemma | ClaimCheck":
    """Add ``entry`` to the registry. A name may be registered again only by the
    same definition (same module and function), e.g. when a file is re-imported.
    While :func:`load_lemma` imports a user file, entries are returned unregistered."""
    if not isinstance(entry, (Lemma, ClaimCheck)):
        raise ValueError(f"only Lemma and ClaimCheck entries can be registered, got {entry!r}")
    if _LOADING_USER_FILE:
        return entry
    old = _REGISTRY.get(entry.name)
    if old is not None and _origin(old) != _origin(entry):
        raise ValueError(f"a lemma named {entry.name!r} is already registered ({old.reference or _origin(old)})")
    _REGISTRY[entry.name] = entry
    return entry


def _origin(entry) -> str:
    function = entry.margin if isinstance(entry, Lemma) else entry.check
    if isinstance(entry, Lemma) and entry.python_margin is None:
        function = entry.sympy_margin
    if isinstance(function, str):
        return function
    return f"{getattr(function, '__module__', '?')}:{getattr(function, '__qualname__', '?')}"


def lemma(*, name: str, statement: str, domain, evidence=("sampled",), reference: str = "",
          certify: "Callable | CertifiedSpec | None" = None, tolerance: str = "margin >= 0 at every point",
          max_examples: int = DEFAULT_MAX_EXAMPLES, precision: str = "", rounding: float = 0.0,
          register_it: bool = True, sympy_margin=None) -> Callable[[Callable], Lemma]:
    """Decorator: turn a margin function into a :class:`Lemma` (registered unless ``register_it=False``).

    >>> from hypothesis import strategies as st
    >>> from stumpcheck.lemmas import lemma
    >>> @lemma(name="square_nonnegative", statement="x² ≥ 0", domain={"x": st.floats(-1e3, 1e3)},
    ...        register_it=False)
    ... def square_nonnegative(x):
    ...     return x * x
    >>> square_nonnegative.name
    'square_nonnegative'
    """

    def wrap(margin: Callable) -> Lemma:
        entry = Lemma(name=name, statement=statement, domain=domain, margin=margin, evidence=evidence,
                      reference=reference, certify=certify, tolerance=tolerance, max_examples=max_examples,
                      precision=precision, rounding=rounding, sympy_margin=sympy_margin)
        return register(entry) if register_it else entry

    return wrap


def sympy_lemma(*, name: str, statement: str, domain, margin, evidence=("sampled",), reference: str = "",
                certify: "CertifiedSpec | None" = None, tolerance: str = "margin >= 0 at every point",
                max_examples: int = DEFAULT_MAX_EXAMPLES, precision: str = "", register_it: bool = True) -> Lemma:
    """A lemma given by its SymPy margin alone (a Margin, or a zero-argument callable returning one): the
    sampled search, the high-precision check and the proof (``certify=certified(None, domain)``) all evaluate
    it; ``lemma.margin(**point)`` is its value at a point."""
    entry = Lemma(name=name, statement=statement, domain=domain, margin=None, evidence=evidence, reference=reference,
                  certify=certify, tolerance=tolerance, max_examples=max_examples,
                  precision=precision or "its SymPy margin: mpmath at points (θ-integrals: float64 quadrature), "
                                         "Arb balls in proofs", sympy_margin=margin)
    return register(entry) if register_it else entry


def registered() -> dict[str, "Lemma | ClaimCheck"]:
    """The entries registered so far, by name, in registration order. The registry does not import its
    contents: :mod:`stumpcheck.lemmas.catalogue` is the registry filled with C1–C9 and the built-in lemmas."""
    return dict(_REGISTRY)


def _short_text(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."
