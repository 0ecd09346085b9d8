"""stumpcheck.numerics.certified.proofs.box_prover: predicates proved over boxes by Arb interval evaluation and bisection."""

import hashlib
import json
import math
from fractions import Fraction
from pathlib import Path

import mpmath
import pytest
from click.testing import CliRunner

from stumpcheck.numerics.certified.proofs.box_prover import PREDICATES, Box, Certificate, certify
from stumpcheck.numerics.population.quantities import error, loss_gradient
from stumpcheck.numerics.precision import InputError
from stumpcheck.cli.certify import certify as certify_command

# a box around the calibration relation a = b + 2 log b at b ∈ [100, 101], bulk θ
A_BOX = (repr(100 + 2 * math.log(100) - 0.01), repr(101 + 2 * math.log(101) + 0.01))
B_BOX = ("100", "101")
THETA_BOX = ("0.05", "0.95")
BOX = Box(a=A_BOX, b=B_BOX, theta=THETA_BOX)


def test_the_bound_is_plausible_before_proving_it():
    """Sampled with mpmath: b·e ≈ 1 in the bulk (below 2), about 0.97 at θ = 0.95 and −b at θ = 1."""
    with mpmath.workdps(30):
        for b in (100, 101):
            a = b + 2 * mpmath.log(b)
            for theta in ("0.05", "0.5", "0.95"):
                assert 0.9 < b * error(a, b, mpmath.mpf(theta)) < 1.01
            assert b * error(a, b, 1) < -50  # why θ is kept away from 1


def test_error_below_two_over_b_is_proved_on_the_calibration_box():
    cert = certify("error_abs_le_c_over_b", BOX, params={"c": "2"})
    assert cert.status == "proved" and cert.proved
    assert cert.failure_box is None and cert.undecided_box is None
    assert cert.boxes == 2 * len(cert.leaves) - 1 and cert.evaluations >= cert.boxes  # a binary tree
    assert cert.versions["python-flint"] and cert.versions["mpmath"]
    for leaf in cert.leaves:
        lower, upper = (mpmath.mpf(x) for x in leaf["bounds"]["b*e"])
        assert -2 <= lower and upper <= 2
    # the leaves cover the θ range
    covered = sorted((float(leaf["theta"][0]), float(leaf["theta"][1])) for leaf in cert.leaves)
    assert covered[0][0] <= 0.05 and max(hi for _, hi in covered) >= 0.95


def test_error_below_half_over_b_fails_on_a_box_with_a_genuine_counterexample():
    cert = certify("error_abs_le_c_over_b", BOX, params={"c": "0.5"})
    assert cert.status == "failed" and not cert.proved
    fail = cert.failure_box
    assert fail is not None
    # any point of the failure box violates the bound; check its centre with mpmath
    with mpmath.workdps(40):
        a, b, theta = ((mpmath.mpf(fail[d][0]) + mpmath.mpf(fail[d][1])) / 2 for d in ("a", "b", "theta"))
        for d, (lo, hi) in zip(("a", "b", "theta"), (A_BOX, B_BOX, THETA_BOX)):
            centre = {"a": a, "b": b, "theta": theta}[d]
            assert mpmath.mpf(lo) <= centre <= mpmath.mpf(hi)
        assert abs(error(a, b, theta)) > mpmath.mpf("0.5") / b
    assert mpmath.mpf(fail["bounds"]["b*e"][0]) > 0.5


def test_gradient_in_b_is_negative_pointwise_on_the_calibration_box():
    cert = certify("error_gradient_b_negative", BOX)
    assert cert.status == "proved"


def test_dldb_is_negative_on_a_small_box_near_the_calibration_relation():
    box = Box(a=(repr(10 + 2 * math.log(10) - 0.01), repr(10 + 2 * math.log(10) + 0.01)), b=("10", "10.01"))
    cert = certify("dLdb_negative", box, max_boxes=50)
    assert cert.status == "proved"
    for leaf in cert.leaves:
        assert mpmath.mpf(leaf["bounds"]["dL/db"][1]) < 0
    # the bounds enclose the mpmath quadrature at the box's corner
    with mpmath.workdps(30):
        a, b = mpmath.mpf(str(box.a[0])), mpmath.mpf(str(box.b[0]))
        value = loss_gradient(a, b)[1]
    assert any(mpmath.mpf(leaf["bounds"]["dL/db"][0]) <= value <= mpmath.mpf(leaf["bounds"]["dL/db"][1])
               for leaf in cert.leaves)


def test_undecided_when_the_box_budget_runs_out():
    cert = certify("error_abs_le_c_over_b", BOX, params={"c": "2"}, max_boxes=2)
    assert cert.status == "undecided" and "max_boxes" in cert.reason
    assert cert.undecided_box is not None


@pytest.mark.parametrize("kwargs, fragment", [
    ({"a": ("1", "2"), "b": ("-1", "2")}, "b must be > 0"),
    ({"a": ("1", "2"), "b": ("0", "2")}, "b must be > 0"),
    ({"a": ("1", "2"), "b": ("1", "2"), "theta": ("-0.1", "0.5")}, "theta must lie in [0, 1]"),
    ({"a": ("1", "2"), "b": ("1", "2"), "theta": ("0.5", "1.5")}, "theta must lie in [0, 1]"),
    ({"a": ("2", "1"), "b": ("1", "2")}, "lo <= hi"),
    ({"a": ("nan", "1"), "b": ("1", "2")}, "finite"),
    ({"a": (float("inf"), 1.0), "b": ("1", "2")}, "finite"),
    ({"a": ("x", "1"), "b": ("1", "2")}, "decimal"),
])
def test_bad_boxes_raise_input_error(kwargs, fragment):
    with pytest.raises(InputError, match=fragment.replace("[", r"\[").replace("]", r"\]")):
        Box(**kwargs)


@pytest.mark.parametrize("predicate, params, box_kwargs, fragment", [
    ("nope", {}, {}, "unknown predicate"),
    ("error_abs_le_c_over_b", {}, {}, "needs the parameter c"),
    ("error_gradient_b_negative", {"c": "1"}, {}, "takes no parameter"),
    ("dLdb_negative", {}, {"theta": ("0", "0.5")}, r"\[0, 1\]"),
])
def test_bad_requests_raise_input_error(predicate, params, box_kwargs, fragment):
    box = Box(a=("1", "2"), b=("1", "2"), **box_kwargs)
    with pytest.raises(InputError, match=fragment):
        certify(predicate, box, params=params)


def test_bad_precision_raises_input_error():
    with pytest.raises(InputError):
        certify("error_gradient_b_negative", BOX, dps=5)


def test_certificate_json_round_trips():
    cert = certify("error_abs_le_c_over_b", BOX, params={"c": "2"})
    text = cert.to_json()
    data = json.loads(text)
    assert data["status"] == "proved" and data["predicate"] == "error_abs_le_c_over_b"
    assert data["params"] == {"c": "2"} and data["dps"] == 30
    back = Certificate.from_json(text)
    assert back == cert and back.to_json() == text
    assert Box.from_dict(data["box"]) == BOX


def test_predicates_are_registered_by_name():
    assert set(PREDICATES) == {"error_abs_le_c_over_b", "dLdb_negative", "error_gradient_b_negative"}


def _args(c):
    return ["--predicate", "error_abs_le_c_over_b", "--a", ",".join(A_BOX), "--b", ",".join(B_BOX),
            "--theta", ",".join(THETA_BOX), "--param", f"c={c}"]


def test_command_exits_0_when_proved_and_writes_the_certificate(tmp_path):
    out = tmp_path / "cert.json"
    result = CliRunner().invoke(certify_command, _args("2") + ["--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "PROVED" in result.output.splitlines()[0]
    assert "boxes" in result.output
    assert Certificate.from_json(out.read_text()).status == "proved"


def test_command_exits_1_when_the_predicate_fails():
    result = CliRunner().invoke(certify_command, _args("0.5"))
    assert result.exit_code == 1, result.output
    assert "FAILED" in result.output.splitlines()[0]
    assert "failure box" in result.output


def test_command_exits_1_when_undecided():
    result = CliRunner().invoke(certify_command, _args("2") + ["--max-boxes", "1"])
    assert result.exit_code == 1 and "UNDECIDED" in result.output


@pytest.mark.parametrize("argv", [
    ["--predicate", "error_gradient_b_negative", "--a", "1,2", "--b", "-1,2"],
    ["--predicate", "error_gradient_b_negative", "--a", "1,2", "--b", "1,2", "--theta", "0,2"],
    ["--predicate", "error_gradient_b_negative", "--a", "1", "--b", "1,2"],
    ["--predicate", "error_abs_le_c_over_b", "--a", "1,2", "--b", "1,2", "--param", "c"],
])
def test_command_bad_input_raises_input_error(argv):
    result = CliRunner().invoke(certify_command, argv)
    assert isinstance(result.exception, InputError)


def _leaf_partition(leaf) -> list[Fraction]:
    return [Fraction(cut) for cut in leaf["bounds"]["theta_partition"]]


def test_dldb_certificate_stores_a_partition_that_tiles_theta_exactly_and_recomputes_the_bound():
    box = Box(a=(repr(10 + 2 * math.log(10) - 0.01), repr(10 + 2 * math.log(10) + 0.01)), b=("10", "10.01"))
    cert = certify("dLdb_negative", box, max_boxes=50)
    assert cert.status == "proved" and cert.leaves
    data = json.loads(cert.to_json())
    for leaf in data["leaves"]:
        cuts = _leaf_partition(leaf)
        # exact rational arithmetic: K + 1 strictly increasing cuts from 0 to 1, widths summing to 1
        assert len(cuts) == leaf["bounds"]["theta_pieces"] + 1
        assert cuts[0] == 0 and cuts[-1] == 1
        assert all(lo < hi for lo, hi in zip(cuts, cuts[1:]))
        assert sum(hi - lo for lo, hi in zip(cuts, cuts[1:])) == 1
        # every cut is a dyadic rational, printed exactly (re-parsing it loses nothing)
        assert all(cut.denominator & (cut.denominator - 1) == 0 for cut in cuts)
    # a re-checker needs only the record: Σ w_k·g_k over the stored pieces bounds ∂L/∂b below 0
    from flint import arb, ctx

    from stumpcheck.numerics.generated import population_arb as gen
    leaf = data["leaves"][0]
    with ctx.workprec(cert.prec_bits):
        a = arb(leaf["a"][0]).union(arb(leaf["a"][1]))
        b = arb(leaf["b"][0]).union(arb(leaf["b"][1]))
        total = arb(0)
        cuts = _leaf_partition(leaf)
        for lo, hi in zip(cuts, cuts[1:]):
            t = arb(lo.numerator) / lo.denominator
            t = t.union(arb(hi.numerator) / hi.denominator)
            g = (gen.error_one_head(a, b, t) * gen.error_gradient_one_head(a, b, t)[1]).real
            total += (arb(hi.numerator) / hi.denominator - arb(lo.numerator) / lo.denominator) * g
        assert total < 0


def test_certificate_identifies_the_generated_arb_code_by_hash():
    cert = certify("error_abs_le_c_over_b", BOX, params={"c": "2"})
    source = (Path(__file__).resolve().parent.parent / "numerics" / "generated" / "population_arb.py").read_bytes()
    code = json.loads(cert.to_json())["generated_code"]
    assert code["sha256"] == hashlib.sha256(source).hexdigest()
    assert code["file"] == "numerics/generated/population_arb.py"
    assert code["stumpcheck"] == cert.versions["stumpcheck"]
    # the existing keys are still there
    assert {"versions", "leaves", "status", "prec_bits", "box"} <= set(json.loads(cert.to_json()))
