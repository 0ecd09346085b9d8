"""The runs C2–C4 share in ``stumpcheck verify``: one float64 population flow and one certified tube.

* The flow (sampled figures, docs/claims.md C2): from (10, 10) to t = 10¹², float64, rtol 10⁻⁸
  (full mode: with its a-posteriori second solve at rtol/10); run once per verify, its plots in --out.
* The tube (certified figures): :data:`TUBE_T` per mode, from (10, 10), written to
  ``--out/certified_tube/`` (tube.csv, tube.json, flow_certificate.json, tube_width.png) with a progress
  bar, and read by :func:`stumpcheck.claims.population_certified.certified_readings`. A
  flow_certificate.json already in that folder for the same start and T is re-checked
  (``stumpcheck recheck``'s check, at its digits + 10) and reused if it passes. The tube stops after
  :data:`TUBE_TIME_LIMIT` seconds; an incomplete tube is read as certified up to where it stopped and
  says so. Under ``--quick`` no tube is run (:data:`TUBE_T` is None there): a tube to 10² costs about a
  minute of CPU with the present validation, far more than the few seconds --quick may add.
* The all-time part (:func:`shared_all_time`, :mod:`stumpcheck.claims.population_all_time`): under ``--quick``
  the committed flow certificate with the region and the tail embedded, re-checked whole in this run; under
  ``--full`` the beyond-T part of the tube's readings below (tube, region and tail proved or re-checked here).
* The region beyond T (``--full`` only; :mod:`stumpcheck.claims.population_beyond`): a region certificate
  embedded in the tube's flow_certificate.json (key "region"), else ``--out/certified_region/
  region_certificate.json``, is re-checked (``recheck_region``) and used if it passes; else the default
  region (b ∈ [30, 1000], :data:`REGION_WORKERS` processes, about 635 s of CPU) is proved into that file,
  with a progress bar. Its beyond-T part is *certified* only then, and only if z(T) is in it.

:func:`population_claim` is the C2/C3/C4 check of the registry: its verdict is the claim's certified limit
statement (:func:`stumpcheck.claims.population_all_time.all_time_verdict`), the sampled check of
:mod:`stumpcheck.claims.population` on the shared flow its control (``details["control"]``), and under
``--full`` the tube's readings over [0, T] in ``details["certified_tube"]``.
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from pathlib import Path

__all__ = ["clear_flow_cache", "population_claim", "shared_flow", "shared_tube_readings", "shared_all_time", "TUBE_T",
           "TUBE_TIME_LIMIT", "TUBE_REL_GOAL", "REGION_FOLDER"]

#: T of the certified tube per mode (None: no tube)
TUBE_T = {"quick": None, "full": 1e6}
#: seconds after which the tube stops (then incomplete, and read as such)
TUBE_TIME_LIMIT = 1800.0
#: the tube's defect goal (that of ``stumpcheck flow --certified``)
TUBE_REL_GOAL = 1e-4
TUBE_FOLDER = "certified_tube"
REGION_FOLDER = "certified_region"
#: processes per obligation when verify proves the region
REGION_WORKERS = 2

_FLOW_CACHE: dict = {}


def clear_flow_cache() -> None:
    """Forget the shared C2–C4 flow run and tube (``stumpcheck verify`` calls this at its start and end)."""
    _FLOW_CACHE.clear()


def shared_flow(quick: bool, out_dir):
    """One population flow run for C2–C4 (cached), its plots written to out_dir once."""
    key = ("flow", "quick" if quick else "full", str(out_dir))
    if key not in _FLOW_CACHE:
        import time

        from stumpcheck.numerics.flow.population_flow import run_population_flow
        from stumpcheck.progress import fraction_bar

        start = time.perf_counter()
        with fraction_bar("C2-C4 flow to t=1e12", quiet=None, leave=False) as progress:
            run = run_population_flow(10.0, 10.0, 1e12, rtol=1e-8, check=not quick, progress=progress)
        run.stats["seconds"] = time.perf_counter() - start
        plots = []
        if out_dir is not None:
            from stumpcheck.numerics.flow.report import write_flow_outputs
            from stumpcheck.numerics.provenance import provenance

            paths = write_flow_outputs(run, out_dir, provenance=provenance(seed=None, precision="float64"))
            plots = [p.name for p in paths if p.suffix == ".png"]
        _FLOW_CACHE[key] = (run, plots)
    return _FLOW_CACHE[key]


def _reusable(folder: Path, t_max: float) -> bool:
    """True if folder holds a flow certificate from (10, 10) to t_max that re-checks."""
    from stumpcheck.numerics.certified.tube.certificate import is_flow_certificate, recheck_flow_certificate

    path = folder / "flow_certificate.json"
    if not path.is_file():
        return False
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        return False
    from stumpcheck.numerics.precision import InputError

    try:  # anything unexpected in the file: not reusable (the tube is recomputed)
        if not is_flow_certificate(document) or float(document.get("t_max", "nan")) != t_max:
            return False
        if (float.fromhex(document["initial"]["a0"]), float.fromhex(document["initial"]["b0"])) != (10.0, 10.0):
            return False
        print(f"certified tube: re-checking the flow certificate in {folder.name}/ ...", file=sys.stderr)
        return recheck_flow_certificate(document, int(document.get("dps", 20)) + 10, workers=2).passed
    except (InputError, KeyError, TypeError, ValueError, ArithmeticError):
        return False


def _run_tube(t_max: float, out_dir) -> tuple[object, str]:
    """(the tube or its folder, a note): a re-checked certificate from out_dir, else a new tube written there."""
    from stumpcheck.numerics.certified.tube.build import certified_tube
    from stumpcheck.numerics.certified.tube.report import write_tube_outputs
    from stumpcheck.numerics.provenance import provenance
    from stumpcheck.progress import fraction_bar

    folder = None if out_dir is None else Path(out_dir) / TUBE_FOLDER
    if folder is not None and _reusable(folder, t_max):
        return folder, f"reused the re-checked certificate in {TUBE_FOLDER}/"
    import inspect

    # resumable and on both cores where the tube supports it (a checkpoint file in the folder, workers)
    options = inspect.signature(certified_tube).parameters
    extra = {"workers": 2} if "workers" in options else {}
    if folder is not None and "checkpoint" in options:
        folder.mkdir(parents=True, exist_ok=True)
        extra["checkpoint"] = folder / "tube_checkpoint.jsonl"
    with fraction_bar(f"C2-C4 certified tube to t={t_max:g}", quiet=None, leave=False) as progress:
        tube = certified_tube(10.0, 10.0, t_max, rel_goal=TUBE_REL_GOAL, time_limit=TUBE_TIME_LIMIT,
                              progress=progress, **extra)
    note = f"tube from (10, 10) to T = {t_max:g}: {len(tube.intervals)} intervals, {tube.seconds:.0f} s"
    if not tube.complete:
        note += f"; stopped at t = {tube.t_reached:.6g}: {tube.stop_reason}"
    if folder is not None and tube.intervals:
        write_tube_outputs(tube, folder, provenance=provenance(seed=None, precision=f"Arb, {tube.dps} digits"))
        note += f"; files in {TUBE_FOLDER}/"
    return tube, note


@contextlib.contextmanager
def _obligations_bar(desc: str):
    """Yield ``progress(obligation name)`` for the region's four obligations, drawn as one progress bar."""
    from stumpcheck.numerics.certified.region.invariant_region import OBLIGATIONS
    from stumpcheck.progress import fraction_bar

    done = []
    with fraction_bar(desc, quiet=None, leave=False) as bar:
        def progress(name):
            bar(len(done) / len(OBLIGATIONS))
            done.append(name)

        yield progress


def _recheck(document: dict, where: str) -> bool:
    """True if the region certificate ``document`` re-checks (a progress bar over its four obligations); a
    tail certificate with its joined finite region is re-checked whole."""
    from stumpcheck.numerics.certified.region.any_certificate import recheck_any
    from stumpcheck.numerics.precision import InputError

    with _obligations_bar(f"C2-C4 re-checking the region certificate ({where})") as progress:
        try:
            ok, _ = recheck_any(document, progress=progress)
        except InputError:
            return False
    return ok


def _with_tail(document: dict, folder) -> tuple[dict, str]:
    """The tail b >= 1000 proved now and joined to the finite region ``document`` (a few seconds), or
    ``document`` itself if it is a tail certificate already or the tail does not prove; and a note."""
    from stumpcheck.numerics.certified.certificates.lemma_certificate import write_certificate
    from stumpcheck.numerics.certified.region.tail import DEFAULT_TAIL
    from stumpcheck.numerics.certified.region.tail_certificate import is_tail_certificate, tail_certificate
    from stumpcheck.numerics.precision import InputError

    if is_tail_certificate(document) or document.get("status") != "proved":
        return document, ""
    try:
        joined = tail_certificate(DEFAULT_TAIL, finite=document)
    except InputError as exc:
        return document, f"; no tail: {exc}"
    if joined.get("status") != "proved":
        return document, "; the tail b >= 1000 was not proved"
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
        write_certificate(joined, folder / "region_tail_certificate.json", one_per_line=())
    return joined, "; the tail b >= 1000 proved in this run and joined"


def _run_region(out_dir, tube_source) -> tuple[dict | None, str | None, str]:
    """(a region certificate, how it was verified in this run or None, a note): the tube's embedded region or
    ``--out/certified_region/region_certificate.json`` if it re-checks, else the default region proved there."""
    from stumpcheck.numerics.certified.region.invariant_region import DEFAULT_REGION
    from stumpcheck.numerics.certified.region.certificate import region_certificate
    from stumpcheck.numerics.certified.certificates.lemma_certificate import write_certificate
    from stumpcheck.numerics.precision import InputError
    from stumpcheck.claims.population_beyond import region_document

    candidates = []
    tube_folder = Path(tube_source) if isinstance(tube_source, (str, Path)) else (
        None if out_dir is None else Path(out_dir) / TUBE_FOLDER)
    if tube_folder is not None and (tube_folder / "flow_certificate.json").is_file():
        candidates.append((tube_folder / "flow_certificate.json", "embedded in the flow certificate"))
    folder = None if out_dir is None else Path(out_dir) / REGION_FOLDER
    if folder is not None and (folder / "region_tail_certificate.json").is_file():
        candidates.append((folder / "region_tail_certificate.json", f"{REGION_FOLDER}/region_tail_certificate.json"))
    if folder is not None and (folder / "region_certificate.json").is_file():
        candidates.append((folder / "region_certificate.json", f"{REGION_FOLDER}/region_certificate.json"))
    for path, where in candidates:
        try:
            document = region_document(path)
        except InputError:
            continue
        if _recheck(document, where):
            document, tail_note = _with_tail(document, folder)
            return document, "re-checked in this run", f"region certificate {where}, re-checked{tail_note}"
    with _obligations_bar("C2-C4 proving the region beyond T (b in [30, 1000])") as progress:
        document = region_certificate(DEFAULT_REGION, workers=REGION_WORKERS, progress=progress)
    note = f"region proved in this run ({document['status']}, {document['seconds']:.0f} s)"
    if folder is not None:
        write_certificate(document, folder / "region_certificate.json", one_per_line=())
        note += f", in {REGION_FOLDER}/"
    document, tail_note = _with_tail(document, folder)
    return document, ("proved in this run" if document["status"] == "proved" else None), note + tail_note


def shared_tube_readings(quick: bool, out_dir) -> dict | None:
    """The certified readings of C2–C4 for this mode (cached; None under --quick), or {"error": ...}."""
    t_max = TUBE_T["quick" if quick else "full"]
    if t_max is None:
        return None
    key = ("tube", t_max, str(out_dir))
    if key not in _FLOW_CACHE:
        import time

        from stumpcheck.numerics.precision import InputError
        from stumpcheck.claims.population_certified import certified_readings

        start = time.perf_counter()
        try:
            tube, note = _run_tube(t_max, out_dir)
            try:
                if not getattr(tube, "complete", True):  # no z(T) to enter the region with: spare its proof
                    raise InputError("the tube stopped before T")
                region, checked, region_note = _run_region(out_dir, tube)
            except (InputError, ArithmeticError) as exc:  # the tube's readings stand without the region
                region, checked, region_note = None, None, f"no region beyond T: {exc}"
            note += f"; {region_note}"
            readings = certified_readings(tube, sup_rel_tol=1e-5, sup_evaluations=6000, window_sup_evaluations=300,
                                          region=region, region_checked=checked)
        except (InputError, ArithmeticError) as exc:
            readings = {"error": f"no certified reading: {exc}"}
            note = readings["error"]
        readings["note"] = note
        readings["seconds_with_tube"] = round(time.perf_counter() - start, 1)
        _FLOW_CACHE[key] = readings
    return _FLOW_CACHE[key]


def shared_all_time(quick: bool, out_dir) -> tuple[dict | None, str]:
    """(the beyond-T part for every t >= T, or None; a note) for this mode (cached): the committed certificate
    re-checked (--quick) or the tube's readings (--full)."""
    key = ("all_time", "quick" if quick else "full", str(out_dir))
    if key not in _FLOW_CACHE:
        from stumpcheck.claims.population_all_time import all_time_part, recheck_committed
        from stumpcheck.numerics.precision import InputError

        started = time.perf_counter()
        if quick:
            print("C2-C4: re-checking the committed certificate (tube to 1e6, region and tail) ...", file=sys.stderr)
            document, checked, note = recheck_committed(workers=2)
            part = None
            if document is not None:
                try:
                    part = all_time_part(document, checked)
                except (InputError, ArithmeticError, KeyError) as exc:
                    note = f"{note}; its all-time part cannot be read: {exc}"
        else:
            readings = shared_tube_readings(quick, out_dir) or {}
            part = readings.get("beyond_t")
            note = readings.get("note") or readings.get("error") or "no certified tube"
        _FLOW_CACHE[key] = (part, f"{note} ({time.perf_counter() - started:.1f} s)")
    return _FLOW_CACHE[key]


def population_claim(which: str):
    """The registry's check of C2, C3 or C4: the certified limit statement decides, the sampled check is the
    control, and --full adds the tube's readings over [0, T]."""
    plot_for = {"C2": ("calibration_residual.png",), "C3": ("scale.png", "normalised_loss.png"),
                "C4": ("interior_error.png",)}[which]

    def check(*, quick: bool = True, seed: int = 0, out_dir=None):
        from stumpcheck.claims import population as claims
        from stumpcheck.claims.population_all_time import STATEMENTS, all_time_verdict
        from stumpcheck.claims.population_certified import claim_markdown, claim_reading
        from stumpcheck.claims.result import ClaimResult

        started = time.perf_counter()
        run, plots = shared_flow(quick, out_dir)
        control = getattr(claims, f"check_{which.lower()}")(run)
        part, note = shared_all_time(quick, out_dir)
        verdict = all_time_verdict(which, part, note)
        details = {"plots": [p for p in plots if p in plot_for], "seed": None,
                   "precision": "Arb balls (the certificates); the control in float64",
                   "certified_statement": verdict["figure"], "all_time_note": note,
                   "evidence_reached": "certified" if verdict["passed"] else None,
                   "control": {"status": control.status, "figure": control.figure, "tolerance": control.tolerance,
                               "evidence": control.evidence, "details": control.details,
                               "flow": {"a0": 10.0, "b0": 10.0, "t_max": 1e12, "rtol": 1e-8,
                                        "a_posteriori_check": not quick}},
                   "still_statistical": "the fitted exponents of the float64 flow over [1e6, 1e12] (the control): "
                                        "a fit at finite t, which the certified limits do not need",
                   "all_time": part}
        figure = f"{verdict['figure']}; control (sampled, {control.status}): {control.figure}"
        readings = shared_tube_readings(quick, out_dir)
        if readings is not None and "error" not in readings:
            text, tube_details = claim_reading(readings, which)
            tube_details["note"] = readings["note"]
            tube_details["reading"] = text.lstrip("; ")
            details["certified_tube"] = tube_details
            details["explanation"] = claim_markdown(tube_details)
        elif readings is not None:
            details["certified_tube"] = readings
        tables = details.get("explanation")  # --full: the tube's readings, with the beyond-T tables
        if tables is None and part is not None:
            from stumpcheck.claims.population_beyond import beyond_markdown

            tables = "\n".join(beyond_markdown(part))
        details["explanation"] = _all_time_markdown(which, verdict, note) + "\n\n" + (tables or "")
        return ClaimResult(id=which, statement=STATEMENTS[which], figure=figure, tolerance=verdict["tolerance"],
                           status="PASS" if verdict["passed"] else "FAIL",
                           evidence="certified" if part is not None and verdict["reason"] is None else "sampled",
                           seconds=time.perf_counter() - started,  # the shared flow and re-check in the first row
                           details=details)

    check.__name__ = check.__qualname__ = f"check_{which.lower()}_shared_flow"
    return check


def _all_time_markdown(which: str, verdict: dict, note: str) -> str:
    """The verdict's part of the claim's section in report.md."""
    lines = [f"**Verdict (certified for every t ≥ T).** {verdict['figure']}.", "",
             f"Certificates: {note}. The state at T is checked by Arb to lie in the region; the tail's rest "
             "of the loss is enclosed, not assumed (docs/tail.md §4).",
             "", "**Control (sampled).** The fitted exponents of the float64 flow over [10⁶, 10¹²]: printed after "
             "'control' in the figure; they are fits at finite t, not the verdict."]
    if verdict["reason"]:
        lines += ["", f"Not certified: {verdict['reason']}."]
    return "\n".join(lines)
