"""Shared pytest configuration.

Hypothesis profiles
-------------------
Two profiles are registered:

* ``dev`` -- 50 examples per property, no deadline (default for local runs).
* ``ci``  -- 30 examples, no deadline, derandomized (reproducible across runs)
  and with the ``too_slow`` health check suppressed, since arbitrary-precision
  numerics can be slow on shared CI machines.

``ci`` is loaded when the ``CI`` environment variable is set to any non-empty
value, otherwise ``dev``.  Setting ``HYPOTHESIS_PROFILE`` overrides both.

mpmath precision isolation
--------------------------
``mpmath.mp`` is a global context, so a test that raises the working precision
would silently affect every test that runs after it.  The autouse fixture
``_isolate_mpmath_precision`` saves ``mpmath.mp.prec`` before each test, sets
``mpmath.mp.dps = 15`` (the mpmath default) so every test starts from a known
state, and restores the saved precision afterwards, so no test leaks precision.
"""

import os

import mpmath
import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("dev", max_examples=50, deadline=None)
settings.register_profile(
    "ci",
    max_examples=30,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)

_default_profile = "ci" if os.environ.get("CI") else "dev"
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or _default_profile)


@pytest.fixture(autouse=True)
def _isolate_mpmath_precision():
    """Start each test at mp.dps = 15 and restore the previous mp.prec after."""
    saved_prec = mpmath.mp.prec
    mpmath.mp.dps = 15
    try:
        yield
    finally:
        mpmath.mp.prec = saved_prec
