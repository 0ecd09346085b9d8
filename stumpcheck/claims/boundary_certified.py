"""The certified population parts of C7 and C8 (docs/claims.md C7, C8), read beside the sampled tables.

* :func:`c7_population_certified`: the one head's proof (:func:`stumpcheck.numerics.certified.boundary.one_head.prove_c7_population`)
  for every b ≥ b₀ on the band |b·(a − calibration_a(b))| ≤ ½, held to C7's population tolerance: the sup
  over θ ∈ [0, 1] stays ≥ 1 − K/b₀, which is ≥ C7_FLOOR and ≥ C7_KEEP × any sup (|e| ≤ 1 always), while the
  interior sup lies between F/b and C/b (it vanishes at rate b⁻¹, faster than the tolerance's b^{−½});
* :func:`c8_population_certified`: the pooled bounds F/b ≤ sup |e| ≤ K/b for every b ≥ b₀ and a ≥ b (it
  vanishes at rate b⁻¹: any fitted exponent over b ≥ b₀ is −1 up to log(K/F)/log(range)) and the averaged ends e(0) = ½, e(1) = −½ (it
  does not vanish).

Each also checks that the sampled float64 table agrees with what was proved at the table's scales (a
disagreement would be a defect of one of them: the row FAILs and says which). Evidence: *certified* for these
statements; the fresh-context parts of C7 and C8 stay *sampled* (Monte Carlo), and the rows say so.
"""

from __future__ import annotations

from fractions import Fraction

__all__ = ["c7_population_certified", "c8_population_certified", "EVIDENCE_PARTS", "FLOAT_SLACK", "write_certificate"]

#: slack for comparing float64 table values with exact bounds (the table's e carries float64 rounding)
FLOAT_SLACK = 1e-9
#: what each part of C7 and C8 rests on
EVIDENCE_PARTS = {"population (every b >= b0)": "certified", "fresh contexts": "sampled (Monte Carlo, 95% CIs)"}


def write_certificate(claim: str, proof: dict, out_dir) -> str | None:
    """The proof's certificate (format ``stumpcheck-boundary-certificate/1``) written to
    ``out_dir/<claim>_population_certificate.json`` (re-checked by ``stumpcheck recheck``); its name, or None
    without ``out_dir`` or a proof."""
    if out_dir is None or not proof.get("proved"):
        return None
    import json
    from pathlib import Path

    from stumpcheck.numerics.certified.boundary.certificate import boundary_certificate

    name = f"{claim.lower()}_population_certificate.json"
    path = Path(out_dir)
    path.mkdir(parents=True, exist_ok=True)
    (path / name).write_text(json.dumps(boundary_certificate(claim, proof), indent=1, ensure_ascii=False) + "\n",
                             encoding="utf-8")
    return name


def c7_population_certified(pop: dict, *, keep: float, floor: float) -> dict:
    """C7's population tolerance decided by the proof, and its agreement with the sampled table ``pop``."""
    from stumpcheck.numerics.certified.boundary.one_head import prove_c7_population, witness_delta

    proof = prove_c7_population()
    b_min = Fraction(proof["b_min"])
    sup_floor = 1 - Fraction(proof["K"]) / b_min
    ok = bool(proof["proved"] and sup_floor >= floor and sup_floor >= keep)
    disagreements = []
    for b, sup, interior in zip(pop["b"], pop["sup_error"], pop["sup_interior_error"]):
        if b < b_min:
            continue
        if sup < 1 - float(witness_delta(b, proof["leaves"])) - FLOAT_SLACK:
            disagreements.append(f"b={b:g}: sampled sup {sup:.6g} below the proved 1 − δ(b)")
        if not float(proof["interior_floor"]) - FLOAT_SLACK <= interior * b <= float(proof["interior_constant"]) + FLOAT_SLACK:
            disagreements.append(f"b={b:g}: sampled interior sup·b {interior * b:.6g} outside the proved "
                                 f"[{proof['interior_floor']}, {proof['interior_constant']}]")
    text = (f"certified for every b >= {proof['b_min']} on |b·(a − calibration_a(b))| <= {proof['c']}: sup over "
            f"θ of |e| >= 1 − {float(Fraction(proof['K'])):.6g}/b (witness θ = 1 − b⁻⁴; >= "
            f"{proof['sup_lower_bound_at_b_min']} at b = {proof['b_min']}) and {proof['interior_floor']}/b <= "
            f"interior sup <= {proof['interior_constant']}/b")
    return {"ok": ok and not disagreements, "proof": proof, "sup_floor": float(sup_floor),
            "disagreements": disagreements, "text": text}


def c8_population_certified(pop: dict, estimators) -> dict:
    """C8's population tolerance per estimator decided by the proof (pooled: meets it; averaged: does not), and
    the agreement with the sampled table ``pop``. Estimators the proof does not cover get ``None``."""
    from stumpcheck.numerics.certified.boundary.symmetrized import averaged_end_balls, prove_c8_population

    proof = prove_c8_population()
    b_min = Fraction(proof["b_min"])
    ends = []
    k, floor = float(proof["pooled"]["K"]), float(proof["pooled"]["floor"])
    verdicts, disagreements = {}, []
    for est in estimators:
        rows = pop.get(est)
        if est == "pooled":
            verdicts[est] = bool(proof["proved"])
            for b, a, sup in zip(rows["b"], rows["a"], rows["sup_error"]):
                if b >= b_min and a >= b and not floor - FLOAT_SLACK <= sup * b <= k + FLOAT_SLACK:
                    disagreements.append(f"pooled, b={b:g}: sampled sup·b {sup * b:.6g} outside the proved "
                                         f"[{floor:g}, {k:g}]")
        elif est == "averaged":
            verdicts[est] = False if proof["proved"] else None
            for b, a, sup in zip(rows["b"], rows["a"], rows["sup_error"]):
                if sup < 0.5 - FLOAT_SLACK:
                    disagreements.append(f"averaged, b={b:g}: sampled sup {sup:.6g} below the proved 1/2")
                balls = averaged_end_balls(a, b)   # the generated Arb e at the ends holds the exact ±1/2
                ends.append({"b": b, **{f"e({t})": str(balls[t]) for t in ("0", "1")}})   # [mid +/- rad], outward
                if not (0.5 in balls["0"] and -0.5 in balls["1"]):
                    disagreements.append(f"averaged, b={b:g}: the Arb enclosure of the generated e at an end "
                                         "misses ±1/2")
        else:
            verdicts[est] = None
    text = (f"certified: {proof['pooled']['floor']}/b <= pooled sup over θ of |e| <= {proof['pooled']['K']}/b for "
            f"every b >= {proof['b_min']} and a >= b (it vanishes as b⁻¹); averaged e(0) = 1/2, e(1) = −1/2 for "
            "every a, b (it does not vanish)")
    return {"proof": proof, "verdicts": verdicts, "disagreements": disagreements, "text": text,
            "averaged_end_enclosures": ends}
