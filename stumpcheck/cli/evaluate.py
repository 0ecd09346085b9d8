"""``stumpcheck eval``: e(θ), L, ∇L or ∇²L at a requested number of verified digits.

Every printed digit is verified, by one of two methods, and the output names which:

* **certified** (the default where it succeeds, ``--method auto`` or ``arb``): a rigorous Arb
  enclosure (:mod:`stumpcheck.numerics.certified.enclosures`; the θ-integrals by ``acb.integral``, with the
  working precision raised by the bits that resolve the switch layer at 1 − θ*) at --dps + 5
  digits; a component is printed to the most digits (≤ --dps) to which both ends of its ball
  round alike, so each printed decimal is the correct rounding of the exact value;
* **high-precision** (``--method mpmath``, or where the enclosure is not tight enough): the value
  is computed at --dps digits and again, independently (higher precision, every quadrature piece
  halved, inputs read exactly), and only the digits the two share are printed
  (:func:`stumpcheck.numerics.evidence.verified_evaluation`). When they share fewer than --dps digits the
  working precision is raised, within a budget; if that is not enough, the command prints the
  verified digits, a warning naming the component, and exits with status 1.

Domain (checked before any arithmetic, one-line error and status 2 outside):
|a| ≤ 10⁹, 10⁻³⁰⁰ ≤ b ≤ 10⁹ (10⁻³⁰ ≤ b ≤ 10⁸ for the θ-integrals, whose softmax switch at 1 − θ* must lie at
least 2^−1000 from θ = 1: a − b up to about 680), θ ∈ [0, 1]; decimal inputs have at most 10 000 digits and
exponents within ±1000, in ASCII digits.
"""

from __future__ import annotations

import sys
import time
from decimal import Decimal

import click

from stumpcheck.numerics.precision import InputError

__all__ = ["eval_command", "MAX_ABS_A", "MIN_B", "MAX_B", "MAX_INTEGRAL_DPS", "MAX_SWITCH_BITS"]

MAX_ABS_A = Decimal("1e9")
MIN_B = Decimal("1e-300")
MAX_B = Decimal("1e9")
#: Smallest b of the θ-integrals: eval grad --a 10 --b 1e-30 takes about 5 min (log₂(1/b) extra bits);
#: at b = 1e-300 one evaluation had not finished after 15 min.
MIN_INTEGRAL_B = Decimal("1e-30")
#: Bits of the softmax switch layer at 1 − θ* the θ-integrals resolve, at most: eval grad at a = 300, b = 10
#: (438 bits) takes about 1.5 s of CPU, at a = 3000, b = 10 (4333 bits) more than 40 s of CPU in the Arb route
#: alone, and a = 1e9, b = 1e8 (5787 bits, the largest the layer's estimate gives) did not finish in 120 s.
MAX_SWITCH_BITS = 1000
#: --dps of the θ-integrals: 1000 digits take minutes (tanh-sinh on every piece, at 1110 digits for the check).
MAX_INTEGRAL_DPS = 1000
#: The working precision may be raised to at most this many times the requested digits, plus 60
#: (and never beyond the integrals' cap or MAX_DPS).
_RAISE_FACTOR = 4
#: Seconds after which no further (higher-precision) attempt is started; the first always completes.
_TIME_BUDGET = 300.0
_MAX_INPUT_DIGITS = 10_000
_MAX_EXPONENT = 1000
NAMES = {"error": ["e"], "loss": ["L"], "grad": ["dL/da", "dL/db"], "hessian": ["d2L/da2", "d2L/dadb", "d2L/db2"]}


def _decimal(text: str, name: str) -> Decimal:
    """A decimal input read exactly, with its size bounded before any arithmetic sees it."""
    from stumpcheck.numerics.precision import parse_decimal

    if len(str(text)) > _MAX_INPUT_DIGITS + 32:
        raise InputError(f"{name} has more than {_MAX_INPUT_DIGITS} characters")
    value = parse_decimal(text, name)
    if value != 0 and not -_MAX_EXPONENT <= value.adjusted() <= _MAX_EXPONENT:
        raise InputError(f"{name} = {str(text)[:40]} is outside the supported range (decimal exponent within "
                         f"±{_MAX_EXPONENT})")
    return value


def _check_domain(quantity: str, a: Decimal, b: Decimal) -> None:
    if quantity != "error" and b > Decimal("1e8"):
        raise InputError(f"θ-integrals (L, ∇L, ∇²L) are supported for b <= 1e+08, got b={b}")
    if quantity != "error" and 0 < b < MIN_INTEGRAL_B:
        raise InputError(f"θ-integrals (L, ∇L, ∇²L) are supported for b >= 1e-30 (below, ∂L/∂a = O(b) needs "
                         f"log10(1/b) extra digits and the quadrature takes hours), got b={b}")
    if not abs(a) <= MAX_ABS_A:
        raise InputError(f"eval supports |a| <= 1e9, got a={a}")
    if b > 0 and not MIN_B <= b <= MAX_B:
        raise InputError(f"eval supports 1e-300 <= b <= 1e9, got b={b}")
    if quantity != "error" and b > 0:
        from stumpcheck.cli.evaluate_arb import switch_layer_bits

        bits = switch_layer_bits(a, b)
        if bits > MAX_SWITCH_BITS:
            raise InputError(f"θ-integrals (L, ∇L, ∇²L) need the softmax switch at 1 − θ* >= 2^-{MAX_SWITCH_BITS} "
                             f"(a − b up to about 680); at a={a}, b={b} it lies 2^-{bits} or closer to θ = 1, which "
                             "neither the Arb nor the mpmath route resolves in minutes")


def _significant_digits(value: Decimal) -> int:
    return len(value.as_tuple().digits)


def _progress(start: float):
    """Progress lines on stderr when it is a terminal (long evaluations: high --dps, hessian)."""
    if not sys.stderr.isatty():
        return None

    def report(message: str) -> None:
        click.echo(f"eval: {message} ({time.monotonic() - start:.0f} s so far)", err=True)

    return report


@click.command("eval")
@click.argument("quantity", type=click.Choice(["error", "loss", "grad", "hessian"]))
@click.option("--a", "a_text", required=True, help="Label score a, |a| <= 1e9 (decimal, parsed exactly).")
@click.option("--b", "b_text", required=True,
              help="Feature score / attention scale b, 1e-300 <= b <= 1e9 (1e-30 <= b <= 1e8 for loss, grad, "
                   "hessian).")
@click.option("--theta", "theta_text", default=None,
              help="Threshold θ ∈ [0, 1] (error only; parsed exactly, any number of digits up to 10000).")
@click.option("--dps", default="30", show_default=True,
              help="Significant digits, 15 to 10000 (error) or 15 to 1000 (loss, grad, hessian; "
                   "about 1 min at 100 digits, many minutes at 1000).")
@click.option("--estimator", default="one-head", show_default=True,
              type=click.Choice(["one-head", "reflected", "averaged", "pooled"]))
@click.option("--method", default="auto", show_default=True, type=click.Choice(["auto", "arb", "mpmath"]),
              help="Where the verified digits come from: arb (a rigorous Arb enclosure; exit 1 if it is not "
                   "tight enough), mpmath (two independent mpmath evaluations), auto (arb, else mpmath).")
@click.option("--certified", is_flag=True,
              help="Print a rigorous Arb enclosure [mid +/- rad] and its relative radius instead.")
@click.option("--rel-width", "rel_width_text", default=None,
              help="With --certified: fail (exit 1) unless rad/|mid| is at most this.")
def eval_command(quantity, a_text, b_text, theta_text, dps, estimator, method, certified, rel_width_text) -> None:
    """Evaluate e(θ), L, ∇L or ∇²L from the derived expressions at --dps verified digits.

    By default the digits come from a rigorous Arb enclosure (evidence:
    certified; each printed decimal is the correct rounding of the exact
    value), in seconds. Where no enclosure is tight enough (or with --method
    mpmath) the value is computed twice, independently (at --dps and at a higher
    precision with every θ-piece halved), and only the digits both share are
    printed (evidence: high-precision); the output says which. If they share fewer than --dps digits
    the precision is raised (up to 4 × --dps + 60 digits, no new attempt after
    5 minutes); if that is not
    enough, the verified digits are printed with a warning and the exit status
    is 1. L, ∇L and ∇²L use mpmath tanh-sinh on θ-pieces placed at the model's
    own layers (in 1 − θ near θ = 1). Domain: |a| <= 1e9, 1e-300 <= b <= 1e9
    (1e-30 <= b <= 1e8 for the θ-integrals; grad takes about 5 min at 1e-30);
    exit 2 outside. Progress goes to stderr
    when it is a terminal.
    """
    from stumpcheck.numerics.precision import MAX_DPS, validate_dps

    digits = validate_dps(dps)
    a = _decimal(a_text, "a")
    b = _decimal(b_text, "b")
    if quantity == "error":
        if theta_text is None:
            raise InputError("eval error needs --theta")
        theta = _decimal(theta_text, "theta")
    elif theta_text is not None:
        raise InputError(f"--theta is not used by eval {quantity} (it integrates over θ)")
    else:
        theta = None
    # the numeric stack only once the text inputs have parsed
    import mpmath

    from stumpcheck.numerics.evidence import verified_evaluation
    from stumpcheck.numerics.population import quantities as population

    population.check_parameters(a, b, theta)
    _check_domain(quantity, a, b)
    if quantity != "error" and digits > MAX_INTEGRAL_DPS:
        raise InputError(f"--dps {digits} is above {MAX_INTEGRAL_DPS}, the limit for the θ-integrals "
                         f"(L, ∇L, ∇²L)")
    if rel_width_text is not None and not certified:
        raise InputError("--rel-width only applies with --certified")
    if certified and click.get_current_context().get_parameter_source("method").name != "DEFAULT":
        raise InputError(f"--method {method} does nothing with --certified, which prints an Arb enclosure: "
                         "drop one of them")
    if certified:
        _eval_certified(quantity, a, b, theta, a_text, b_text, theta_text, digits, estimator, rel_width_text)
        return
    where = f"a={a_text}, b={b_text}" + (f", theta={theta_text}" if theta is not None else "")
    fallback = ""
    if method != "mpmath":
        from stumpcheck.cli.evaluate_arb import arb_verified_digits

        found, reason = arb_verified_digits(quantity, a, b, theta, digits, estimator)
        if found is not None:
            _print_arb(quantity, estimator, where, digits, found)
            return
        if method == "arb":
            raise click.ClickException(f"no Arb enclosure verifies {digits} digits: {reason}")
        fallback = f"; no Arb enclosure verified {digits} digits ({reason})"

    def compute(subdivide):
        av, bv = population._mpf(a), population._mpf(b)
        if quantity == "error":
            return (population.error(av, bv, theta, estimator=estimator),)
        if quantity == "loss":
            return (population.loss(av, bv, estimator=estimator, subdivide=subdivide),)
        if quantity == "grad":
            return population.loss_gradient(av, bv, estimator=estimator, subdivide=subdivide)
        return population.loss_hessian(av, bv, estimator=estimator, subdivide=subdivide)

    cap = MAX_DPS if quantity == "error" else MAX_INTEGRAL_DPS + MAX_INTEGRAL_DPS // 4
    result = verified_evaluation(compute, digits, max_dps=min(cap, _RAISE_FACTOR * digits + 60),
                                 progress=_progress(time.monotonic()), time_budget=_TIME_BUDGET)
    shared = result.agreeing_digits
    agreement = "all digits" if shared == float("inf") else f"{shared:.1f} digits"
    raised = f"; working precision raised to {result.working_dps} digits" if result.working_dps > digits else ""
    click.echo(f"# {quantity}, estimator {estimator}, {where}; {digits} digits, evidence {result.evidence}: "
               f"agrees with an independent {result.check_dps}-digit evaluation to {agreement}{raised}{fallback}")
    unverified = []
    for name, value, kept in zip(NAMES[quantity], result.values, result.verified):
        if kept >= 1:
            click.echo(f"{name} = {mpmath.nstr(value, kept, strip_zeros=False, min_fixed=-3, max_fixed=3)}")
        else:
            click.echo(f"{name} = unverified (no digit agrees; two evaluations gave "
                       f"{mpmath.nstr(value, 3)})")
        if kept < digits:
            unverified.append(f"{name} {kept}")
    if unverified:
        click.echo(f"stumpcheck: warning: fewer verified digits than the {digits} requested "
                   f"({', '.join(unverified)}) up to {result.working_dps} working digits; "
                   "printed only the verified ones", err=True)
        click.get_current_context().exit(1)


def _print_arb(quantity, estimator, where, digits, found) -> None:
    """The Arb route's output: its header naming the method, then each component's correctly rounded digits."""
    work, values = found
    click.echo(f"# {quantity}, estimator {estimator}, {where}; {digits} digits, evidence certified: a rigorous "
               f"Arb enclosure at {work} digits (python-flint ball arithmetic), each printed decimal the correct "
               f"rounding of the enclosed value")
    for name, (text, _) in zip(NAMES[quantity], values):
        click.echo(f"{name} = {text}")


def _eval_certified(quantity, a, b, theta, a_text, b_text, theta_text, digits, estimator, rel_width_text) -> None:
    """Print Arb enclosures; the working precision covers every digit of the inputs."""
    import mpmath

    from stumpcheck.numerics.certified import enclosures as cert
    from stumpcheck.numerics.precision import MAX_DPS, parse_decimal

    rel_width = None
    if rel_width_text is not None:
        rel_width = float(parse_decimal(rel_width_text, "rel-width"))
        if not rel_width > 0:
            raise InputError(f"--rel-width must be > 0, got {rel_width_text}")
    inputs = [a, b] + ([theta] if theta is not None else [])
    # a decimal with more digits than the working precision would become a wide ball: work at its digits
    work = min(MAX_DPS, max(digits, max(_significant_digits(v) for v in inputs) + 10))
    a, b = str(a), str(b)
    try:
        if quantity == "error":
            values = [("e", cert.certified_error(a, b, str(theta), estimator=estimator, dps=work,
                                                 rel_width=rel_width))]
        elif quantity == "loss":
            values = [("L", cert.certified_loss(a, b, estimator=estimator, dps=work, rel_width=rel_width))]
        elif quantity == "grad":
            grad = cert.certified_loss_gradient(a, b, estimator=estimator, dps=work, rel_width=rel_width)
            values = list(zip(("dL/da", "dL/db"), grad))
        else:
            hessian = cert.certified_loss_hessian(a, b, estimator=estimator, dps=work, rel_width=rel_width)
            values = list(zip(("d2L/da2", "d2L/dadb", "d2L/db2"), hessian))
    except cert.EnclosureTooWide as exc:
        raise click.ClickException(f"certified enclosure too wide: {exc}") from None
    where = f"a={a_text}, b={b_text}" + (f", theta={theta_text}" if quantity == "error" else "")
    raised = f" (worked at {work} digits to hold the inputs)" if work > digits else ""
    click.echo(f"# {quantity}, estimator {estimator}, {where}; {digits} digits{raised}, evidence certified "
               f"(python-flint/Arb ball arithmetic, rigorous enclosure)")
    for name, enclosure in values:
        if not enclosure.is_finite:
            raise click.ClickException(f"{name}: the enclosure is not finite {enclosure}")
        ball = cert.format_ball(enclosure.mid, enclosure.rad, digits)
        click.echo(f"{name} = {ball}  (rel. radius {_relative_radius(ball)})")


def _relative_radius(ball: str) -> str:
    """rad/|mid| of a printed ball "[mid +/- rad]" (of the printed, rounded ball), 2 digits."""
    import mpmath

    mid, rad = ball.strip("[]").split(" +/- ")
    with mpmath.workdps(40):
        mid, rad = mpmath.mpf(mid), mpmath.mpf(rad)
        if rad == 0:
            return "0"
        return "inf" if mid == 0 else mpmath.nstr(rad / abs(mid), 2)
