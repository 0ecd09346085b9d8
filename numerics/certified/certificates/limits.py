"""The limits a certificate must respect before a re-check does any work, so that a hostile file cannot hang it.

A re-check reads numbers, precisions and a margin's SymPy ``srepr`` from a file anyone can write. Each is
checked here, by its text, before it is converted or evaluated (an exceeded limit is an
:class:`~stumpcheck.numerics.precision.InputError`, one line naming the limit):

* the file: a regular file of at most :data:`MAX_CERTIFICATE_BYTES` (checked by
  :func:`stumpcheck.numerics.certified.certificates.lemma_certificate.read_certificate` before it reads);

* a number (a box end, a recorded enclosure end, a domain end): at most :data:`MAX_NUMBER_CHARS` characters,
  a decimal ``[+-]digits[.digits][e±k]`` with |k| ≤ :data:`MAX_EXPONENT`, a ``p/q`` or an int, so that
  ``Fraction("1e999999999")`` (a billion-digit integer) is never built;
* precision: ``dps`` in [:data:`~stumpcheck.numerics.precision.MIN_DPS`, :data:`~stumpcheck.numerics.precision.MAX_DPS`],
  ``prec_bits`` in [16, :data:`MAX_PREC_BITS`]; at most :data:`MAX_LEAVES` leaves, each of recorded
  depth ≤ :data:`MAX_DEPTH`; θ-pieces ≤ :data:`MAX_THETA_PIECES`;
* a margin's ``srepr`` (:func:`check_srepr`): at most :data:`MAX_SREPR_CHARS` characters, nested calls of
  the SymPy classes of :data:`MARGIN_CLASSES` (and the model's relations) on literals only, literals of at most
  :data:`MAX_LITERAL_DIGITS` digits, and no subexpression that could evaluate to a number of more than
  :data:`MAX_NUMBER_DIGITS` digits (``Pow(Integer(10), Integer(100000000))`` is refused by its text: SymPy
  would evaluate it on construction). Functions that SymPy evaluates to huge integers (``factorial``,
  ``gamma``, …) and non-expressions (``Lambda``, ``Sum``, …) are not in the list.
"""

from __future__ import annotations

import ast
import math
import re
from fractions import Fraction

from stumpcheck.numerics.precision import MAX_DPS, MIN_DPS, InputError

__all__ = ["MAX_CERTIFICATE_BYTES", "MAX_NUMBER_CHARS", "MAX_EXPONENT", "MAX_LEAVES", "MAX_DEPTH", "MAX_PREC_BITS", "MAX_THETA_PIECES",
           "MAX_SREPR_CHARS", "MAX_LITERAL_DIGITS", "MAX_NUMBER_DIGITS", "MARGIN_CLASSES", "bounded_exact",
           "check_number_text", "check_int", "check_dps", "check_srepr"]

#: the largest certificate file read (a lemma certificate at MAX_LEAVES leaves is about 250 MB)
MAX_CERTIFICATE_BYTES = 400 * 2**20
MAX_NUMBER_CHARS = 1000
MAX_EXPONENT = 1000
MAX_LEAVES = 1_000_000
MAX_DEPTH = 200
#: the working bits of MAX_DPS digits with generous room for guard bits and the domain's size
MAX_PREC_BITS = 40_000
MAX_THETA_PIECES = 10_000
MAX_SREPR_CHARS = 200_000
MAX_LITERAL_DIGITS = 400
MAX_NUMBER_DIGITS = 10_000

#: the SymPy classes a margin's srepr may call: numbers, symbols, arithmetic and the elementary functions the
#: margin printer (:mod:`stumpcheck.theory.codegen_margins`) compiles
MARGIN_CLASSES = frozenset({
    "Symbol", "Function", "Integer", "Rational", "Float", "Half", "One", "Zero", "NegativeOne", "Pi", "Exp1",
    "EulerGamma", "Catalan", "Add", "Mul", "Pow", "exp", "log", "Abs", "sign", "Max", "Min", "zeta",
    "sin", "cos", "tan", "atan", "sinh", "cosh", "tanh", "erf", "RealAbs", "RealMin", "MinWeight"})

_DECIMAL = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE]([+-]?\d+))?")
_RATIO = re.compile(r"[+-]?\d+/\d+")


def check_number_text(value, name: str) -> None:
    """InputError unless ``value`` is an int or a string of a decimal or ``p/q`` within the limits above
    (checked on the text: nothing is converted)."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise InputError(f"{name} must be an exact decimal or p/q string, got {str(value)[:40]!r}")
    if isinstance(value, int):
        if value.bit_length() > MAX_NUMBER_CHARS * 4:
            raise InputError(f"{name} has more than {MAX_NUMBER_CHARS} digits (the limit)")
        return
    text = value.strip()
    if len(text) > MAX_NUMBER_CHARS:
        raise InputError(f"{name} has {len(text)} characters, more than the limit {MAX_NUMBER_CHARS}")
    match = _DECIMAL.fullmatch(text)
    if match is not None:
        if match.group(4) is not None and abs(int(match.group(4))) > MAX_EXPONENT:
            raise InputError(f"{name} {text[:40]!r} has a decimal exponent beyond ±{MAX_EXPONENT} (the limit)")
        return
    if _RATIO.fullmatch(text) is None:
        raise InputError(f"{name} must be an exact decimal or p/q string, got {text[:40]!r}")


def bounded_exact(value, name: str) -> Fraction:
    """The exact rational of ``value`` after :func:`check_number_text`; InputError for a zero denominator."""
    check_number_text(value, name)
    try:
        return Fraction(value.strip() if isinstance(value, str) else value)
    except (ValueError, ZeroDivisionError):
        raise InputError(f"{name} must be an exact decimal or p/q string, got {str(value)[:40]!r}") from None


def check_int(value, name: str, low: int, high: int, *, whose: str = "the certificate's") -> int:
    """``value`` if it is an int in [low, high]; InputError naming ``whose`` ``name`` and the limits otherwise."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"{whose} {name} must be an int in [{low}, {high}], got {str(value)[:40]!r}")
    if not low <= value <= high:
        raise InputError(f"{whose} {name} = {str(value)[:40]} is outside the limits [{low}, {high}]")
    return value


def check_dps(value) -> int:
    """The certificate's ``dps``, an int in [MIN_DPS, MAX_DPS]."""
    return check_int(value, "dps", MIN_DPS, MAX_DPS)


_SAFE_NODES = (ast.Expression, ast.Call, ast.Name, ast.Constant, ast.Load, ast.keyword, ast.Tuple, ast.List,
               ast.UnaryOp, ast.USub, ast.UAdd)
#: the constructors whose first argument may be a string (a name or a number, never parsed as an expression)
_TEXT_CONSTRUCTORS = {"Symbol", "Function", "Float"}


def check_srepr(text, allowed_names=()) -> None:
    """Refuse an ``srepr`` that is anything but nested calls of :data:`MARGIN_CLASSES` (and ``allowed_names``)
    on bounded literals, or that could build a number of more than :data:`MAX_NUMBER_DIGITS` digits.

    Strings may only be the first argument of a name or number constructor (``Symbol('b')``,
    ``Float('0.1', precision=53)``), so that no constructor ever sympifies (parses) a string."""
    if not isinstance(text, str):
        raise InputError("the margin's srepr must be a string")
    if len(text) > MAX_SREPR_CHARS:
        raise InputError(f"the margin's srepr has {len(text)} characters, more than the limit {MAX_SREPR_CHARS}")
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError) as exc:
        raise InputError(f"the margin's srepr does not parse: {type(exc).__name__}") from None
    allowed = MARGIN_CLASSES | set(allowed_names)
    text_ok = set()
    for node in ast.walk(tree):
        if not isinstance(node, _SAFE_NODES):
            raise InputError(f"the margin's srepr contains {type(node).__name__}, not a SymPy constructor")
        if isinstance(node, ast.Name) and node.id not in allowed:
            raise InputError(f"the margin's srepr calls {node.id[:40]!r}, which a margin may not use (allowed: "
                             "numbers, symbols, arithmetic, the elementary functions the margin printer compiles "
                             "and the model's relations)")
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name) and node.func.id in _TEXT_CONSTRUCTORS and node.args:
                text_ok.add(id(node.args[0]))
            for keyword in node.keywords:
                if not (isinstance(keyword.value, ast.Constant) and isinstance(keyword.value.value, (bool, int))):
                    raise InputError("the margin's srepr passes a keyword that is not a bool or an int")
                if keyword.arg == "precision" and not 1 <= keyword.value.value <= MAX_PREC_BITS:
                    raise InputError(f"the margin's srepr has a Float precision outside [1, {MAX_PREC_BITS}]")
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str) and id(node) not in text_ok:
                raise InputError("the margin's srepr passes a string where SymPy would parse it as an expression")
            if isinstance(node.value, str) and len(node.value) > MAX_LITERAL_DIGITS:
                raise InputError(f"the margin's srepr has a name or number text longer than {MAX_LITERAL_DIGITS}")
            if isinstance(node.value, int) and len(str(abs(node.value))) > MAX_LITERAL_DIGITS:
                raise InputError(f"the margin's srepr has an integer of more than {MAX_LITERAL_DIGITS} digits")
            if isinstance(node.value, float):
                raise InputError("the margin's srepr has a bare float (SymPy writes Float('…', precision=…))")
    for node in ast.walk(tree):  # a Float's text is a number: within the number limits
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Float" and node.args:
            if isinstance(node.args[0], ast.Constant):
                check_number_text(node.args[0].value, "a Float in the margin's srepr")
    try:
        digits = _digits(tree.body)
    except RecursionError:
        raise InputError("the margin's srepr is nested too deeply") from None
    if digits > MAX_NUMBER_DIGITS:
        raise InputError(f"the margin's srepr could build a number of more than {MAX_NUMBER_DIGITS} digits "
                         "(a power of a large or nested exponent): refused before evaluating it")


def _literal(node) -> int | None:
    """The int value of ``Integer(n)`` or ``-n`` literal nodes, else None."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _literal(node.operand)
        return None if inner is None else -inner
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Integer" and node.args:
        return _literal(node.args[0])
    return None


def _digits(node) -> float:
    """An upper bound on the decimal digits of any rational SymPy can build while constructing ``node``
    (0 for names): sums add a digit, products add digits, a power multiplies its base's digits by the size of
    its exponent, exp(x) counts as a power of e (SymPy turns exp(n·log k) into k^n)."""
    if isinstance(node, ast.Constant):
        return len(str(abs(node.value))) if isinstance(node.value, int) else 0
    if isinstance(node, ast.UnaryOp):
        return _digits(node.operand)
    if isinstance(node, (ast.Tuple, ast.List)):
        return max((_digits(x) for x in node.elts), default=0)
    if not isinstance(node, ast.Call):
        return 0
    name = node.func.id if isinstance(node.func, ast.Name) else None
    args = [_digits(x) for x in node.args]
    if isinstance(node.func, ast.Call):  # Function('f')(x, …): an undefined function of its arguments
        return max(args, default=0)
    if name in ("Symbol", "Function", "Float"):
        return 0 if name != "Float" else 1
    if name in ("Integer", "Rational"):
        return max(args, default=0)
    if name == "Add":
        return max(args, default=0) + math.log10(len(args) + 1)
    if name == "Mul":
        return sum(args)
    if name in ("Pow", "exp"):
        base, exponent = (max(args[0], 1), node.args[1]) if name == "Pow" and len(args) == 2 else (1, None)
        if name == "exp" and node.args:
            exponent = node.args[0]
        if exponent is None:
            return max(args, default=0)
        value = _literal(exponent)
        size = abs(value) if value is not None else 10 ** min(_digits(exponent), 400)
        return max(args) + base * size if size > 1 else max(args)
    return max(args, default=0)
