"""The certificate the box prover writes: its verdict, its leaf boxes and what it ran.

A :class:`Certificate` holds the predicate, its parameters, the requested box, the status
(``"proved"``, ``"failed"`` or ``"undecided"``), the proved leaf boxes with their bounds, the
failure or undecided box, the work done, and what identifies the computation: the versions of
Python, stumpcheck, python-flint and mpmath, and ``generated_code``, the sha256 of
numerics/generated/population_arb.py (the Arb module generated from the derivation). It is
written and read back as JSON (:meth:`Certificate.to_json`, :meth:`Certificate.from_json`).
"""

from __future__ import annotations

import hashlib
import json
import platform
from dataclasses import asdict, dataclass, field
from importlib import metadata

from stumpcheck.numerics.generated import population_arb as gen_arb

__all__ = ["Certificate", "STATUSES", "generated_code_identity"]

STATUSES = ("proved", "failed", "undecided")
#: Default relative width below which a side of a box is not split any more.
DEFAULT_MIN_WIDTH = 1e-12


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
