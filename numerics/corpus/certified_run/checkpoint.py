"""Checkpoints of a certified chain: the sets proved so far, written atomically, read back for a resume.

A checkpoint (``certified_chain.npz``) holds the chain's arrays (centres, frames, coordinate boxes, hulls:
float64, exact) and, as JSON, the start, the step, the stopping rule, the settings and the corpus's sha256.
It is written to a temporary file in the same folder and moved into place with ``os.replace``, so an
interruption leaves the previous checkpoint or the new one. :func:`read_chain` checks the corpus and the
run before :func:`~stumpcheck.numerics.corpus.certified_run.chain.certify_training` resumes from it (which
checks that every set's hull is its recorded box again); the certificate written at the end is re-checked
from the start by ``stumpcheck recheck`` in any case.
"""

from __future__ import annotations

import json
import os
import tempfile
import zipfile
from pathlib import Path

import numpy as np

from stumpcheck.numerics.corpus.certified_run.chain import CertifiedTraining
from stumpcheck.numerics.precision import InputError

__all__ = ["CHAIN_CHECKPOINT", "write_chain", "read_chain"]

CHAIN_CHECKPOINT = "certified_chain.npz"
_ARRAYS = ("centres", "frames", "boxes", "hulls")


def _meta(chain: CertifiedTraining, fingerprint: str) -> dict:
    return {"a0": chain.a0, "b0": chain.b0, "eta": chain.eta, "b_target": chain.b_target,
            "max_steps": chain.max_steps, "t_max": chain.t_max, "settings": chain.settings,
            "fingerprint": fingerprint}


def write_chain(chain: CertifiedTraining, folder, fingerprint: str) -> Path:
    """Write the chain so far into FOLDER/certified_chain.npz, atomically; returns the path."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / CHAIN_CHECKPOINT
    handle, temp = tempfile.mkstemp(prefix=".certified_chain-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(handle, "wb") as stream:
            np.savez(stream, meta=np.str_(json.dumps(_meta(chain, fingerprint))),
                     **{name: getattr(chain, name) for name in _ARRAYS})
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return target


def read_chain(folder, fingerprint: str, *, a0, b0, eta, b_target, max_steps, t_max) -> CertifiedTraining | None:
    """The paused chain in FOLDER (None when there is none); InputError when it is unreadable or of another
    corpus or run."""
    path = Path(folder) / CHAIN_CHECKPOINT
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(str(data["meta"][()]))
            arrays = {name: np.array(data[name], dtype=np.float64) for name in _ARRAYS}
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, KeyError) as exc:
        raise InputError(f"corrupt certified-chain checkpoint {path} ({type(exc).__name__})") from None
    if meta.get("fingerprint") != fingerprint:
        raise InputError(f"the certified-chain checkpoint {path} was made on another corpus")
    run = {"a0": a0, "b0": b0, "eta": eta, "b_target": b_target, "max_steps": max_steps, "t_max": t_max}
    if any(meta.get(k) != v for k, v in run.items()):
        raise InputError(f"the certified-chain checkpoint {path} was made for another run (start, step or rule)")
    steps = arrays["centres"].shape[0]
    shapes = {"centres": (steps, 2), "frames": (steps, 2, 2), "boxes": (steps, 2, 2), "hulls": (steps, 2, 2)}
    if (steps < 1 or any(arrays[k].shape != shape for k, shape in shapes.items())
            or not isinstance(meta.get("settings"), dict)):
        raise InputError(f"corrupt certified-chain checkpoint {path} (inconsistent arrays)")
    return CertifiedTraining(a0=a0, b0=b0, eta=eta, b_target=b_target, max_steps=max_steps, t_max=t_max,
                             proved=False, stopped_because="paused", settings=meta["settings"], **arrays)
