"""Re-export of :mod:`stumpcheck.strategies` (the public strategies module), so
tests can keep writing ``from tests.strategies import parameters``."""

from stumpcheck.strategies import *  # noqa: F401,F403
from stumpcheck.strategies import __all__  # noqa: F401
