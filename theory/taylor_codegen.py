"""Printed ball functions of Taylor forms (:mod:`stumpcheck.theory.margin_taylor`), and the file that stores them.

:func:`taylor_source` prints, through :mod:`stumpcheck.theory.codegen_margins`, the Python source of a Taylor
form of order n along one variable:

* ``outer(*variables, *kernels)``: the margin's outer expression;
* ``kernels_j(*variables, *Q^{(0)}, …, *Q^{(j)})``, j ≤ n: the j-th derivatives of the kernels;
* ``integrands_m(*variables, theta)``, m ≤ n: the integrands ∂_x^m q of the θ-integrals Q^{(m)}.

Deriving and printing takes seconds (SymPy), so the forms of the built-in lemmas are stored in
``numerics/generated/taylor_forms_arb.json`` (generated, never edited by hand), keyed by
:func:`form_key` of everything they depend on; ``python -m stumpcheck.theory.taylor_codegen FILE`` derives
every form the file holds again and rewrites it (``--check``: exit 1 if it would change).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import sympy as sp

from stumpcheck.theory import margin_quantities as mq
from stumpcheck.theory.codegen_margins import margin_function_source
from stumpcheck.theory.margin_taylor import taylor_form

__all__ = ["form_key", "taylor_source", "stored_form_document", "STORED_FORMS_FORMAT"]

STORED_FORMS_FORMAT = "stumpcheck-taylor-forms/1"


def form_key(srepr: str, coordinates: str, variables, free: str, order: int, estimator: str) -> str:
    """The sha256 of the inputs of a Taylor form (the margin's srepr and its options)."""
    text = json.dumps([srepr, coordinates, list(variables), free, int(order), estimator], ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def _parse(srepr: str) -> sp.Expr:
    namespace: dict = {}
    exec("from sympy import *", namespace)  # noqa: S102
    namespace.update({f.__name__: f for f in mq.RELATIONS})
    return eval(srepr, namespace)  # noqa: S307 - the srepr of a margin (trusted text)


def taylor_source(srepr: str, coordinates: str, variables, free: str, order: int, estimator: str) -> dict:
    """{"order", "integral_names" (the Q^{(m)} names per order m), "source"} of the Taylor form."""
    form = taylor_form(_parse(srepr), coordinates, tuple(variables), free, order, estimator)
    names = [mq.symbol_namespace()[n] for n in variables]
    source = margin_function_source("outer", (*names, *form.kernel_symbols), (form.outer,), "outer")
    for j, level in enumerate(form.kernel_derivatives):
        arguments = [s for m in range(j + 1) for s in form.integrands[m]]
        source += margin_function_source(f"kernels_{j}", (*names, *arguments), tuple(level), f"K^({j})")
    theta = mq.symbol_namespace()["theta"]
    for m, level in enumerate(form.integrands):
        source += margin_function_source(f"integrands_{m}", (*names, theta), tuple(level.values()), f"q^({m})")
    return {"order": int(order), "integral_names": [[str(s) for s in level] for level in form.integrands],
            "source": source}


def stored_form_document(entries) -> dict:
    """The stored-forms JSON for ``entries``: (srepr, coordinates, variables, free, order, estimator) each."""
    forms = {}
    for srepr, coordinates, variables, free, order, estimator in entries:
        inputs = {"srepr": srepr, "coordinates": coordinates, "variables": list(variables), "free": free,
                  "order": int(order), "estimator": estimator}
        forms[form_key(srepr, coordinates, variables, free, order, estimator)] = {
            "inputs": inputs, **taylor_source(srepr, coordinates, variables, free, order, estimator)}
    return {"format": STORED_FORMS_FORMAT, "generated_by": "python -m stumpcheck.theory.taylor_codegen", "sympy": sp.__version__,
            "forms": dict(sorted(forms.items()))}


def _entries(document: dict) -> list:
    return [(f["inputs"]["srepr"], f["inputs"]["coordinates"], tuple(f["inputs"]["variables"]), f["inputs"]["free"],
             f["inputs"]["order"], f["inputs"]["estimator"]) for f in document["forms"].values()]


def main(argv=None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    check = "--check" in args
    paths = [a for a in args if a != "--check"]
    if len(paths) != 1:
        print("usage: python -m stumpcheck.theory.taylor_codegen FILE.json [--check]", file=sys.stderr)
        return 2
    path = Path(paths[0])
    document = stored_form_document(_entries(json.loads(path.read_text(encoding="utf-8"))))
    text = json.dumps(document, indent=1, ensure_ascii=False) + "\n"
    if check:
        return 0 if path.read_text(encoding="utf-8") == text else 1
    path.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
