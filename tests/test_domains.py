"""stumpcheck.numerics.certified.proofs.domains: boxes in the model's coordinates with exact rational ends."""

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stumpcheck.numerics.certified.proofs.domains import Domain, exact_decimal, geometric_cuts, geometric_split
from stumpcheck.numerics.precision import InputError


def test_json_round_trip_is_exact():
    domain = Domain({"b": ("20", "10000"), "lam": ("-1", "1"), "theta": ("0.05", "0.95")}, "calibration")
    data = domain.to_json()
    assert data["variables"]["theta"] == ["0.05", "0.95"]
    assert Domain.from_json(data) == domain
    assert domain.volume() == Fraction(9980) * 2 * Fraction(9, 10)


def test_a_fixed_variable_has_no_width_in_the_volume():
    domain = Domain({"b": ("20", "21"), "lam": ("0", "0")}, "calibration")
    assert domain.volume() == 1 and domain.free() == ("b",)


@given(st.integers(1, 10**6), st.integers(1, 10**6), st.integers(0, 8))
def test_exact_decimal_is_exact(numerator, power2, power5):
    value = Fraction(numerator, 2 ** (power2 % 20) * 5**power5)
    assert Fraction(exact_decimal(value)) == value


def test_a_third_has_no_decimal_expansion():
    with pytest.raises(InputError):
        exact_decimal(Fraction(1, 3))


@given(st.floats(1.05, 4.0))
def test_geometric_split_tiles_the_range(ratio):
    domain = Domain({"b": ("20", "10000"), "lam": ("-1", "1")}, "calibration")
    pieces = geometric_split(domain, "b", ratio)
    assert pieces[0].variables["b"][0] == 20 and pieces[-1].variables["b"][1] == 10000
    assert all(p.variables["b"][1] == q.variables["b"][0] for p, q in zip(pieces, pieces[1:]))
    assert sum(p.volume() for p in pieces) == domain.volume()
    # each piece is about one ratio wide: each end rounded to 4 significant digits (relative 5e-4)
    for p in pieces[:-1]:
        lo, hi = p.variables["b"]
        assert hi / lo <= Fraction(ratio) * Fraction(10005, 10000) ** 2


def test_geometric_cuts_are_short_decimals():
    assert all(len(exact_decimal(c).replace(".", "").lstrip("0")) <= 4 for c in geometric_cuts(20, 10**4, 1.3))


@pytest.mark.parametrize("variables, coordinates", [
    ({"b": ("0", "1"), "a": ("0", "1")}, "abtheta"),           # b must be > 0
    ({"b": ("2", "1"), "a": ("0", "1")}, "abtheta"),           # lo > hi
    ({"b": ("1", "2"), "lam": ("0", "1")}, "abtheta"),         # lam is not an abtheta variable
    ({"b": ("1", "2"), "theta": ("0", "1")}, "calibration"),   # calibration needs lam
    ({"b": ("1", "2"), "v": ("0", "3"), "a": ("0", "1")}, "layer"),  # v > b: θ < 0
    ({"b": ("1", "2"), "v": ("0", "1")}, "layer"),            # layer needs a, lam or excess
    ({"b": ("1", "2"), "a": ("0", "nan")}, "abtheta"),
    ({"b": ("1", "2"), "a": ("0", "1")}, "polar"),
])
def test_bad_domains_are_input_errors(variables, coordinates):
    with pytest.raises(InputError):
        Domain(variables, coordinates)


def test_split_keeps_the_other_variables():
    domain = Domain({"b": ("1", "2"), "a": ("0", "1"), "theta": ("0", "1")})
    left, right = domain.split("theta", ["0.25"])
    assert left.variables["theta"] == (0, Fraction(1, 4)) and right.variables["theta"] == (Fraction(1, 4), 1)
    assert left.variables["b"] == domain.variables["b"]
    with pytest.raises(InputError):
        domain.split("theta", ["1"])
