"""Certified work on a scheduler (stumpcheck.numerics.scheduling): the same proofs and certificates in this
process, in local processes and on a Dask LocalCluster; results in job order; checkpoints resume; an
unreachable scheduler, or no Dask, is one line and exit 2 before any work."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

#: the fields of a certificate that measure the run, not the proof: every ``"seconds"`` (wall-clock time of
#: the run or of one obligation) and the ``"digest"``, a hash over all fields, these included. Two runs in
#: this same process differ in them too; they are masked, and the masks must match exactly these fields.
_TIMING = re.compile(r'"seconds": [0-9.]+(e[-+]?[0-9]+)?')
_DIGEST = re.compile(r'"digest": "[0-9a-f]{64}"')


def _masked(text: str) -> str:
    return _DIGEST.sub('"digest": "…"', _TIMING.sub('"seconds": …', text))


def _run(*args, timeout=600):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "stumpcheck", *args], capture_output=True, text=True, env=env,
                          timeout=timeout, cwd=REPO)


@pytest.fixture(scope="module")
def cluster_address():
    """A Dask LocalCluster of two single-threaded worker processes, shared by the tests of this module."""
    distributed = pytest.importorskip("dask.distributed")
    import logging

    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                       silence_logs=logging.ERROR)
    try:
        yield cluster.scheduler_address
    finally:
        cluster.close()


# --- the scheduler itself


def _slow_square(x: int, seconds: float) -> int:
    time.sleep(seconds)
    return x * x


def _chosen_inside_a_task() -> bool:
    from stumpcheck.numerics.scheduling import chosen

    return chosen() is None


def test_local_processes_give_results_in_job_order_whatever_order_they_finish_in():
    from stumpcheck.numerics.scheduling import local

    jobs = [(k, 0.3 if k % 2 == 0 else 0.0) for k in range(6)]  # the even jobs finish after the odd ones
    with local(2) as scheduler:
        assert scheduler.workers == 2
        assert scheduler.map(_slow_square, jobs) == [k * k for k in range(6)]


def test_in_process_runs_a_job_only_when_its_result_is_read():
    from stumpcheck.numerics.scheduling import local

    ran = []

    def job(k):
        ran.append(k)
        return k

    results = local(1).imap(job, ((k,) for k in range(5)))
    assert next(results) == 0 and next(results) == 1
    assert ran == [0, 1]
    results.close()


def test_a_command_s_choice_holds_outside_tasks_and_is_cleared_inside_them():
    from stumpcheck.numerics.scheduling import chosen, for_workers, local, using

    assert chosen() is None
    with local(1) as scheduler, using(scheduler):
        with for_workers(2) as inner:
            assert inner is scheduler  # the command's choice, not the prover's own default
        assert scheduler.map(_chosen_inside_a_task, [()]) == [True]
    assert chosen() is None


def _nested_prover(k):
    """A task that runs a prover of its own in this process (its jobs again through run_task)."""
    from stumpcheck.numerics.scheduling import chosen, for_workers

    with for_workers(1) as inner:
        inside = inner.map(_square, [(k,), (k + 1,)])
    return inside, chosen() is None


def _square(k):
    return k * k


def test_a_task_may_run_a_prover_in_its_own_process():
    """The task lock is re-entrant: a task whose prover runs its jobs in-process does not wait for itself
    (it did, with a plain lock, inside a Dask worker), and the task stays a task after the inner jobs."""
    import threading

    from stumpcheck.numerics.scheduling import run_task

    result = []
    worker = threading.Thread(target=lambda: result.append(run_task(_nested_prover, (3,))), daemon=True)
    worker.start()
    worker.join(timeout=30)
    assert not worker.is_alive(), "a task running an in-process prover deadlocked"
    assert result == [([9, 16], True)]


def test_dask_scheduler_gives_results_in_job_order(cluster_address):
    from stumpcheck.numerics.scheduling import connect

    with connect(cluster_address) as scheduler:
        assert scheduler.kind == "dask" and scheduler.workers == 2
        jobs = [(k, 0.3 if k % 2 == 0 else 0.0) for k in range(6)]
        assert scheduler.map(_slow_square, jobs) == [k * k for k in range(6)]


# --- the margin prover: the same proof wherever its boxes are enclosed


def _proofs(workers_or_scheduler):
    from stumpcheck.numerics.certified.proofs.domains import Domain
    from stumpcheck.numerics.certified.proofs.margin_proof import prove
    from stumpcheck.numerics.certified.proofs.margins import Margin
    from stumpcheck.numerics.scheduling import Scheduler, using

    domain = Domain({"b": ("20", "22"), "lam": ("-1", "1"), "theta": ("0.2", "0.8")}, coordinates="calibration")
    cases = [("-b**2*e_b - 1/2", 20_000), ("-b**2*e_b - 97/100", 20_000), ("-b**2*e_b - 1/2", 50)]
    out = []
    for text, max_boxes in cases:
        margin = Margin.from_sympy(text, coordinates="calibration")
        if isinstance(workers_or_scheduler, Scheduler):
            with using(workers_or_scheduler):
                proof = prove(margin, domain, max_boxes=max_boxes)
        else:
            proof = prove(margin, domain, max_boxes=max_boxes, workers=workers_or_scheduler)
        out.append((proof.status, proof.leaves, proof.failure, proof.undecided, proof.boxes,
                    proof.max_depth_reached, proof.notes, proof.undecided_fraction))
    return out


def test_a_proof_is_the_same_in_this_process_in_local_processes_and_on_dask(cluster_address):
    """Proved (bisected to depth 10), failed (stopped at the first negative box, the rest pending) and stopped at
    max_boxes: leaf for leaf, in the same order, on every scheduler."""
    from stumpcheck.numerics.scheduling import connect

    here = _proofs(1)
    assert [case[0] for case in here] == ["proved", "failed", "undecided"]
    assert here[0][5] >= 5 and here[1][2] is not None and here[2][4] == 50
    assert _proofs(2) == here
    with connect(cluster_address) as scheduler:
        assert _proofs(scheduler) == here


# --- the command line: region, flow --certified and recheck on a LocalCluster


def test_region_on_a_local_dask_cluster_writes_the_local_certificate_byte_for_byte(tmp_path):
    pytest.importorskip("dask.distributed")
    here = _run("region", "--b-max", "33", "--out", str(tmp_path / "here"))
    assert here.returncode == 0, here.stderr
    dask = _run("region", "--b-max", "33", "--scheduler", "local", "--workers", "2", "--out", str(tmp_path / "dask"))
    assert dask.returncode == 0, dask.stderr
    assert "local Dask cluster" in dask.stderr
    a = (tmp_path / "here" / "region_certificate.json").read_text(encoding="utf-8")
    b = (tmp_path / "dask" / "region_certificate.json").read_text(encoding="utf-8")
    assert len(_TIMING.findall(a)) == 1 + 4 + 4 and len(_DIGEST.findall(a)) == 1 + 4  # the document, obligations
    assert _masked(a) == _masked(b)
    assert json.loads(a)["status"] == "proved"


def test_an_interrupted_tube_resumes_on_dask_from_its_checkpoint_and_writes_the_local_certificate(
        tmp_path, cluster_address):
    here = _run("flow", "--certified", "--t-max", "3", "--workers", "1", "--quiet", "--out", str(tmp_path / "here"))
    assert here.returncode == 0, here.stderr
    checkpoint = (tmp_path / "here" / "tube_checkpoint.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(checkpoint) >= 2
    # an interruption after the first interval: only its line in the checkpoint
    (tmp_path / "dask").mkdir()
    (tmp_path / "dask" / "tube_checkpoint.jsonl").write_text(checkpoint[0] + "\n", encoding="utf-8")
    dask = _run("flow", "--certified", "--t-max", "3", "--scheduler", cluster_address, "--quiet",
                "--out", str(tmp_path / "dask"))
    assert dask.returncode == 0, dask.stderr
    resumed = (tmp_path / "dask" / "tube_checkpoint.jsonl").read_text(encoding="utf-8").splitlines()
    assert resumed[0] == checkpoint[0] and len(resumed) == len(checkpoint)  # the first interval was not redone
    a = (tmp_path / "here" / "flow_certificate.json").read_text(encoding="utf-8")
    b = (tmp_path / "dask" / "flow_certificate.json").read_text(encoding="utf-8")
    assert _masked(a) == _masked(b)
    recheck = _run("recheck", str(tmp_path / "dask" / "flow_certificate.json"), "--scheduler", cluster_address)
    assert recheck.returncode == 0 and recheck.stdout.startswith("PASS"), recheck.stdout + recheck.stderr


# --- bad input: one line, exit 2, before any work


def _closed_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize("command", [["region", "--b-max", "1000"], ["flow", "--certified", "--t-max", "1e6"],
                                     ["verify", "--full", "--only", "C1"]])
def test_an_unreachable_scheduler_is_one_line_and_exit_2_before_any_work(command, tmp_path, monkeypatch, capsys):
    pytest.importorskip("dask.distributed")
    from stumpcheck.cli.commands import main
    from stumpcheck.numerics import scheduling

    monkeypatch.setattr(scheduling, "CONNECT_SECONDS", 2)
    address = f"tcp://127.0.0.1:{_closed_port()}"
    started = time.perf_counter()
    status = main([*command, "--scheduler", address, "--out", str(tmp_path / "out")])
    error = capsys.readouterr().err
    assert status == 2
    assert error.strip().count("\n") == 0 and "no Dask scheduler answered" in error and address in error
    assert time.perf_counter() - started < 120  # each of these runs for many minutes: none started
    assert not (tmp_path / "out").exists()


def test_workers_with_a_remote_scheduler_is_refused(tmp_path):
    result = _run("region", "--b-max", "33", "--scheduler", "tcp://127.0.0.1:1", "--workers", "2",
                  "--out", str(tmp_path / "out"))
    assert result.returncode == 2 and "--workers" in result.stderr and result.stderr.strip().count("\n") == 0


def test_scheduler_without_dask_names_the_dask_extra(monkeypatch):
    from stumpcheck.numerics.precision import InputError
    from stumpcheck.numerics.scheduling import connect

    for name in ("dask", "dask.distributed", "distributed"):
        monkeypatch.setitem(sys.modules, name, None)  # import fails as if not installed
    with pytest.raises(InputError, match=r"stumpcheck\[dask\]") as caught:
        connect("tcp://127.0.0.1:8786")
    assert "\n" not in str(caught.value)


def test_a_lemma_recheck_finds_the_same_first_fault_on_every_scheduler(cluster_address):
    """The leaves are re-enclosed as tasks and read in order: the first fault is the same leaf, same words."""
    from stumpcheck.numerics.certified.certificates.lemma_certificate import certificate, digest
    from stumpcheck.numerics.certified.certificates.lemma_recheck import recheck
    from stumpcheck.numerics.certified.proofs.domains import Domain
    from stumpcheck.numerics.certified.proofs.margin_proof import prove
    from stumpcheck.numerics.certified.proofs.margins import Margin
    from stumpcheck.numerics.scheduling import connect, local, using

    margin = Margin.from_sympy("-b**2*e_b - 1/2", coordinates="calibration")
    domain = Domain({"b": ("20", "22"), "lam": ("-1", "1"), "theta": ("0.2", "0.8")}, coordinates="calibration")
    document = certificate("slope", margin, domain, prove(margin, domain), strict=False)
    tampered = json.loads(json.dumps(document))
    tampered["leaves"][100]["lower"] = "1000"  # more than the margin is anywhere on that leaf
    tampered["digest"] = digest(tampered)
    bits = document["prec_bits"] + 30

    def verdicts(scheduler):
        with scheduler, using(scheduler):
            return [(r.passed, r.message, r.leaf_index, r.leaves_checked)
                    for r in (recheck(document, prec_bits=bits), recheck(tampered, prec_bits=bits))]

    here = verdicts(local(1))
    assert here[0][0] and not here[1][0] and here[1][2] == 100 and here[1][3] == 100
    assert verdicts(local(2)) == here
    assert verdicts(connect(cluster_address)) == here


def test_a_box_certificate_is_the_same_in_this_process_and_on_dask(cluster_address):
    """`certify`'s search takes the widest box first (children may come before boxes sent ahead): proved with
    801 boxes, stopped at max_boxes, and failed on a θ-integral predicate, byte for byte but the seconds."""
    from stumpcheck.numerics.certified.proofs.box_prover import Box, certify
    from stumpcheck.numerics.scheduling import connect, using

    cases = [("error_abs_le_c_over_b", {"c": "1.02"}, Box(a=("100", "115"), b=("100", "101"), theta=("0.05", "0.95")),
              10_000),
             ("error_abs_le_c_over_b", {"c": "1.02"}, Box(a=("100", "115"), b=("100", "101"), theta=("0.05", "0.95")),
              300),
             ("dLdb_negative", {}, Box(a=("10", "11"), b=("10", "11"), theta=("0", "1")), 40)]

    def texts():
        return [_masked(certify(p, box, params=params, max_boxes=m).to_json()) for p, params, box, m in cases]

    here = texts()
    assert ['"status": "proved"' in here[0], '"status": "undecided"' in here[1], '"status": "failed"' in here[2]] == [
        True, True, True]
    with connect(cluster_address) as scheduler, using(scheduler):
        assert texts() == here
